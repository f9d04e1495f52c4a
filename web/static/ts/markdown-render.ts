// The sanitized Markdown pipeline for agent prose, in the spec's order:
//
//  1. showdown (window.showdown) turns Markdown into an HTML string; fenced
//     code is then highlighted with highlight.js (window.hljs) into
//     <pre><code class="hljs language-X">.
//  2. DOMParser parses that string as text/html into an inert document (no
//     script runs, nothing loads). html-repair.ts makes sure an unclosed
//     element (a <textarea>, <style>, <title>, <xmp>, <noscript>,
//     <plaintext>, …), comment or cut-off tag does not swallow the text
//     after it: its opening is neutralised and the string parsed again.
//  3. markdown.ts's allowlist sanitizer keeps only what may render.
//  4. The survivors become hyperapp vnodes: text as text nodes, elements as
//     h(tag, allowlisted attributes, children).
//
// If either library is missing or anything throws, the result is a single
// text node holding the raw source, so the field stays readable.

import { h, type VNode } from "./hyperapp.js";
import { sanitize, type SafeNode } from "./markdown.js";
import { parseWithoutSwallowing } from "./html-repair.js";

/** A rendered child: an element vnode, or a string (hyperapp's text node). */
export type MarkdownChild = VNode | string;

interface ShowdownConverter {
  makeHtml(src: string): string;
}

interface Showdown {
  Converter: new (options: Record<string, unknown>) => ShowdownConverter;
}

interface HighlightResult {
  value: string;
  language?: string;
}

interface Hljs {
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): HighlightResult;
  highlightAuto(code: string): HighlightResult;
  getLanguage(name: string): unknown;
}

/** The converter options the spec fixes: GFM tables and strikethrough, no header ids. */
export const SHOWDOWN_OPTIONS: Readonly<Record<string, unknown>> = {
  tables: true,
  strikethrough: true,
  ghCodeBlocks: true,
  noHeaderId: true,
  ghCompatibleHeaderId: false,
};

function libraries(): { showdown: Showdown; hljs: Hljs } {
  const g = globalThis as { showdown?: Showdown; hljs?: Hljs };
  const showdown = g.showdown;
  const hljs = g.hljs;
  if (showdown === undefined || typeof showdown.Converter !== "function") {
    throw new Error("showdown is not loaded");
  }
  if (hljs === undefined || typeof hljs.highlight !== "function" || typeof hljs.highlightAuto !== "function") {
    throw new Error("highlight.js is not loaded");
  }
  return { showdown, hljs };
}

function languageOf(code: Element): string {
  for (const token of (code.getAttribute("class") ?? "").split(/\s+/)) {
    if (token.startsWith("language-") && token.length > "language-".length) {
      return token.slice("language-".length);
    }
  }
  return "";
}

// Replaces every <pre><code> of doc (an inert DOMParser document) with
// highlight.js output. The output is HTML, so it too is parsed by DOMParser
// and only then moved over as nodes; it reaches the sanitizer like the rest.
function highlightCodeBlocks(doc: Document, hljs: Hljs): void {
  for (const code of Array.from(doc.querySelectorAll("pre > code"))) {
    const source = code.textContent ?? "";
    const wanted = languageOf(code);
    const result = wanted !== "" && hljs.getLanguage(wanted)
      ? hljs.highlight(source, { language: wanted, ignoreIllegals: true })
      : hljs.highlightAuto(source);
    const language = wanted !== "" ? wanted : (result.language ?? "");
    const parsed = new DOMParser().parseFromString(
      "<pre><code>" + result.value + "</code></pre>", "text/html");
    const highlighted = parsed.querySelector("pre > code");
    if (highlighted === null) {
      throw new Error("highlight.js output did not parse as code");
    }
    const replacement = doc.createElement("code");
    replacement.setAttribute("class", language !== "" ? "hljs language-" + language : "hljs");
    for (const child of Array.from(highlighted.childNodes)) {
      replacement.appendChild(doc.importNode(child, true));
    }
    code.replaceWith(replacement);
  }
}

/**
 * markdownDocument runs steps 1 and 2: Markdown to HTML (with highlighted
 * code), parsed into an inert document. It throws when a library is missing.
 * Exported for tests that compare the sanitizer's input and output.
 */
export function markdownDocument(src: string): Document {
  const { showdown, hljs } = libraries();
  const html = new showdown.Converter({ ...SHOWDOWN_OPTIONS }).makeHtml(src);
  const doc = parseWithoutSwallowing(html);
  highlightCodeBlocks(doc, hljs);
  return doc;
}

/** markdownToSafe runs steps 1 to 3. It throws when a library is missing. */
export function markdownToSafe(src: string): SafeNode[] {
  const body = markdownDocument(src).body;
  return body === null ? [] : sanitize(body);
}

/** toVNodes runs step 4: sanitized nodes into hyperapp children. */
export function toVNodes(nodes: readonly SafeNode[]): MarkdownChild[] {
  return nodes.map((node) =>
    node.kind === "text" ? node.text : h(node.tag, { ...node.attrs }, toVNodes(node.children)));
}

/**
 * renderMarkdown renders agent prose through the whole pipeline. On any
 * failure it returns the raw source as one text node.
 */
export function renderMarkdown(src: string): MarkdownChild[] {
  try {
    return toVNodes(markdownToSafe(src));
  } catch {
    return [src];
  }
}
