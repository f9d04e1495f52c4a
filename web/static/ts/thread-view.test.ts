// webtest: no-csp (hostile thread text must meet a page where a surviving handler would run)
//
// Text safety of the task-identity header, the task-history drawer and the
// Queue screen: machine fields and the generated summary stay text, agent
// prose goes through the sanitized Markdown pipeline. Run by
// TestBrowserSuites (web/webtest).

import { test, assert, assertEqual, mount } from "./testing.js";
import { assertSafe, installSentinel } from "./testing-invariants.js";
import { renderTaskIdentity, renderThreadBody, type Thread } from "./thread-view.js";
import { plainLine, runTitle } from "./title.js";
import { parkedQuestion, renderQueue, type QueueItem } from "./queue-view.js";

const executed = installSentinel();
const HOSTILE = `<img src=x onerror="alert('x')"><script>alert('s')</script>**bold**`;

function thread(summary?: { title: string; description: string }): Thread {
  return {
    runId: "run-20250101-000000",
    identity: { firstTask: HOSTILE + "\nsecond line", runs: 2, continuations: 1, questions: 1, answered: 1, latestHumanText: "Use <b>PEG</b>" },
    lineage: ["run-20241231-000000", "run-20250101-000000"],
    entries: [
      { kind: "marker", runId: "run-20250101-000000", at: "2025-01-01T00:00:00Z", text: "Operator inquiry: " + HOSTILE, label: "inquiry" },
      { kind: "human", runId: "run-20250101-000000", at: "2025-01-01T00:00:00Z", text: HOSTILE, label: "task" },
      { kind: "question", runId: "run-20250101-000000", at: "2025-01-01T00:00:01Z", text: "Which **one**?", context: "[x](javascript:alert(1)) " + HOSTILE },
      { kind: "answer", runId: "run-20250101-000000", at: "2025-01-01T00:00:02Z", text: "**as typed** <i>x</i>", label: "web" },
      { kind: "orchestrator", runId: "run-20250101-000000", at: "2025-01-01T00:00:03Z", text: "## Done\n\n" + HOSTILE, context: "err", label: "success" },
    ],
    omitted: 0,
    summary,
    summaryState: summary !== undefined ? "ready" : "unavailable",
  };
}

test("the task-identity header is text only", async () => {
  const root = await mount([renderTaskIdentity(thread())]);
  assertEqual(root.querySelectorAll("img, script, strong, b").length, 0, "markup elements in the header");
  // The title is plain text: markup stays literal, Markdown punctuation goes.
  assertEqual(root.querySelector(".task-identity-title")?.textContent, HOSTILE.replaceAll("**", ""));
  assert((root.querySelector(".task-identity-latest")?.textContent ?? "").includes("Use <b>PEG</b>"), "latest human text");
  const withSummary = await mount([renderTaskIdentity(thread({ title: HOSTILE, description: "<em>d</em>" }))]);
  assertEqual(withSummary.querySelectorAll("img, script, em").length, 0, "markup in the summary header");
  assertEqual(withSummary.querySelector(".task-identity-title")?.textContent, HOSTILE);
  assertEqual(withSummary.querySelector(".task-identity-description")?.textContent, "<em>d</em>");
  assertEqual(executed().length, 0, "script ran");
});

test("the title card shows a clean first line, never Markdown punctuation or a cut word", async () => {
  const t = thread();
  t.identity.firstTask = "## Fix the `slugify` function so that **`sh test.sh`** passes, see [the README](README.md).\n\nMore.";
  const root = await mount([renderTaskIdentity(t)]);
  assertEqual(root.querySelector(".task-identity-title")?.textContent, "Fix the slugify function so that sh test.sh passes, see the README.");
  const given = await mount([renderTaskIdentity(t, "Slug tests fixed")]);
  assertEqual(given.querySelector(".task-identity-title")?.textContent, "Slug tests fixed");
});

