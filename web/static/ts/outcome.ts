// The one rule every view uses to show how something ended, as
// render/outcome.go states it for the terminal: the model's outcome field
// already says it (a tool that ran a failing command is "failed", with
// its outcomeDetail such as "exit 1" or "2 failed"; a role stopped by a
// plan change or the operator is "interrupted"), and this maps it to a
// glyph and words. Every string here is the program's own or a machine
// field, placed as text.

import { h, type VNode } from "./hyperapp.js";
import type { Operation } from "./model.js";

export interface Verdict {
  glyph: string;
  word: string;
  detail: string;
}

/** NO_ACTION_TEXT is what every view says of a run whose model answered without any tool call. */
export const NO_ACTION_TEXT = "The model answered without doing anything: no tool was called in the whole run.";

/** outcomeVerdict shows an operation's outcome, error kind and detail. */
export function outcomeVerdict(outcome?: string, errorKind?: string, detail?: string): Verdict {
  switch (outcome) {
    case undefined:
    case "":
      return { glyph: "", word: "", detail: "" };
    case "success":
      return { glyph: "✓", word: "success", detail: detail ?? "" };
    case "failed":
      return { glyph: "✗", word: "failed", detail: detail ?? "" };
    case "error":
      return errorKind === "interrupted"
        ? { glyph: "■", word: "interrupted", detail: "" }
        : { glyph: "✗", word: "error", detail: errorKind ?? "" };
    case "needs_clarification":
      return { glyph: "■", word: "needs clarification", detail: "" };
  }
  return { glyph: "■", word: outcome.replaceAll("_", " "), detail: "" };
}

/** opVerdict is an operation's own verdict. */
export function opVerdict(op: Operation): Verdict {
  return outcomeVerdict(op.outcome, op.errorKind, op.outcomeDetail);
}

/** failed says a verdict is a failure (✗). */
export function failed(v: Verdict): boolean {
  return v.glyph === "✗";
}

/** verdictText is a verdict in a few words: "✓ success", "✗ failed · exit 1", "■ interrupted". */
export function verdictText(v: Verdict): string {
  const head = (v.glyph + " " + v.word).trim();
  return v.detail !== "" && v.detail !== v.word ? head + " · " + v.detail : head;
}

/** renderRunNote shows the latest note a run gave the operator about its setup (tool calls written as text), as text. */
export function renderRunNote(notes: readonly string[] | undefined): VNode | null {
  if (notes === undefined || notes.length === 0) {
    return null;
  }
  return h("div", { class: "egress-line egress-line--denied run-note", role: "status" }, notes[notes.length - 1]);
}
