// The History, Compose and Queue screens. A run's task, result and error
// are agent prose and go through prose() (the sanitized Markdown
// pipeline); ids, statuses, times and the run's label are text nodes, and
// the technical detail is a <pre> text node.

import { h, type VNode } from "./hyperapp.js";
import { prose } from "./prose.js";
import { terminalStatus } from "./model.js";
import { renderQuestionModal } from "./question-modal.js";
import { parkedQuestion, renderQueue, type QueueItem } from "./queue-view.js";
import type { RunSummary } from "./api.js";
import { formatTime, resumable, runLabel, type State } from "./state.js";
import type { Client } from "./client.js";

/** makeScreens builds the History, Compose and Queue screens over c. */
export function makeScreens(c: Client) {
  const { Watch, Toggle, ComposeFrom, TaskInput, EffortInput, ContinueInput, SaveDefault, Submit, ResumeRun } = c.act;
  const { QueueTask, QueueEffort, QueueAdd, QueueMove, QueueTop, QueueCancel, QueueRequeue, QueueToggle, QueueEditOpen, QueueEditTask, QueueEditEffort, QueueEditClose, QueueEditSave, QueueAnswerOpen, QueueAnswerClose, QueueAnswerDraft, QueueAnswerSubmit, QueueAnswerOption } = c.queue;

  function historyScreen(s: State): VNode {
    return h("main", { class: "history", id: "main" }, [
      h("h2", {}, "History"),
      s.historyNotice !== "" ? h("p", { class: "notice" }, s.historyNotice) : null,
      s.runs.length === 0 ? h("p", { class: "muted" }, "No runs yet.") : null,
      h("ul", { class: "run-list" }, s.runs.map((r) => {
        const open = s.expanded === r.runId;
        const err = r.error ?? r.result?.error ?? null;
        return h("li", { key: r.runId, class: { "run-row": true, "is-active": r.runId === s.runId } }, [
          h("button", { type: "button", class: "run-row-head", "aria-expanded": String(open), onclick: [Toggle, r.runId] }, [
            h("span", { class: "run-primary" }, runLabel(r)),
            h("span", { class: "status status--" + r.status }, r.status),
            h("span", { class: "muted" }, formatTime(r.startedAt)),
          ]),
          open ? h("div", { class: "run-row-body" }, [
            h("div", { class: "muted" }, r.runId + " · effort " + r.effort + (r.continuesFrom ? " · continues " + r.continuesFrom : "")),
            h("div", { class: "section-label" }, "Task"),
            prose(r.task, "md"),
            r.result && r.result.summary ? h("div", {}, [h("div", { class: "section-label" }, "Result"), prose(r.result.summary, "md")]) : null,
            err !== null && err.message ? h("div", {}, [h("div", { class: "section-label" }, "Error"), prose(err.message, "md")]) : null,
            h("div", { class: "actions" }, [
              h("button", { type: "button", onclick: [Watch, r.runId] }, "Watch"),
              resumable(r) ? h("button", { type: "button", class: "primary", onclick: [ResumeRun, r.runId] }, "Resume") : null,
              terminalStatus(r.status) ? h("button", { type: "button", onclick: [ComposeFrom, r.runId] }, "Continue from this run") : null,
            ]),
          ]) : null,
        ]);
      })),
    ]);
  }

  function reference(prior: RunSummary): VNode {
    const err = prior.error ?? prior.result?.error ?? null;
    return h("section", { class: "continuation-reference" }, [
      h("div", { class: "section-label" }, "Continuing from"),
      h("div", { class: "muted" }, [h("span", { class: "ref-id" }, prior.runId), " · ", h("span", { class: "status status--" + prior.status }, prior.status)]),
      h("div", { class: "section-label" }, "Prior task"),
      prose(prior.task, "md"),
      prior.result && prior.result.summary ? h("div", {}, [h("div", { class: "section-label" }, "Prior result"), prose(prior.result.summary, "md")]) : null,
      prior.result && prior.result.artifacts && prior.result.artifacts.length > 0
        ? h("ul", { class: "artifacts" }, prior.result.artifacts.map((a) => h("li", {}, a))) : null,
      err !== null && err.message ? h("div", {}, [h("div", { class: "section-label" }, "Prior error"), prose(err.message, "md")]) : null,
      err !== null && err.detail !== undefined && err.detail !== null
        ? h("details", { class: "technical" }, [h("summary", {}, "Technical details"),
          h("pre", {}, typeof err.detail === "string" ? err.detail : JSON.stringify(err.detail, null, 2))])
        : null,
    ]);
  }

  function composeScreen(s: State): VNode {
    const efforts = s.config?.efforts ?? ["quick", "standard", "thorough"];
    const finished = s.runs.filter((r) => terminalStatus(r.status));
    const prior = finished.find((r) => r.runId === s.continuesFrom);
    return h("main", { class: "compose", id: "main" }, [
      h("h2", {}, "Compose a task"),
      h("form", { class: { "compose-form": true, "is-busy": s.composeBusy }, onsubmit: Submit }, [
        h("label", { for: "task-input" }, "Task"),
        h("textarea", { id: "task-input", rows: 8, value: s.task, oninput: TaskInput, placeholder: "What should the guild do?" }),
        h("div", { class: "compose-row" }, [
          h("label", {}, ["Effort ", h("select", { onchange: EffortInput }, [
            h("option", { value: "", selected: s.effort === "" }, "project default" + (s.defaultEffort ? " (" + s.defaultEffort + ")" : "")),
            ...efforts.map((e) => h("option", { value: e, selected: s.effort === e }, e)),
          ])]),
          s.effort !== "" ? h("button", { type: "button", onclick: SaveDefault }, "Save as default") : null,
          h("label", {}, ["Continue from ", h("select", { onchange: ContinueInput }, [
            h("option", { value: "", selected: s.continuesFrom === "" }, "a new task"),
            ...finished.map((r) => h("option", { value: r.runId, selected: s.continuesFrom === r.runId }, r.runId + " · " + runLabel(r))),
          ])]),
        ]),
        prior !== undefined ? reference(prior) : null,
        h("div", { class: "actions" }, [
          h("button", { type: "submit", class: "primary", disabled: s.composeBusy || s.task.trim() === "" }, "Start run"),
        ]),
        s.composeNotice !== "" ? h("p", { class: "notice" }, s.composeNotice) : null,
      ]),
    ]);
  }

  function queueScreen(s: State): VNode {
    const answering = s.queue.find((it) => it.id === s.queueAnswerFor && it.status === "needs_input");
    return h("main", { class: "queue", id: "main" }, [
      h("h2", {}, "Queue"),
      renderQueue({
        items: s.queue, efforts: s.config?.efforts ?? ["quick", "standard", "thorough"],
        task: s.queueTask, effort: s.queueEffort, busy: s.queueBusy, notice: s.queueNotice,
        edit: s.queueEdit, expanded: s.queueExpanded,
        onTask: QueueTask, onEffort: QueueEffort, onAdd: QueueAdd,
        onMove: (id: string, delta: number) => [QueueMove, { id, delta }],
        onTop: (id: string) => [QueueTop, id],
        onCancel: (id: string) => [QueueCancel, id],
        onRequeue: (id: string) => [QueueRequeue, id],
        onEdit: (it: QueueItem) => [QueueEditOpen, it],
        onEditTask: QueueEditTask, onEditEffort: QueueEditEffort, onEditSave: QueueEditSave, onEditClose: QueueEditClose,
        onAnswer: (id: string) => [QueueAnswerOpen, id],
        onToggle: (id: string) => [QueueToggle, id],
        onWatch: (runId: string) => [Watch, runId],
      }),
      answering !== undefined ? h("div", { class: "queue-modal-host" }, [
        renderQuestionModal({
          question: parkedQuestion(answering), runLabel: (answering.runId ?? answering.id) + " · queued task " + answering.id,
          askerLabel: "A queued task", draft: s.queueAnswerDraft, busy: s.queueAnswerBusy, notice: s.queueAnswerNotice,
          onDraft: QueueAnswerDraft, onOption: (label: string) => [QueueAnswerOption, label], onSubmit: QueueAnswerSubmit,
          onClose: QueueAnswerClose,
        }),
      ]) : null,
    ]);
  }

  return { historyScreen, reference, composeScreen, queueScreen };
}
