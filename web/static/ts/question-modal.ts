// The ask_human question modal. The question and its context are agent
// prose and render only through the sanitized Markdown pipeline; without a
// context, the same turn's assistant text is shown in full the same way,
// under a fixed trusted label. The run label, heading and options are text.
// The answer is trusted operator input, posted verbatim and never rendered
// back as Markdown. The modal is an overlay over the run view only.

import { h, type VNode } from "./hyperapp.js";
import { prose } from "./prose.js";

/** A pending question as /api/questions serves it. */
export interface PendingQuestion {
  id: string;
  runId: string;
  role?: string;
  roleId?: string;
  question: string;
  context?: string;
  assistantText?: string;
  options: { label: string; description?: string }[];
  askedAt: string;
}

/** The fixed label above the assistant fallback. */
export const FALLBACK_LABEL = "Previous assistant message (no context was provided).";

export interface QuestionModalProps {
  question: PendingQuestion;
  /** Which run is asking: machine text (the run's label or id). */
  runLabel: string;
  /** Who asks: a trusted guild label. */
  askerLabel: string;
  draft: string;
  busy: boolean;
  notice: string;
  onDraft: unknown;
  onOption: (label: string) => unknown;
  onSubmit: unknown;
  /** When set, the modal offers a Close button (the Queue screen's answer modal). */
  onClose?: unknown;
}

export function renderQuestionModal(p: QuestionModalProps): VNode {
  const q = p.question;
  const context = q.context ?? "";
  const fallback = q.assistantText ?? "";
  return h("div", { class: "stage-modal question-modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "question-heading" }, [
    h("div", { class: "modal-card" }, [
      h("div", { class: "modal-runlabel" }, "Run " + p.runLabel),
      h("h2", { id: "question-heading" }, p.askerLabel + " has a question"),
      prose(q.question, "md question-text"),
      context !== ""
        ? h("section", { class: "question-context" }, [h("div", { class: "section-label" }, "Context"), prose(context, "md")])
        : fallback !== ""
          ? h("section", { class: "question-fallback" }, [h("div", { class: "section-label" }, FALLBACK_LABEL), prose(fallback, "md")])
          : null,
      q.options.length > 0
        ? h("div", { class: "question-options" }, q.options.map((o) =>
          h("button", { type: "button", class: "option", disabled: p.busy, onclick: p.onOption(o.label) }, [
            h("span", { class: "option-label" }, o.label),
            o.description ? h("span", { class: "option-description" }, o.description) : null,
          ])))
        : null,
      h("form", { class: "question-answer", onsubmit: p.onSubmit }, [
        h("label", { for: "answer-input" }, "Your answer"),
        h("textarea", { id: "answer-input", rows: 3, value: p.draft, oninput: p.onDraft, disabled: p.busy }),
        h("div", { class: "modal-actions" }, [
          p.onClose !== undefined ? h("button", { type: "button", onclick: p.onClose }, "Close") : null,
          h("button", { type: "submit", class: "primary", disabled: p.busy || p.draft.trim() === "" }, "Send answer"),
        ]),
        p.notice !== "" ? h("p", { class: "notice" }, p.notice) : null,
      ]),
    ]),
  ]);
}
