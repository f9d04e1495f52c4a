// The result modal: a finished run's terminal result. The summary and the
// surfaced error message are agent prose and render only through the
// sanitized Markdown pipeline. Artifacts are paths shown as text. The
// machine error kind is never shown; it reaches the operator only through
// "copy raw", which puts the whole error (with its technical detail) on the
// clipboard as JSON. The technical detail is also shown collapsed, as a
// <pre> text node, under a fixed framing line (shown only with it). What
// the run reported is said once: an error message that repeats the summary
// is not shown again. "What changed" is workspace text, shown as text
// (changes-view.ts). The framing line, heading and status are fixed or
// machine text. The modal is a page overlay (modal.ts) that fits the
// viewport, keeps focus inside and closes with Esc.

import { h, type VNode } from "./hyperapp.js";
import { prose } from "./prose.js";
import { NO_ACTION_TEXT } from "./outcome.js";
import { renderChanges, type ChangesProps } from "./changes-view.js";

export interface RunError {
  kind: string;
  message?: string;
  detail?: unknown;
}

export interface RunResult {
  status: string;
  summary: string;
  artifacts?: string[];
  error?: RunError;
}

export interface ResultModalProps {
  runLabel: string;
  status: string;
  /** The model answered without any tool call in the whole run. */
  noAction?: boolean;
  result?: RunResult | null;
  error?: RunError | null;
  copied: boolean;
  /** The run's "What changed" section, when its change set is asked for. */
  changes?: ChangesProps;
  onClose: unknown;
  onCopyRaw: (raw: string) => unknown;
}

/** Fixed, trusted framing line shown above an error's technical details. */
export const ERROR_FRAMING = "The run stopped before finishing. This is what it reported; the technical details below are for troubleshooting.";

const HEADINGS: Record<string, string> = {
  success: "Run finished",
  error: "Run stopped with an error",
  needs_clarification: "The run needs clarification",
  interrupted: "Run interrupted",
};

/** rawError is the JSON "copy raw" places on the clipboard. */
export function rawError(err: RunError): string {
  return JSON.stringify(err, null, 2);
}

/** sameText reports whether two pieces of prose say the same thing (tui/result.go). */
export function sameText(a: string, b: string): boolean {
  const norm = (s: string) => s.split(/\s+/).filter((w) => w !== "").join(" ");
  return norm(a) === norm(b);
}

function detailText(detail: unknown): string {
  if (typeof detail === "string") {
    return detail;
  }
  return JSON.stringify(detail, null, 2);
}

export function renderResultModal(p: ResultModalProps): VNode {
  const err = p.error ?? p.result?.error ?? null;
  const summary = p.result?.summary ?? "";
  const artifacts = p.result?.artifacts ?? [];
  const hasDetail = err !== null && err.detail !== undefined && err.detail !== null;
  return h("div", { class: "modal-backdrop result-modal" }, [
    h("div", { class: "modal-card", role: "dialog", "aria-modal": "true", tabindex: "-1", "aria-labelledby": "result-heading" }, [
      h("div", { class: "modal-head" }, [
        h("div", { class: "modal-runlabel" }, "Run " + p.runLabel),
        h("h2", { id: "result-heading" }, HEADINGS[p.status] ?? "Run ended"),
        h("div", { class: "result-status status status--" + p.status }, p.status),
      ]),
      h("div", { class: "modal-body" }, [
        p.noAction === true ? h("p", { class: "framing no-action" }, NO_ACTION_TEXT) : null,
        summary.trim() !== "" ? h("section", { class: "result-summary" }, [prose(summary, "md")]) : null,
        artifacts.length > 0
          ? h("section", { class: "result-artifacts" }, [
            h("div", { class: "section-label" }, "Artifacts"),
            h("ul", {}, artifacts.map((a) => h("li", { class: "artifact" }, a))),
          ])
          : null,
        err !== null
          ? h("section", { class: "result-error" }, [
            // The framing line speaks of the technical details below it,
            // and the error's words are shown once: not again when the
            // summary already says them (a terminated run's both are
            // "The operator terminated the run.").
            hasDetail ? h("p", { class: "framing" }, ERROR_FRAMING) : null,
            err.message && !sameText(err.message, summary) ? prose(err.message, "md error-message") : null,
            hasDetail
              ? h("details", { class: "technical" }, [
                h("summary", {}, "Technical details"),
                h("pre", {}, detailText(err.detail)),
              ])
              : null,
            h("button", { type: "button", class: "copy-raw", onclick: p.onCopyRaw(rawError(err)) }, p.copied ? "Copied" : "Copy raw"),
          ])
          : null,
        p.changes !== undefined ? renderChanges(p.changes) : null,
      ]),
      h("div", { class: "modal-foot modal-actions" }, [
        h("button", { type: "button", class: "primary", onclick: p.onClose, "data-esc": "", "data-autofocus": "" }, "Close"),
      ]),
    ]),
  ]);
}
