// In-memory tests of the one outcome rule in the browser (outcome.ts) as
// the flow graph, the sequence view, the inspector and the result modal
// show it: a tool that ran a failing command reads failed with its
// detail, a role stopped by a plan change reads interrupted, a tool
// node's inspector lists its own caller's calls, and a run whose model did
// nothing says so. Run by TestBrowserSuites (web/webtest).

import { test, assert, assertEqual, mount } from "./testing.js";
import { NO_ACTION_TEXT, outcomeVerdict, verdictText } from "./outcome.js";
import { deriveOperationTooltip, deriveParticipantTooltip } from "./tooltip.js";
import { LabelResolver } from "./labels.js";
import { emptyModel, type ModelState, type Operation, type Participant } from "./model.js";
import { messageText, newFlowIndex, nodeState, renderFlow, syncFlowIndex } from "./run-stage/index.js";
import { renderResultModal } from "./result-modal.js";

const metrics = (elapsedSeconds = 0) => ({ tokens: 0, cachedPromptTokens: 0, elapsedSeconds });

function part(id: string, role: string, kind: Participant["kind"]): Participant {
  return { id, role, kind, roleId: kind === "role" ? id : undefined, invocations: 1, metrics: metrics() };
}

function op(n: number, fields: Partial<Operation>): Operation {
  return {
    id: "op-" + n, kind: "call", stack: "main", source: "human", destination: "orchestrator-0-1", depth: 1,
    startedAt: "2026-12-01T10:00:00.000Z", settledAt: "2026-12-01T10:00:01.000Z", lifecycle: "settled", metrics: metrics(), ...fields,
  };
}

/**
 * The coder runs the tests twice (exit 1, "2 failed", then 6 passed); the
 * reviewer runs them once more; then a plan change stops the coder.
 */
function model(): ModelState {
  return {
    ...emptyModel(),
    version: 12, runId: "run-20261201-100000", status: "success",
    participants: [
      part("human", "human", "human"), part("orchestrator-0-1", "orchestrator", "role"), part("coder-1-2", "coder", "role"),
      part("acceptance_reviewer-1-3", "acceptance_reviewer", "role"), part("tool:test", "test", "tool"),
    ],
    operations: [
      op(1, { destination: "orchestrator-0-1", role: "orchestrator", closedBy: "op-12" }),
      op(2, { source: "orchestrator-0-1", destination: "coder-1-2", depth: 2, role: "coder", closedBy: "op-7" }),
      op(3, { source: "coder-1-2", destination: "tool:test", depth: 3, tool: "test", callId: "c1", closedBy: "op-4", metrics: metrics(0.4) }),
      op(4, { kind: "return", source: "tool:test", destination: "coder-1-2", depth: 3, tool: "test", callId: "c1", outcome: "failed", outcomeDetail: "2 failed" }),
      op(5, { source: "coder-1-2", destination: "tool:test", depth: 3, tool: "test", callId: "c2", closedBy: "op-6" }),
      op(6, { kind: "return", source: "tool:test", destination: "coder-1-2", depth: 3, tool: "test", callId: "c2", outcome: "success", outcomeDetail: "6 passed" }),
      op(7, { kind: "return", source: "coder-1-2", destination: "orchestrator-0-1", depth: 2, role: "coder", outcome: "interrupted", errorKind: "interrupted" }),
      op(8, { source: "orchestrator-0-1", destination: "acceptance_reviewer-1-3", depth: 2, role: "acceptance_reviewer", closedBy: "op-11" }),
      op(9, { source: "acceptance_reviewer-1-3", destination: "tool:test", depth: 3, tool: "test", callId: "c3", closedBy: "op-10" }),
      op(10, { kind: "return", source: "tool:test", destination: "acceptance_reviewer-1-3", depth: 3, tool: "test", callId: "c3", outcome: "success", outcomeDetail: "6 passed" }),
      op(11, { kind: "return", source: "acceptance_reviewer-1-3", destination: "orchestrator-0-1", depth: 2, role: "acceptance_reviewer", outcome: "success" }),
      op(12, { kind: "return", source: "orchestrator-0-1", destination: "human", depth: 1, role: "orchestrator", outcome: "success" }),
    ],
    stacks: [{ id: "main", root: "human", paused: false, pushedAt: "2026-12-01T10:00:00.000Z", resolvedAt: null }],
    totals: { tokens: 0, cachedPromptTokens: 0, modelCalls: 4, toolCalls: 3, latestElapsedSeconds: 0 },
  };
}

