// Step 2 of the sanitized Markdown pipeline: showdown's HTML string parsed
// into an inert DOMParser document, without letting one unclosed element
// swallow the rest of the text.
//
// Showdown passes raw HTML through, and the HTML parser gives an element
// that is never closed everything up to the end of the input: the content
// of an unclosed <textarea>, <title>, <style>, <xmp>, <script>, <iframe>
// or <plaintext> becomes its raw text, and an unclosed <noscript>,
// <button>, <select>, <template> or <svg> (DOMParser parses with scripting
// off, so <noscript> is an ordinary element) holds the rest as children.
// The sanitizer drops those elements with their content, so the rest of
// the prose would vanish. An unclosed comment, or a tag cut off inside an
// attribute value, hides the rest the same way.
//
// The repair: parse the HTML with a sentinel comment (a fresh random
// nonce) appended. If the sentinel comes out as a comment with no dropped
// or foreign ancestor, nothing was swallowed and that document is the
// result (the sanitizer drops the comment like any other). Otherwise the
// document says what swallowed it, a small tokenizer finds that
// construct's opening in the string, the opening is neutralised (a start
// tag removed, an unclosed comment's "<!--" closed at once, a cut-off
// tag's "<" escaped to text), and the string is parsed again. When no
// opening can be found, or after too many rounds, the caller gets an
// error and shows the raw source as one text node. Nothing is ever
// executed (DOMParser is inert), and the allowlist rules of markdown.ts
// apply unchanged to whatever document comes out.

import { DROPPED_TAGS } from "./markdown.js";

const HTML_NS = "http://www.w3.org/1999/xhtml";

/** Elements whose content the tokenizer reads as raw text up to their end tag. */
const RAW_TEXT: ReadonlySet<string> = new Set([
  "script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title",
]);

/** Rounds of repair before the pipeline gives up and shows the raw source. */
const MAX_ROUNDS = 64;

/** A construct of the HTML string that the tokenizer found. */
export interface Construct {
  kind: "start" | "end" | "comment" | "eof-in-tag";
  /** Tag name, lower case ("" for comments). */
  name: string;
  /** [start, end) in the string. */
  start: number;
  end: number;
  /** For comments: whether they reached their closing "-->" or ">". */
  closed: boolean;
  /**
   * For tags: showdown escaped a ">" inside it (an "&gt;" outside quoted
   * values), so showdown took it for text and the tag runs on over text
   * that was never meant as its attributes.
   */
  textual?: boolean;
}

const isAlpha = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");
const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\f" || c === "\r";

/**
 * tokenize lists the tags and comments of html the way the HTML tokenizer
 * meets them in its data state: tags inside comments, attribute values or
 * raw-text elements are not tags. It follows the standard closely enough to
 * locate openings; the DOM check in parseWithoutSwallowing is the judge of
 * whether anything was swallowed.
 */
export function tokenize(html: string): Construct[] {
  const out: Construct[] = [];
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf("<", i);
    if (lt < 0) {
      break;
    }
    const c = html.charAt(lt + 1);
    if (c === "!" || c === "?" || (c === "/" && html.charAt(lt + 2) !== "" && !isAlpha(html.charAt(lt + 2)) && html.charAt(lt + 2) !== ">")) {
      i = comment(html, lt, out);
      continue;
    }
    if (c === "/" && html.charAt(lt + 2) === ">") {
      i = lt + 3; // "</>" is ignored
      continue;
    }
    const endTag = c === "/";
    const nameAt = endTag ? lt + 2 : lt + 1;
    if (!isAlpha(html.charAt(nameAt))) {
      i = lt + 1; // a "<" that starts nothing is text
      continue;
    }
    const tag = readTag(html, nameAt);
    if (tag === null) {
      out.push({ kind: "eof-in-tag", name: "", start: lt, end: n, closed: false });
      break;
    }
    out.push({ kind: endTag ? "end" : "start", name: tag.name, start: lt, end: tag.end, closed: true, textual: tag.textual });
    i = tag.end;
    if (!endTag && tag.name === "plaintext") {
      break; // the rest of the input is its text
    }
    if (!endTag && RAW_TEXT.has(tag.name)) {
      const close = rawTextEnd(html, tag.end, tag.name);
      if (close < 0) {
        break; // unclosed: the rest is its text
      }
      i = close;
    }
  }
  return out;
}

