// webtest: no-csp (hostile details must meet a page where a surviving handler would run)
//
// In-memory tests of the inspector's pure derivations (tooltip.ts), the
// label registry they use (labels.ts, against render/labels.go's values),
// and the text-safety of the card and the run stage's SVG. Run by
// TestBrowserSuites (web/webtest).

import { test, assert, assertEqual, mount } from "./testing.js";
import { assertSafe, installSentinel } from "./testing-invariants.js";
import {
  deriveOperationTooltip, deriveParticipantTooltip, deriveRoleTooltip, formatTooltipContent, renderTooltip,
} from "./tooltip.js";
import { LabelResolver, deriveCostStrip, deriveNowCaption, fnv1a32, type LabelSet } from "./labels.js";
import { emptyModel, merge, type ModelState, type Operation, type Participant } from "./model.js";
import { newFlowIndex, renderFlow, renderSequenceBody, renderSequenceHeader, sequenceColumns } from "./run-stage/index.js";

const executed = installSentinel();

const metrics = (tokens = 0, elapsedSeconds = 0) => ({ tokens, cachedPromptTokens: 0, elapsedSeconds });

function part(id: string, role: string, kind: Participant["kind"], invocations = 1, m = metrics()): Participant {
  return { id, role, kind, roleId: kind === "role" ? id : undefined, invocations, metrics: m };
}

function op(n: number, fields: Partial<Operation>): Operation {
  return {
    id: "op-" + n, kind: "call", stack: "main", source: "human", destination: "orchestrator-0-1", depth: 1,
    startedAt: "2025-03-14T09:30:00.000Z", settledAt: null, lifecycle: "settled", metrics: metrics(), ...fields,
  };
}

/** A small live run: the human hands the task to the orchestrator, which calls the planner, which reads a file. */
function model(): ModelState {
  return {
    ...emptyModel(),
    version: 9, runId: "run-20250314-093000", status: "running",
    participants: [
      part("human", "human", "human"),
      part("orchestrator-0-1", "orchestrator", "role", 1, metrics(1280, 2.1)),
      part("planner-1-2", "planner", "role", 1, metrics(1050, 1.8)),
      part("planner-1-3", "planner", "role", 1, metrics(500, 1)),
      part("tool:read_file", "read_file", "tool", 2, metrics(0, 0.006)),
    ],
    operations: [
      op(1, { open: true, role: "orchestrator", metrics: metrics(1280, 2.1), hasDetails: true }),
      op(2, { source: "orchestrator-0-1", destination: "planner-1-2", depth: 2, role: "planner", closedBy: "op-3" }),
      op(3, { kind: "return", source: "planner-1-2", destination: "orchestrator-0-1", depth: 2, outcome: "success", role: "planner" }),
      op(4, { source: "orchestrator-0-1", destination: "planner-1-3", depth: 2, role: "planner", open: true }),
      op(5, { source: "planner-1-3", destination: "tool:read_file", depth: 3, tool: "read_file", lifecycle: "in_flight", open: true, hasDetails: true }),
    ],
    stacks: [{ id: "main", root: "human", paused: false, pushedAt: "2025-03-14T09:30:00.000Z", resolvedAt: null }],
    activeStack: "main", activeOperation: "op-5",
    totals: { tokens: 16700, cachedPromptTokens: 9600, modelCalls: 3, toolCalls: 2, latestElapsedSeconds: 1.2 },
  };
}

const labels: LabelSet = {
  roles: {
    orchestrator: { label: { friendly: ["Orchestrator"], whimsical: ["Conductor", "Guildmaster"] }, description: { friendly: ["Runs the whole task."] } },
    planner: { label: { friendly: ["Planner"] }, workingLabel: { friendly: ["{participant} is planning"] } },
  },
  tools: { read_file: { humanLabel: { friendly: ["Read file"] }, humanWorkingLabel: { friendly: ["{participant} is reading"] } } },
  visualization: {},
};
const friendly = new LabelResolver(labels, "friendly");

test("fnv1a32 matches render.Seed", () => {
  assertEqual([fnv1a32("op-1"), fnv1a32("op-2"), fnv1a32("op-17"), fnv1a32("é")], [2074927964, 2125260821, 472514929, 513665217]);
});

