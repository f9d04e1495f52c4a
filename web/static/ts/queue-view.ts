// The Queue screen: the tasks waiting to run, the one running, the parked
// ones that need an answer, and the settled ones (GET /api/queue).
//
// Text safety: a row's status, id, effort, run id and the task's first line
// are text nodes; the expanded row's full task, result summary, error and
// parked question are agent prose (or operator Markdown) and go through
// prose() → the sanitized Markdown pipeline. The operator's own answers are
// text. A parked question opens the shared question modal, which renders
// the question and its context through the same pipeline.

import { h, type VNode } from "./hyperapp.js";
import { prose } from "./prose.js";
import type { PendingQuestion } from "./question-modal.js";

export interface QueueItem {
  id: string;
  task: string;
  effort?: string;
  logLevel?: string;
  continuesFrom?: string;
  status: "waiting" | "active" | "needs_input" | "done" | "error" | "cancelled" | string;
  runId?: string;
  runs?: string[];
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  endedAt?: string;
  question?: { id?: string; text: string; context?: string; options?: { label: string; description?: string }[] };
  answer?: string;
  answers?: { question: string; answer: string }[];
  summary?: string;
  error?: string;
}

export interface QueueEditDraft {
  id: string;
  task: string;
  effort: string;
}

export interface QueueViewProps {
  items: QueueItem[];
  efforts: string[];
  task: string;
  effort: string;
  busy: boolean;
  notice: string;
  edit: QueueEditDraft | null;
  expanded: string;
  onTask: unknown;
  onEffort: unknown;
  onAdd: unknown;
  onMove: (id: string, delta: number) => unknown;
  onTop: (id: string) => unknown;
  onCancel: (id: string) => unknown;
  onRequeue: (id: string) => unknown;
  onEdit: (item: QueueItem) => unknown;
  onEditTask: unknown;
  onEditEffort: unknown;
  onEditSave: unknown;
  onEditClose: unknown;
  onAnswer: (id: string) => unknown;
  onToggle: (id: string) => unknown;
  onWatch: (runId: string) => unknown;
}

/** firstLine is the first non-empty line of s, cut to 120 characters. */
function firstLine(s: string): string {
  const line = s.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > 120 ? line.slice(0, 119) + "…" : line;
}

/** parkedQuestion adapts a needs_input item to the question modal's shape. */
export function parkedQuestion(it: QueueItem): PendingQuestion {
  const q = it.question;
  return {
    id: it.id,
    runId: it.runId ?? "",
    question: q !== undefined && q.text !== "" ? q.text : (it.summary ?? ""),
    context: q?.context,
    options: q?.options ?? [],
    askedAt: it.endedAt ?? it.updatedAt,
  };
}

function effortSelect(efforts: string[], value: string, onchange: unknown, label: string): VNode {
  return h("label", {}, [label, h("select", { onchange }, [
    h("option", { value: "", selected: value === "" }, "project default"),
    ...efforts.map((e) => h("option", { value: e, selected: value === e }, e)),
  ])]);
}

function editForm(p: QueueViewProps, d: QueueEditDraft): VNode {
  return h("form", { class: "queue-edit", onsubmit: p.onEditSave }, [
    h("label", { for: "queue-edit-task" }, "Task"),
    h("textarea", { id: "queue-edit-task", rows: 5, value: d.task, oninput: p.onEditTask }),
    h("div", { class: "compose-row" }, [
      effortSelect(p.efforts, d.effort, p.onEditEffort, "Effort "),
      h("button", { type: "submit", class: "primary", disabled: d.task.trim() === "" }, "Save"),
      h("button", { type: "button", onclick: p.onEditClose }, "Close"),
    ]),
  ]);
}