// comment reads "<!--…-->", "<!…>", "<?…>" or "</…>" (a bogus comment) at
// lt and returns the index after it.
function comment(html: string, lt: number, out: Construct[]): number {
  if (html.startsWith("<!--", lt)) {
    // "<!-->" and "<!--->" are complete, empty comments.
    if (html.startsWith("<!-->", lt)) {
      out.push({ kind: "comment", name: "", start: lt, end: lt + 5, closed: true });
      return lt + 5;
    }
    if (html.startsWith("<!--->", lt)) {
      out.push({ kind: "comment", name: "", start: lt, end: lt + 6, closed: true });
      return lt + 6;
    }
    let j = lt + 4;
    for (;;) {
      const dash = html.indexOf("--", j);
      if (dash < 0) {
        out.push({ kind: "comment", name: "", start: lt, end: html.length, closed: false });
        return html.length;
      }
      if (html.charAt(dash + 2) === ">") {
        out.push({ kind: "comment", name: "", start: lt, end: dash + 3, closed: true });
        return dash + 3;
      }
      if (html.charAt(dash + 2) === "!" && html.charAt(dash + 3) === ">") {
        out.push({ kind: "comment", name: "", start: lt, end: dash + 4, closed: true });
        return dash + 4;
      }
      j = dash + 1;
    }
  }
  const gt = html.indexOf(">", lt + 2);
  if (gt < 0) {
    out.push({ kind: "comment", name: "", start: lt, end: html.length, closed: false });
    return html.length;
  }
  out.push({ kind: "comment", name: "", start: lt, end: gt + 1, closed: true });
  return gt + 1;
}

// readTag reads a tag whose name starts at nameAt, with its attributes, and
// returns its lower-case name and the index after its ">", or null when the
// input ends inside it (the parser then drops the tag and everything after).
function readTag(html: string, nameAt: number): { name: string; end: number; textual: boolean } | null {
  const n = html.length;
  let j = nameAt;
  let textual = false;
  const unquoted = (from: number, to: number) => {
    if (html.slice(from, to).includes("&gt;")) {
      textual = true;
    }
  };
  while (j < n && !isSpace(html.charAt(j)) && html.charAt(j) !== "/" && html.charAt(j) !== ">") {
    j++;
  }
  const name = html.slice(nameAt, j).toLowerCase();
  for (;;) {
    while (j < n && (isSpace(html.charAt(j)) || html.charAt(j) === "/")) {
      j++;
    }
    if (j >= n) {
      return null;
    }
    if (html.charAt(j) === ">") {
      return { name, end: j + 1, textual };
    }
    // An attribute name (its first character may be "=").
    const attrAt = j;
    j++;
    while (j < n && !isSpace(html.charAt(j)) && !"/>=".includes(html.charAt(j))) {
      j++;
    }
    unquoted(attrAt, j);
    while (j < n && isSpace(html.charAt(j))) {
      j++;
    }
    if (html.charAt(j) !== "=") {
      continue;
    }
    j++;
    while (j < n && isSpace(html.charAt(j))) {
      j++;
    }
    const q = html.charAt(j);
    if (q === "\"" || q === "'") {
      const close = html.indexOf(q, j + 1);
      if (close < 0) {
        return null;
      }
      j = close + 1;
    } else {
      const valueAt = j;
      while (j < n && !isSpace(html.charAt(j)) && html.charAt(j) !== ">") {
        j++;
      }
      unquoted(valueAt, j);
    }
  }
}

// rawTextEnd finds the end tag that closes a raw-text element whose content
// starts at from: "</name" (any case) followed by a space, "/" or ">". It
// returns the index of that "<", or -1.
function rawTextEnd(html: string, from: number, name: string): number {
  const lower = html.toLowerCase();
  let j = from;
  for (;;) {
    const at = lower.indexOf("</" + name, j);
    if (at < 0) {
      return -1;
    }
    const after = lower.charAt(at + 2 + name.length);
    if (after === "" || isSpace(after) || after === "/" || after === ">") {
      return at;
    }
    j = at + 1;
  }
}