test("labels walk tiers, fall back to title case and keep unknown placeholders", () => {
  const r = new LabelResolver(labels, "detailed");
  assertEqual(r.participantLabel(part("planner-1-2", "planner", "role")), "Planner", "friendly is the fallback of detailed");
  assertEqual(friendly.participantLabel(part("coder-1-4", "code_reviewer", "role")), "Code Reviewer");
  assertEqual(friendly.pseudoLabel("tools"), "Tools");
  const whimsical = new LabelResolver({ visualization: { genericOperationTemplates: { call: { whimsical: ["{source} {nonsense} {destination}"] } } } }, "whimsical");
  assertEqual(whimsical.operationLabel(op(2, { source: "a", destination: "b" }), part("a", "x", "role"), part("b", "y", "role")), "X {nonsense} Y");
});

test("whimsical variants rotate by the operation id, stably", () => {
  const r = new LabelResolver(labels, "whimsical");
  const p = part("orchestrator-0-1", "orchestrator", "role");
  const expected = ["Conductor", "Guildmaster"];
  assertEqual(r.participantLabel(p), "Conductor", "identity uses the first variant");
  const w = new LabelResolver({ roles: { orchestrator: { workingLabel: { whimsical: ["A", "B", "C"] } } }, visualization: {} }, "whimsical");
  assertEqual(w.workingLabel(p, "op-1"), ["A", "B", "C"][2074927964 % 3]);
  assertEqual(w.workingLabel(p, "op-17"), ["A", "B", "C"][472514929 % 3]);
  assert(expected.length === 2, "fixture");
});

test("now caption and cost strip are machine text", () => {
  assertEqual(deriveNowCaption(model(), friendly), "Read file is reading…");
  assertEqual(deriveCostStrip(model().totals), ["16.7k tokens", "9.6k cached", "last 1.2s"]);
  assertEqual(deriveNowCaption({ ...model(), status: "success" }, friendly), "");
});

test("formatTooltipContent probes JSON strings and pretty-prints them", () => {
  const s = formatTooltipContent("Arguments", '{"path":"README.md","lines":[1,2]}', true);
  assertEqual(s.kind, "json");
  assert(s.content.includes('\n  "path": "README.md"'), "indented with real newlines: " + s.content);
  assertEqual(formatTooltipContent("Summary", "**bold** text", true).kind, "markdown");
  assertEqual(formatTooltipContent("Broken", "{not json", true).kind, "markdown");
  assertEqual(formatTooltipContent("Status", "running", false).kind, "text");
  assertEqual(formatTooltipContent("Count", 3, false), { label: "Count", kind: "text", content: "3" });
  assertEqual(formatTooltipContent("Obj", { a: 1 }, false).content, '{\n  "a": 1\n}');
});

test("deriveOperationTooltip: label, status and times as text, details as markdown", () => {
  const m = model();
  const t = deriveOperationTooltip(m, friendly, "op-2", "Plan the **change**.");
  assert(t !== null, "known op");
  assertEqual(t.title, "Orchestrator hands work to Planner");
  assertEqual(t.sections.find((s) => s.label === "Status"), { label: "Status", kind: "text", content: "settled" });
  assertEqual(t.sections.find((s) => s.label === "Details"), { label: "Details", kind: "markdown", content: "Plan the **change**." });
  const loading = deriveOperationTooltip(m, friendly, "op-5");
  assert(loading !== null, "op-5");
  assertEqual(loading.title, "Planner uses Read file");
  assertEqual(loading.sections.find((s) => s.label === "Details")?.content, "Loading…");
  assertEqual(loading.sections.find((s) => s.label === "Status")?.content, "in flight");
  const ret = deriveOperationTooltip(m, friendly, "op-3");
  assertEqual(ret?.sections[0].content, "settled · ✓ success");
  assertEqual(deriveOperationTooltip(m, friendly, "op-99"), null);
});

test("deriveParticipantTooltip and deriveRoleTooltip count and describe", () => {
  const m = model();
  const p = deriveParticipantTooltip(m, friendly, "orchestrator-0-1");
  assert(p !== null, "known participant");
  assertEqual(p.title, "Orchestrator");
  assertEqual(p.sections.find((s) => s.label === "About")?.content, "Runs the whole task.");
  assertEqual(p.sections.find((s) => s.label === "Total")?.content, "1.3k tokens · 2.1s");
  const r = deriveRoleTooltip(m, friendly, "role", "planner");
  assert(r !== null, "known role");
  assertEqual(r.sections.find((s) => s.label === "Instances")?.content, "2");
  assertEqual(r.sections.find((s) => s.label === "Invocations")?.content, "2");
  assertEqual(deriveRoleTooltip(m, friendly, "tool", "write_file"), null);
  assertEqual(deriveParticipantTooltip(m, friendly, "ghost"), null);
});

