// The ask_human question modal. The question and its context are agent
// prose and render only through the sanitized Markdown pipeline; without a
// context, the same turn's assistant text is shown in full the same way,
// under a fixed trusted label. The run label, heading and options are text.
// The answer is trusted operator input, posted verbatim and never rendered
// back as Markdown. The modal is a page overlay (modal.ts): it fits the
// viewport with its answer box and buttons always on screen (the question
// scrolls above them), keeps focus inside, defers with Esc and sends with
// Ctrl/Cmd+Enter. It names the asking run in its first line.

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
  /** When set, the modal offers "Answer later" (Esc too): it hides until brought back. */
  onDefer?: unknown;
}

export function renderQuestionModal(p: QuestionModalProps): VNode {
  const q = p.question;
  const context = q.context ?? "";
  const fallback = q.assistantText ?? "";
  const dismiss = p.onClose ?? p.onDefer;
  return h("div", { class: "modal-backdrop question-modal" }, [
    h("div", { class: "modal-card", role: "dialog", "aria-modal": "true", tabindex: "-1", "aria-labelledby": "question-heading", "aria-describedby": "question-text" }, [
      h("div", { class: "modal-head" }, [
        h("div", { class: "modal-runlabel" }, "Run " + p.runLabel),
        h("h2", { id: "question-heading" }, p.askerLabel + " has a question"),
      ]),
      h("div", { class: "modal-body" }, [
        h("div", { id: "question-text" }, [prose(q.question, "md question-text")]),
        context !== ""
          ? h("section", { class: "question-context" }, [h("div", { class: "section-label" }, "Context"), prose(context, "md")])
          : fallback !== ""
            ? h("section", { class: "question-fallback" }, [h("div", { class: "section-label" }, FALLBACK_LABEL), prose(fallback, "md")])
            : null,
        q.options.length > 0
          ? h("div", { class: "question-options", role: "group", "aria-label": "Options" }, q.options.map((o, i) =>
            h("button", { type: "button", class: "option", disabled: p.busy, onclick: p.onOption(o.label), "data-autofocus": i === 0 ? "" : undefined }, [
              h("span", { class: "option-label" }, o.label),
              o.description ? h("span", { class: "option-description" }, o.description) : null,
            ])))
          : null,
      ]),
      h("form", { class: "modal-foot question-answer", onsubmit: p.onSubmit }, [
        h("label", { for: "answer-input" }, q.options.length > 0 ? "Or answer in your own words" : "Your answer"),
        h("textarea", {
          id: "answer-input", rows: 3, value: p.draft, oninput: p.onDraft, disabled: p.busy,
          "aria-describedby": "answer-hint", "data-autofocus": q.options.length === 0 ? "" : undefined,
        }),
        h("div", { class: "modal-actions" }, [
          h("span", { id: "answer-hint", class: "muted key-hint" }, "Ctrl+Enter sends · Esc " + (p.onClose !== undefined ? "closes" : "answers later")),
          dismiss !== undefined ? h("button", { type: "button", onclick: dismiss, "data-esc": "" }, p.onClose !== undefined ? "Close" : "Answer later") : null,
          h("button", { type: "submit", class: "primary", disabled: p.busy || p.draft.trim() === "" }, "Send answer"),
        ]),
        p.notice !== "" ? h("p", { class: "notice", role: "status" }, p.notice) : null,
      ]),
    ]),
  ]);
}