/** What swallowed the sentinel, as the parsed document tells it. */
type Swallower =
  | { kind: "element"; name: string }
  | { kind: "comment" }
  | { kind: "lost" };

function nonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return "guildhall-end-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// swallowed reports what, if anything, swallowed the sentinel comment of doc.
function swallowed(doc: Document, mark: string): Swallower | null {
  const walker = doc.createTreeWalker(doc, NodeFilter.SHOW_COMMENT);
  let found: Node | null = null;
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    if ((n as Comment).data === mark) {
      found = n;
    } else if ((n as Comment).data.includes(mark)) {
      return { kind: "comment" };
    }
  }
  if (found !== null) {
    let outer: Element | null = null;
    for (let el = found.parentElement; el !== null; el = el.parentElement) {
      if (el.namespaceURI !== HTML_NS || DROPPED_TAGS.has(el.localName.toLowerCase())) {
        outer = el;
      }
    }
    if (outer === null) {
      return null;
    }
    // Foreign content is dropped from its outermost foreign element.
    while (outer.namespaceURI !== HTML_NS && outer.parentElement !== null && outer.parentElement.namespaceURI !== HTML_NS) {
      outer = outer.parentElement;
    }
    return { kind: "element", name: outer.localName.toLowerCase() };
  }
  // Raw text (and <plaintext>) holds the sentinel as text.
  const elements = doc.getElementsByTagName("*");
  for (let k = 0; k < elements.length; k++) {
    const el = elements[k];
    const name = el.localName.toLowerCase();
    if ((RAW_TEXT.has(name) || name === "plaintext") && (el.textContent ?? "").includes(mark)) {
      return { kind: "element", name };
    }
    if (name === "template" && templateHolds(el as HTMLTemplateElement, mark)) {
      return { kind: "element", name };
    }
  }
  return { kind: "lost" };
}

function templateHolds(t: HTMLTemplateElement, mark: string): boolean {
  const walker = t.ownerDocument.createTreeWalker(t.content, NodeFilter.SHOW_COMMENT | NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    if ((n.nodeValue ?? "").includes(mark)) {
      return true;
    }
  }
  return false;
}

// neutralise returns html with the opening of what swallowed the rest made
// harmless, or null when the tokenizer finds no such opening.
function neutralise(html: string, what: Swallower): string | null {
  const tokens = tokenize(html);
  let target: Construct | undefined;
  let replacement = "";
  switch (what.kind) {
    case "comment":
      target = tokens.find((t) => t.kind === "comment" && !t.closed);
      // An empty, closed comment in its place: the rest is text again.
      replacement = "<!---->";
      if (target !== undefined) {
        const opener = html.startsWith("<!--", target.start) ? 4 : 2;
        return html.slice(0, target.start) + replacement + html.slice(target.start + opener);
      }
      return null;
    case "lost":
      target = tokens.find((t) => t.kind === "eof-in-tag");
      if (target === undefined) {
        return null;
      }
      // The cut-off tag becomes text: its "<" is escaped.
      return html.slice(0, target.start) + "&lt;" + html.slice(target.start + 1);
    case "element": {
      // The outermost start tag of that name left open, by matching start
      // and end tags in order; else the last start tag of that name.
      const open: Construct[] = [];
      let last: Construct | undefined;
      for (const t of tokens) {
        if (t.name !== what.name) {
          continue;
        }
        if (t.kind === "start") {
          open.push(t);
          last = t;
        } else if (t.kind === "end") {
          open.pop();
        }
      }
      target = open[0] ?? last;
      if (target === undefined) {
        return null;
      }
      // An empty comment rather than nothing, so the text on either side
      // cannot join into a new tag ("<" + "<textarea>" + "script>").
      return html.slice(0, target.start) + "<!---->" + html.slice(target.end);
    }
  }
}

