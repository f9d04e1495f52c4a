// "What changed": the files a run changed in the workspace since it started,
// as GET /api/runs/:id/changes serves them (runner.Session.Changes, the
// terminal's `w`). A path, a status and a patch are workspace text, which is
// hostile: every one is a text node, the patch a <pre> of one text node per
// line, never Markdown and never markup.

import { h, type VNode } from "./hyperapp.js";

export interface FileChange {
  path: string;
  status: string;
  patch?: string;
  added: number;
  removed: number;
  note?: string;
}

export interface ChangeSet {
  runId: string;
  source: string;
  base?: string;
  files: FileChange[];
  truncated?: boolean;
}

/** What the client holds of a run's change set: loading, loaded, or why not. */
export interface ChangesState {
  runId: string;
  set: ChangeSet | null;
  /** Why the change set could not be read, in the program's words ("" while loading or loaded). */
  error: string;
}

export interface ChangesProps {
  changes: ChangesState;
  /** The path whose diff is open, or "". */
  open: string;
  /** Whether later work may have changed the files since (a run after this one). */
  later: boolean;
  onToggle: (path: string) => unknown;
}

function plural(n: number): string {
  return n === 1 ? "" : "s";
}

/** patchLine is one line of a unified diff, classed by its first character. */
function patchLine(line: string, i: number): VNode {
  const kind = line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ") ? "head"
    : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
  return h("span", { class: "diff-line diff-line--" + kind, key: String(i) }, line + "\n");
}

function fileView(f: FileChange, p: ChangesProps): VNode {
  const open = p.open === f.path;
  const counts = f.status === "binary" || f.status === "too large" ? f.status : "+" + f.added + " −" + f.removed;
  return h("li", { class: "change-file", key: f.path }, [
    h("button", { type: "button", class: "change-file-head", "aria-expanded": String(open), onclick: p.onToggle(f.path) }, [
      h("span", { class: "change-status change-status--" + f.status.replace(/\s+/g, "-") }, f.status),
      " ",
      h("span", { class: "change-path" }, f.path),
      " ",
      h("span", { class: "change-counts muted" }, counts),
    ]),
    f.note ? h("p", { class: "muted change-note" }, f.note) : null,
    open ? (f.patch ? h("pre", { class: "change-patch" }, f.patch.replace(/\n$/, "").split("\n").map(patchLine))
      : h("p", { class: "muted" }, "No diff to show for this file.")) : null,
  ]);
}

/** renderChanges is the result's "What changed" section. */
export function renderChanges(p: ChangesProps): VNode {
  const c = p.changes;
  const head = (extra: string) => h("div", { class: "section-label" }, "What changed" + extra);
  if (c.error !== "") {
    return h("section", { class: "result-changes" }, [head(""), h("p", { class: "muted" }, "Could not tell: " + c.error)]);
  }
  if (c.set === null) {
    return h("section", { class: "result-changes" }, [head(" · reading…")]);
  }
  const files = c.set.files;
  if (files.length === 0) {
    return h("section", { class: "result-changes" }, [head(" · no file changed since the run started")]);
  }
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  const source = c.set.source === "git" ? "git diff against the run's base " + (c.set.base ?? "").slice(0, 12)
    : "the files the run's file tools wrote (no git base)";
  return h("section", { class: "result-changes" }, [
    head(" · " + files.length + " file" + plural(files.length) + ", +" + added + " −" + removed),
    h("p", { class: "muted change-source" }, source),
    h("ul", { class: "change-files" }, files.map((f) => fileView(f, p))),
    c.set.truncated ? h("p", { class: "muted" }, "Cut at the console's size bounds: `git diff` in the workspace shows everything.") : null,
    p.later ? h("p", { class: "muted" }, "As the files are now: later work may have changed them too.") : null,
  ]);
}