test("runTitle prefers a summary unless it is only the task cut short", () => {
  const task = "The tests in this project fail. Fix the `slugify` function so that `sh test.sh` passes, without changing the tests.";
  assertEqual(runTitle("The tests in this project fail. Fix the slugify function so that", task),
    "The tests in this project fail. Fix the slugify function so that sh test.sh passes, without changing the tests.");
  assertEqual(runTitle("The tests in this project fail. Fix the", task),
    "The tests in this project fail. Fix the slugify function so that sh test.sh passes, without changing the tests.");
  assertEqual(runTitle("Slug tests fixed", task), "Slug tests fixed");
  assertEqual(runTitle(null, "*Refactor* the `db_pool` module\nsecond line"), "Refactor the db_pool module");
  assertEqual(runTitle("", "snake_case_name stays"), "snake_case_name stays");
  assertEqual(plainLine("1. **Add** a ~~test~~ check \\*now\\*"), "Add a test check *now*");
  assertEqual(plainLine("```go\ncode\n```\nAfter the fence"), "code");
});

test("the drawer renders prose through the pipeline and markers as text", async () => {
  const root = await mount([renderThreadBody(thread())]);
  assertSafe(root.querySelector(".turn--human .md") as Element, "human turn");
  assertSafe(root.querySelector(".turn--question .turn-context") as Element, "question context");
  assertSafe(root.querySelector(".turn--orchestrator .md") as Element, "orchestrator turn");
  assertEqual(root.querySelector(".turn--human strong")?.textContent, "bold");
  assertEqual(root.querySelector(".turn--orchestrator h2")?.textContent, "Done");
  assertEqual(root.querySelector(".turn--answer .answer-text")?.textContent, "**as typed** <i>x</i>");
  assertEqual(root.querySelectorAll(".turn--answer i, .turn--answer strong, .turn--system img, .turn--system strong").length, 0, "markup in text turns");
  assertEqual(root.querySelector(".turn--system .marker-text")?.textContent, "Operator inquiry: " + HOSTILE);
  assertEqual(root.querySelectorAll("img, script").length, 0, "img or script");
  assertEqual(executed().length, 0, "script ran");
});

test("queue rows show the task's first line as text and its body through the pipeline", async () => {
  const item: QueueItem = {
    id: "q-1-1", task: HOSTILE + "\nmore", status: "needs_input", effort: "quick", runId: "run-20250101-000000",
    createdAt: "2025-01-01T00:00:00Z", updatedAt: "2025-01-01T00:00:00Z",
    question: { text: "Pick **one**", context: HOSTILE, options: [{ label: "<b>A</b>" }] }, summary: HOSTILE,
  };
  const none = () => null;
  const root = await mount([renderQueue({
    items: [item], efforts: ["quick"], task: "", effort: "", busy: false, notice: "", edit: null, expanded: item.id,
    onTask: none, onEffort: none, onAdd: none, onMove: none, onTop: none, onCancel: none, onRequeue: none, onEdit: none,
    onEditTask: none, onEditEffort: none, onEditSave: none, onEditClose: none, onAnswer: none, onToggle: none, onWatch: none,
  })]);
  assertEqual(root.querySelector(".queue-task")?.textContent, HOSTILE);
  assertEqual(root.querySelectorAll(".run-row-head img, .run-row-head strong").length, 0, "markup in the row head");
  for (const md of Array.from(root.querySelectorAll(".md"))) {
    assertSafe(md, "queue prose");
  }
  assert(root.querySelector(".queue-task-full strong") !== null, "the full task is rendered Markdown");
  assertEqual(root.querySelectorAll("img, script").length, 0, "img or script");
  const q = parkedQuestion(item);
  assertEqual([q.id, q.question, q.context ?? "", q.options[0].label], [item.id, "Pick **one**", HOSTILE, "<b>A</b>"]);
  assertEqual(executed().length, 0, "script ran");
});