function itemActions(p: QueueViewProps, it: QueueItem, waitingIndex: number, waitingCount: number): VNode {
  const btn = (label: string, onclick: unknown, cls = "", disabled = false) =>
    h("button", { type: "button", class: cls, onclick, disabled, "data-action": label.toLowerCase() }, label);
  const out: (VNode | null)[] = [];
  switch (it.status) {
    case "waiting":
      out.push(btn("Top", p.onTop(it.id), "", waitingIndex === 0));
      out.push(btn("Up", p.onMove(it.id, -1), "", waitingIndex === 0));
      out.push(btn("Down", p.onMove(it.id, 1), "", waitingIndex === waitingCount - 1));
      out.push(btn("Edit", p.onEdit(it)));
      out.push(btn("Cancel", p.onCancel(it.id), "danger"));
      break;
    case "needs_input":
      out.push(btn("Answer", p.onAnswer(it.id), "primary"));
      out.push(btn("Requeue", p.onRequeue(it.id)));
      out.push(btn("Cancel", p.onCancel(it.id), "danger"));
      break;
    case "done":
    case "error":
    case "cancelled":
      out.push(btn("Requeue", p.onRequeue(it.id)));
      break;
  }
  if (it.runId) {
    out.push(btn("Watch", p.onWatch(it.runId)));
  }
  return h("div", { class: "actions" }, out);
}

function itemBody(it: QueueItem): VNode {
  return h("div", { class: "run-row-body" }, [
    h("div", { class: "muted" }, [
      "created " + it.createdAt,
      it.continuesFrom ? " · continues " + it.continuesFrom : "",
      it.runs && it.runs.length > 0 ? " · runs " + it.runs.join(", ") : "",
      it.logLevel ? " · log " + it.logLevel : "",
    ]),
    h("div", { class: "section-label" }, "Task"),
    prose(it.task, "md queue-task-full"),
    it.question !== undefined && it.question.text !== ""
      ? h("div", {}, [h("div", { class: "section-label" }, "Question"), prose(it.question.text, "md"),
        it.question.context ? prose(it.question.context, "md") : null])
      : null,
    ...(it.answers ?? []).map((a, i) => h("p", { class: "answer", key: "a" + i }, ["Your answer: ", h("span", { class: "answer-text" }, a.answer)])),
    it.summary ? h("div", {}, [h("div", { class: "section-label" }, "Result"), prose(it.summary, "md")]) : null,
    it.error ? h("div", {}, [h("div", { class: "section-label" }, "Error"), prose(it.error, "md")]) : null,
  ]);
}

/** renderQueue is the Queue screen's body (without the answer modal). */
export function renderQueue(p: QueueViewProps): VNode {
  const waiting = p.items.filter((it) => it.status === "waiting").map((it) => it.id);
  const parked = p.items.filter((it) => it.status === "needs_input").length;
  return h("div", { class: "queue-body" }, [
    h("form", { class: { "compose-form": true, "queue-add": true, "is-busy": p.busy }, onsubmit: p.onAdd }, [
      h("label", { for: "queue-task-input" }, "Add a task to the queue"),
      h("textarea", { id: "queue-task-input", rows: 4, value: p.task, oninput: p.onTask, placeholder: "What should the guild do next?" }),
      h("div", { class: "compose-row" }, [
        effortSelect(p.efforts, p.effort, p.onEffort, "Effort "),
        h("button", { type: "submit", class: "primary", disabled: p.busy || p.task.trim() === "" }, "Add to queue"),
      ]),
      p.notice !== "" ? h("p", { class: "notice" }, p.notice) : null,
    ]),
    parked > 0 ? h("p", { class: "notice queue-parked" }, parked === 1 ? "1 task needs your answer." : parked + " tasks need your answer.") : null,
    p.items.length === 0 ? h("p", { class: "muted" }, "The queue is empty.") : null,
    h("ul", { class: "run-list queue-list" }, p.items.map((it) => {
      const open = p.expanded === it.id;
      const editing = p.edit !== null && p.edit.id === it.id;
      return h("li", { key: it.id, class: "run-row queue-item queue-item--" + it.status, "data-queue-id": it.id }, [
        h("button", { type: "button", class: "run-row-head", "aria-expanded": String(open), onclick: p.onToggle(it.id) }, [
          h("span", { class: "status status--" + it.status }, it.status),
          h("span", { class: "run-primary queue-task" }, firstLine(it.task)),
          h("span", { class: "muted queue-effort" }, "effort " + (it.effort ? it.effort : "default")),
          h("span", { class: "muted queue-id" }, it.id),
          it.runId ? h("span", { class: "muted queue-run" }, it.runId) : null,
        ]),
        itemActions(p, it, waiting.indexOf(it.id), waiting.length),
        editing && p.edit !== null ? editForm(p, p.edit) : null,
        open ? itemBody(it) : null,
      ]);
    })),
  ]);
}
