// The task thread as GET /api/runs/:id/thread serves it (runner.LoadThread's
// derivation), rendered two ways:
//
//  - the task-identity header above the run view: the generated summary
//    title and description, else the deterministic identity (the first
//    task's first line, the run and question counts) and the latest human
//    text — every string a text node, none through Markdown — and, on
//    demand, the whole task, Markdown through prose();
//  - the task-history drawer: human, orchestrator and question turns (and a
//    question's or result's context) through prose() → the sanitized
//    Markdown pipeline; the operator's answers, markers, labels, run ids and
//    times as text nodes.

import { h, type VNode } from "./hyperapp.js";
import { prose } from "./prose.js";
import { plainLine } from "./title.js";

export interface ThreadIdentity {
  firstTask: string;
  runs: number;
  continuations: number;
  questions: number;
  answered: number;
  latestHumanText: string;
}

export interface ThreadEntry {
  kind: "human" | "orchestrator" | "question" | "answer" | "marker" | string;
  runId: string;
  at: string;
  text: string;
  context?: string;
  label?: string;
}

export interface Thread {
  runId: string;
  identity: ThreadIdentity;
  lineage: string[];
  entries: ThreadEntry[];
  omitted: number;
  summary?: { title: string; description: string };
  summaryState: "ready" | "pending" | "unavailable" | string;
}

/** oneLine is the first non-empty line of s, cut to n characters. */
export function oneLine(s: string, n = 160): string {
  const line = s.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > n ? line.slice(0, n - 1) + "…" : line;
}

function plural(n: number, one: string, many: string): string {
  return n + " " + (n === 1 ? one : many);
}

function formatAt(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * renderTaskIdentity is the title card above the run view, text only: the
 * thread's generated title and description when there is one, else title
 * (the run's summary or the task's first line as plain text, title.ts; the
 * first task's plain first line when none is given), the latest thing the
 * operator said and the thread's counts.
 */
export function renderTaskIdentity(t: Thread | null, title = "", whole?: WholeTask): VNode | null {
  if (t === null) {
    return null;
  }
  const id = t.identity;
  const facts = [plural(id.runs, "run", "runs")];
  if (id.continuations > 0) {
    facts.push(plural(id.continuations, "continuation", "continuations"));
  }
  if (id.questions > 0) {
    facts.push(plural(id.questions, "question", "questions") + " (" + id.answered + " answered)");
  }
  if (t.summary !== undefined && t.summary.title !== "") {
    return h("section", { class: "task-identity task-identity--summary", "aria-label": "Task" }, [
      h("div", { class: "task-identity-title", title: t.summary.title }, t.summary.title),
      t.summary.description !== "" ? h("p", { class: "task-identity-description" }, t.summary.description) : null,
      h("div", { class: "task-identity-facts muted" }, [facts.join(" · "), wholeToggle(whole)]),
      wholeBody(whole),
    ]);
  }
  const head = title !== "" ? title : plainLine(id.firstTask);
  const latest = plainLine(id.latestHumanText);
  return h("section", { class: "task-identity", "aria-label": "Task" }, [
    h("div", { class: "task-identity-title", title: head }, head),
    latest !== "" && latest !== head && latest !== plainLine(id.firstTask)
      ? h("p", { class: "task-identity-latest" }, [h("span", { class: "section-label" }, "Latest from you: "), latest])
      : null,
    h("div", { class: "task-identity-facts muted" }, [facts.join(" · "), wholeToggle(whole)]),
    wholeBody(whole),
  ]);
}

/** The task card's "whole task" disclosure: the task as the operator wrote it. */
export interface WholeTask {
  /** The task's Markdown. */
  task: string;
  open: boolean;
  onToggle: unknown;
}

function wholeToggle(w: WholeTask | undefined): VNode | null {
  if (w === undefined || w.task.trim() === "") {
    return null;
  }
  return h("button", { type: "button", class: "link task-toggle", "aria-expanded": String(w.open), "aria-controls": "task-whole", onclick: w.onToggle },
    w.open ? "Hide the task" : "Whole task");
}

function wholeBody(w: WholeTask | undefined): VNode | null {
  if (w === undefined || !w.open || w.task.trim() === "") {
    return null;
  }
  return h("div", { class: "task-whole", id: "task-whole" }, [prose(w.task, "md task-whole-text")]);
}

const MARKER_LABEL: Record<string, string> = {
  started: "Started", continued: "Continued", suspended: "Suspended", resumed: "Resumed", paused: "Paused",
  interrupted: "Interrupted", terminated: "Terminated", finished: "Finished", inquiry: "Inquiry",
  plan_modification: "Plan change",
};

function entryView(e: ThreadEntry, i: number): VNode {
  const head = (label: string) => h("div", { class: "msg-head" }, [label, h("span", { class: "turn-meta" }, " · " + e.runId + " · " + formatAt(e.at))]);
  switch (e.kind) {
    case "human":
      return h("div", { class: "turn turn--human", key: String(i) }, [head("You"), prose(e.text, "md turn-text")]);
    case "orchestrator":
      return h("div", { class: "turn turn--orchestrator", key: String(i) }, [
        head("Result" + (e.label ? " · " + e.label : "")),
        e.text !== "" ? prose(e.text, "md turn-text") : null,
        e.context ? prose(e.context, "md turn-context") : null,
      ]);
    case "question":
      return h("div", { class: "turn turn--question", key: String(i) }, [
        head("Question"),
        prose(e.text, "md turn-text"),
        e.context ? h("div", { class: "turn-context-block" }, [h("div", { class: "section-label" }, "Context"), prose(e.context, "md turn-context")]) : null,
      ]);
    case "answer":
      return h("div", { class: "turn turn--answer", key: String(i) }, [head("Your answer"), h("p", { class: "answer-text" }, e.text)]);
    default:
      return h("div", { class: "turn turn--system", key: String(i) }, [
        h("span", { class: "marker-label" }, MARKER_LABEL[e.label ?? ""] ?? (e.label ?? e.kind)),
        " · ",
        h("span", { class: "marker-text" }, e.text),
        h("span", { class: "turn-meta" }, " · " + formatAt(e.at)),
      ]);
  }
}

/** renderThreadBody is the drawer's content. */
export function renderThreadBody(t: Thread): VNode {
  return h("div", { class: "thread" }, [
    t.summary !== undefined && t.summary.title !== ""
      ? h("div", { class: "thread-summary" }, [
        h("p", { class: "thread-title" }, t.summary.title),
        t.summary.description !== "" ? h("p", { class: "muted thread-description" }, t.summary.description) : null,
      ])
      : h("p", { class: "thread-title" }, plainLine(t.identity.firstTask)),
    t.summaryState === "pending" ? h("p", { class: "muted" }, "A summary of this thread is being written.") : null,
    t.lineage.length > 1 ? h("p", { class: "muted" }, "Runs: " + t.lineage.join(" → ")) : null,
    t.omitted > 0 ? h("p", { class: "muted" }, t.omitted + " earlier entries not shown") : null,
    ...t.entries.map(entryView),
  ]);
}
