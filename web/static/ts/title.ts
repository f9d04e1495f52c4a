// Titles: the one line that names a run or a task thread, as plain text.
// A task is Markdown, but a title is a text node, so its Markdown
// punctuation (backticks, emphasis, heading and list marks, link syntax)
// is taken out rather than shown raw. Nothing is cut at a word here: the
// stylesheet clamps a long title to its box with an ellipsis, and the whole
// line stays available to assistive technology and the title attribute.

/** A title is never longer than this many characters (a bound, not a layout cut). */
const MAX_TITLE = 400;

/** plainLine is the first non-empty line of Markdown src as plain text. */
export function plainLine(src: string): string {
  const line = src.split("\n").map((l) => l.trim()).find((l) => l !== "" && !/^(```|~~~)/.test(l)) ?? "";
  // Backslash escapes are set aside first, so an escaped mark stays.
  const kept: string[] = [];
  let s = line
    .replace(/\\([\\`*_{}[\]()#+\-.!~|<>])/g, (_m, c: string) => "\uE000" + (kept.push(c) - 1) + "\uE001")
    .replace(/^#{1,6}\s+/, "") // heading marks
    .replace(/^(?:>\s*)+/, "") // block quote marks
    .replace(/^(?:[-*+]|\d{1,9}[.)])\s+/, "") // list marks
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1") // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1") // links: their text
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, "$1") // reference links
    .replace(/`+([^`]*?)`+/g, "$1") // code spans
    .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, "$2") // strong
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?=[^\w*]|$)/g, "$1$2") // emphasis with *
    .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?=[^\w]|$)/g, "$1$2") // emphasis with _ (not snake_case)
    .replace(/~~(?=\S)([^]*?\S)~~/g, "$1") // strikethrough
    .replace(/\uE000(\d+)\uE001/g, (_m, i: string) => kept[Number(i)] ?? "")
    .replace(/\s+/g, " ")
    .trim();
  if (s.length > MAX_TITLE) {
    s = s.slice(0, MAX_TITLE - 1) + "…";
  }
  return s;
}

function words(s: string): string[] {
  return s.toLowerCase().split(/\s+/).filter((w) => w !== "");
}

/**
 * runTitle names a run: its summary (summary.txt, already plain text) when
 * it says something of its own, else the task's first line as plain text.
 * A summary that is only the task's first words cut short (what a summary
 * made before the model summarised the run can be) gives way to the task's
 * whole first line.
 */
export function runTitle(summary: string | null | undefined, task: string): string {
  const line = plainLine(task);
  // summary.txt is meant to be plain text, but a model may still write
  // Markdown in it: a title shows none of its punctuation.
  const sum = plainLine(summary ?? "");
  if (sum === "") {
    return line;
  }
  const sw = words(sum.replace(/[`*_]/g, ""));
  const tw = words(line);
  const prefix = sw.length > 0 && sw.length < tw.length && sw.every((w, i) => w === tw[i] || (i === sw.length - 1 && tw[i].startsWith(w)));
  return prefix ? line : sum;
}