/** Dropped elements that have no content, so never swallow anything. */
const VOID: ReadonlySet<string> = new Set([
  "input", "link", "meta", "base", "source", "track", "img", "image", "area", "param", "embed", "frame",
]);

/**
 * openings lists the constructs of html that would hide the text after
 * them, earliest first: each start tag of a dropped element that no end
 * tag of its name closes (start and end tags matched in order, innermost
 * first), an unclosed raw-text element or <plaintext>, an unclosed
 * comment, a tag cut off by the end of the input, and a tag that runs on
 * over text showdown escaped (see Construct.textual).
 */
export function openings(html: string): Construct[] {
  const tokens = tokenize(html);
  const open = new Map<string, Construct[]>();
  const out: Construct[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind === "comment") {
      if (!t.closed) {
        out.push(t);
      }
      continue;
    }
    if (t.kind === "eof-in-tag" || t.textual === true) {
      out.push(t);
      continue;
    }
    if (!DROPPED_TAGS.has(t.name) || VOID.has(t.name)) {
      continue;
    }
    const stack = open.get(t.name) ?? [];
    open.set(t.name, stack);
    if (t.kind === "end") {
      stack.pop();
      continue;
    }
    // <svg/> and <math/> are closed at once (foreign content honours "/>").
    if ((t.name === "svg" || t.name === "math") && html.charAt(t.end - 2) === "/") {
      continue;
    }
    const last = k === tokens.length - 1;
    if (t.name === "plaintext" || (RAW_TEXT.has(t.name) && last && rawTextEnd(html, t.end, t.name) < 0)) {
      out.push(t); // the rest of the input is its text
      continue;
    }
    stack.push(t);
  }
  for (const stack of open.values()) {
    out.push(...stack);
  }
  return out.sort((a, b) => a.start - b.start);
}

// fix neutralises one opening: a start tag becomes an empty comment (not
// nothing, so the text on either side cannot join into a new tag: "<" +
// "<textarea>" + "script>"), an unclosed comment's opener an empty closed
// comment, and the "<" of a cut-off or textual tag text.
function fix(html: string, c: Construct): string {
  switch (c.kind) {
    case "comment": {
      const opener = html.startsWith("<!--", c.start) ? 4 : 2;
      return html.slice(0, c.start) + "<!---->" + html.slice(c.start + opener);
    }
    case "eof-in-tag":
      return html.slice(0, c.start) + "&lt;" + html.slice(c.start + 1);
    default:
      if (c.textual === true) {
        return html.slice(0, c.start) + "&lt;" + html.slice(c.start + 1);
      }
      return html.slice(0, c.start) + "<!---->" + html.slice(c.end);
  }
}

/**
 * repairOpenings neutralises every opening of html (see openings) until
 * none is left. Removing an unclosed raw-text element's start tag turns the
 * rest back into markup, which may hold more, so it tokenizes again; each
 * round removes at least one construct.
 */
export function repairOpenings(html: string): string {
  let src = html;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = openings(src);
    if (found.length === 0) {
      return src;
    }
    // From the end, so the earlier positions stay valid.
    for (let k = found.length - 1; k >= 0; k--) {
      src = fix(src, found[k]);
    }
  }
  throw new Error("the HTML keeps opening elements that are never closed");
}

/**
 * parseWithoutSwallowing parses html (showdown's output) into an inert
 * text/html document in which no unclosed element, comment or cut-off tag
 * hides the text after it. The tokenizer's repair comes first; the parsed
 * document is then checked with the sentinel, and whatever still swallowed
 * it is neutralised as the document names it. It throws when it cannot
 * make that so; the pipeline then falls back to the raw source as one
 * text node.
 */
export function parseWithoutSwallowing(html: string): Document {
  const mark = nonce();
  let src = repairOpenings(html);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const doc = new DOMParser().parseFromString(src + "<!--" + mark + "-->", "text/html");
    const what = swallowed(doc, mark);
    if (what === null) {
      return doc;
    }
    const next = neutralise(src, what);
    if (next === null || next === src) {
      break;
    }
    src = next;
  }
  throw new Error("the HTML keeps swallowing the text after an unclosed element");
}