test("the card renders JSON as <pre> text and prose through the sanitizer", async () => {
  const hostile = "Done <img src=x onerror=\"alert(1)\"> [x](javascript:alert(2)) <script>alert(3)</script>";
  const card = renderTooltip({
    content: { title: "<b>title</b>", sections: [
      formatTooltipContent("Arguments", '{"path":"<img src=x onerror=alert(4)>"}', true),
      formatTooltipContent("Summary", hostile, true),
      { label: "Status", kind: "text", content: "<i>settled</i>" },
    ] },
    x: 10, y: 10,
  }, { onEnter: null, onLeave: null, onCopy: () => null });
  const root = await mount([card]);
  const el = root.querySelector(".tooltip-card");
  assert(el !== null, "card rendered");
  assertEqual(el.querySelector(".tooltip-title")?.textContent, "<b>title</b>");
  const pre = el.querySelector("pre.tooltip-json");
  assert(pre !== null && pre.textContent === '{\n  "path": "<img src=x onerror=alert(4)>"\n}', "JSON is one text node: " + pre?.textContent);
  assertEqual(el.querySelectorAll("button.copy-md").length, 1, "only prose has a Copy Markdown button");
  assertEqual(el.querySelector(".tooltip-section--text .tooltip-text")?.textContent, "<i>settled</i>");
  assertEqual(el.querySelectorAll("img, script, b, i").length, 0, "no markup from strings");
  const md = el.querySelector(".md");
  assert(md !== null, "markdown block");
  assertSafe(md, "summary");
  assertEqual(getComputedStyle(el).position === "static" || getComputedStyle(el).position === "fixed", true);
  assertEqual(executed(), [], "nothing ran");
  root.remove();
});

test("the SVG stages carry model strings only as text", async () => {
  const m = model();
  m.participants.push(part("tool:<img src=x onerror=alert(5)>", "<img src=x onerror=alert(5)>", "tool"));
  m.operations.push(op(6, { source: "planner-1-3", destination: "tool:<img src=x onerror=alert(5)>", depth: 3, tool: "x", lifecycle: "in_flight", open: true }));
  m.activeOperation = "op-6";
  const ix = newFlowIndex();
  const flow = renderFlow(m, friendly, ix, { camera: { x: 0, y: 0, k: 1 }, width: 1400, height: 800, selected: "" }).svg;
  const cols = sequenceColumns(m, friendly);
  const seq = renderSequenceBody(m, friendly, ix, cols, { scrollTop: 0, height: 800, scrollLeft: 0, width: 1200, columnWidth: 150, selected: -1 });
  const root = await mount([flow, renderSequenceHeader(cols, 150), seq]);
  assertEqual(root.querySelectorAll("img, script, foreignObject").length, 0, "no markup");
  const labelsSeen = Array.from(root.querySelectorAll("text")).map((t) => t.textContent ?? "");
  assert(labelsSeen.some((s) => s.startsWith("<img ")), "the hostile name shows as text: " + labelsSeen.join(" | "));
  assert(root.querySelector(".flow-graph .graph-node--active") !== null, "active node class");
  assert(root.querySelector(".flow-graph .graph-edge--active") !== null, "active edge class");
  assert(root.querySelector(".sequence-diagram .seq-message--flowing") !== null, "flowing message class");
  assert(root.querySelector(".sequence-diagram .seq-message--return") !== null, "return message class");
  assertEqual(root.querySelector('.sequence-diagram [data-operation="op-2"] > title')?.textContent, "2  Orchestrator hands work to Planner");
  assertEqual(root.querySelector('.sequence-diagram [data-operation="op-2"] .seq-label')?.textContent, "2  Orchestrator hands work to Planner");
  for (const hd of ["The human", "Tools"]) {
    assert(labelsSeen.includes(hd), "column " + hd);
  }
  assertEqual(executed(), [], "nothing ran");
  root.remove();
});

test("merge upserts by id like render.Merge", () => {
  const m = model();
  const changed = { ...m.operations[4], lifecycle: "settled" as const, settledAt: "2025-03-14T09:31:00.000Z" };
  const added = op(6, { kind: "return", source: "tool:read_file", destination: "planner-1-3", depth: 3, outcome: "success" });
  const out = merge(m, { kind: "delta", from: 9, version: 10, operations: [changed, added], runId: m.runId, status: "running", activeStack: "main", activeOperation: "op-6", totals: m.totals });
  assertEqual(out.operations.length, 6);
  assertEqual(out.operations[4].lifecycle, "settled");
  assertEqual(out.version, 10);
  assertEqual(out.activeOperation, "op-6");
  assertEqual(m.operations[4].lifecycle, "in_flight", "the old state is not mutated");
});