const r = new LabelResolver({
  roles: { coder: { label: { friendly: ["Coder"] } }, acceptance_reviewer: { label: { friendly: ["Acceptance reviewer"] } } },
  tools: { test: { humanLabel: { friendly: ["Tests"] } } },
} as never, "friendly");

test("the rule: glyphs and words", () => {
  assertEqual(verdictText(outcomeVerdict("failed", "", "exit 1")), "✗ failed · exit 1");
  assertEqual(verdictText(outcomeVerdict("success", "", "6 passed")), "✓ success · 6 passed");
  assertEqual(verdictText(outcomeVerdict("error", "interrupted")), "■ interrupted");
  assertEqual(verdictText(outcomeVerdict("interrupted")), "■ interrupted");
  assertEqual(verdictText(outcomeVerdict("error", "not_found")), "✗ error · not_found");
});

test("the sequence view reads a failed command as failed and a stopped coder as interrupted", () => {
  const m = model();
  const ix = newFlowIndex();
  syncFlowIndex(ix, m);
  const failedRow = messageText(m, r, ix, m.operations[3], 3);
  assert(failedRow.endsWith(" ✗ failed · 2 failed"), failedRow);
  assert(!failedRow.includes("✓"), failedRow);
  const passRow = messageText(m, r, ix, m.operations[5], 5);
  assert(passRow.endsWith(" ✓ 6 passed"), passRow);
  const stopped = messageText(m, r, ix, m.operations[6], 6);
  assert(stopped.endsWith(" ■ interrupted") && !stopped.includes("✗"), stopped);
});

test("the flow graph: the interrupted coder is stopped, its tests node counts the failure", async () => {
  const m = model();
  const ix = newFlowIndex();
  const st = nodeState(m, m.participants[2], m.operations[1], false);
  assertEqual(st.glyph + " " + st.word, "■ interrupted");
  const drawing = renderFlow(m, r, ix, { camera: { x: 0, y: 0, k: 1 }, width: 2000, height: 1000, selected: "" });
  const host = await mount([drawing.svg]);
  const coderTests = host.querySelector('[data-node="main\u0000coder-1-2\u0000tool:test"], [data-caller="coder-1-2"][data-participant="tool:test"]');
  assert(coderTests !== null, "no Tests node under the coder");
  assert((coderTests.textContent ?? "").includes("×2 ✗1"), coderTests.textContent ?? "");
  const reviewerTests = host.querySelector('[data-caller="acceptance_reviewer-1-3"][data-participant="tool:test"]');
  assert(reviewerTests !== null && !(reviewerTests.textContent ?? "").includes("✗"), reviewerTests?.textContent ?? "missing");
  host.remove();
});

test("the inspector on the coder's tests node lists the coder's calls, not the reviewer's", () => {
  const m = model();
  const card = deriveParticipantTooltip(m, r, "tool:test", { caller: "coder-1-2", callOps: [2, 4], latestResult: "**Outcome:** ✓ success · 6 passed" });
  assert(card !== null, "no card");
  const calls = card.sections.find((s) => s.label.startsWith("Calls by Coder"));
  assert(calls !== undefined, JSON.stringify(card.sections));
  assertEqual(calls.label, "Calls by Coder: 2 (1 failed)");
  assert(calls.content.startsWith("#2 ✓ success · 6 passed"), calls.content);
  assert(calls.content.includes("#1 ✗ failed · 2 failed"), calls.content);
  assert(!calls.content.includes("#3"), calls.content);
  const out = card.sections.find((s) => s.label === "Latest call's output");
  assert(out !== undefined && out.kind === "markdown", "no output section");
  const opCard = deriveOperationTooltip(m, r, "op-4");
  const status = opCard?.sections.find((s) => s.label === "Status")?.content ?? "";
  assertEqual(status, "settled · ✗ failed · 2 failed");
});

test("the result modal says the model answered without doing anything", async () => {
  const host = await mount([renderResultModal({
    runLabel: "run-20261201-100000", status: "success", noAction: true, copied: false, onClose: null, onCopyRaw: () => null,
    result: { status: "success", summary: "Sure, I added the file." },
  })]);
  const note = host.querySelector(".no-action");
  assert(note !== null && note.textContent === NO_ACTION_TEXT, note?.textContent ?? "missing");
  host.remove();
});
