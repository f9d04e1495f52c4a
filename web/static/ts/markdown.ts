// The allowlist sanitizer for agent-authored Markdown: the single source of
// truth for what may render in the browser client (docs/security.md, "Browser
// client: vendoring and the sanitizer").
//
// sanitize() walks a parsed, inert DOM tree (a DOMParser text/html document)
// and returns a neutral description of what survives. It never touches a live
// document and never produces markup: markdown-render.ts turns the result into
// hyperapp vnodes, which become text nodes and allowlisted attributes only.

/** A sanitized node: plain data, safe to turn into vnodes. */
export type SafeNode = SafeText | SafeElement;

export interface SafeText {
  readonly kind: "text";
  readonly text: string;
}

export interface SafeElement {
  readonly kind: "el";
  readonly tag: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: readonly SafeNode[];
}

/** Tags that may render. Every other element is dropped or unwrapped. */
export const ALLOWED_TAGS: ReadonlySet<string> = new Set([
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
  "ul", "ol", "li", "pre", "code", "blockquote",
  "em", "strong", "del", "s", "a", "span",
  "table", "thead", "tbody", "tr", "th", "td",
]);

/**
 * Tags removed together with everything inside them, so that a script body or
 * a style sheet never becomes visible text. Every disallowed tag that is not
 * listed here is unwrapped: the tag goes, its sanitized children stay.
 */
export const DROPPED_TAGS: ReadonlySet<string> = new Set([
  "script", "style", "iframe", "object", "embed", "svg", "math",
  "form", "input", "textarea", "select", "option", "optgroup", "datalist",
  "button", "link", "meta", "base", "head", "title",
  "audio", "video", "source", "track", "picture", "img", "image", "map", "area",
  "template", "noscript", "frame", "frameset", "applet", "param",
  "xmp", "plaintext", "noembed", "noframes", "canvas", "dialog", "portal",
]);

/** URL schemes an href may carry. Relative URLs carry none and pass. */
export const ALLOWED_SCHEMES: ReadonlySet<string> = new Set(["http", "https", "mailto"]);

const HTML_NS = "http://www.w3.org/1999/xhtml";
const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

// Browsers ignore these before and inside a scheme (tab, newline, NUL, ...),
// so they are removed before the scheme is read: "java\tscript:" is
// "javascript:". C1 controls go too, as they never belong in a URL.
const URL_CONTROLS = /[\u0000-\u0020\u007f-\u009f]/g;
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/**
 * safeHref returns the href to emit for raw, or null when the link must lose
 * its href. Control characters and whitespace are removed first; what is
 * checked is exactly what is emitted. http, https and mailto pass, as do
 * relative, #anchor and //protocol-relative URLs; any other scheme fails.
 */
export function safeHref(raw: string): string | null {
  const cleaned = raw.replace(URL_CONTROLS, "");
  const m = SCHEME.exec(cleaned);
  if (m === null) {
    return cleaned;
  }
  return ALLOWED_SCHEMES.has(m[1].toLowerCase()) ? cleaned : null;
}

// highlight.js token classes ("hljs", "hljs-keyword"), its sub-scope
// suffixes ("function_", "inherited__" in class="hljs-title function_"), and
// showdown's / our language classes ("language-ts").
const CLASS_TOKEN = /^(?:hljs(?:-[a-zA-Z0-9_-]+)?|[a-z][a-z0-9]*_+|language-[a-zA-Z0-9_+#.-]+)$/;

/** safeClass keeps the class tokens highlight.js and showdown emit; "" if none. */
export function safeClass(raw: string): string {
  const kept: string[] = [];
  for (const token of raw.split(/[\t\n\f\r ]+/)) {
    if (token !== "" && CLASS_TOKEN.test(token) && !kept.includes(token)) {
      kept.push(token);
    }
  }
  return kept.join(" ");
}

function safeAttrs(tag: string, el: Element): Record<string, string> {
  const out: Record<string, string> = {};
  if (tag === "a") {
    const href = el.getAttribute("href");
    if (href !== null) {
      const safe = safeHref(href);
      if (safe !== null) {
        out.href = safe;
      }
    }
    const title = el.getAttribute("title");
    if (title !== null) {
      out.title = title;
    }
  } else if (tag === "code" || tag === "pre" || tag === "span") {
    const cls = el.getAttribute("class");
    if (cls !== null) {
      const safe = safeClass(cls);
      if (safe !== "") {
        out.class = safe;
      }
    }
  }
  return out;
}

function sanitizeChildren(parent: Node, out: SafeNode[]): void {
  for (let child = parent.firstChild; child !== null; child = child.nextSibling) {
    sanitizeNode(child, out);
  }
}

function sanitizeNode(node: Node, out: SafeNode[]): void {
  if (node.nodeType === TEXT_NODE) {
    const text = node.nodeValue ?? "";
    if (text !== "") {
      out.push({ kind: "text", text });
    }
    return;
  }
  if (node.nodeType !== ELEMENT_NODE) {
    // Comments, processing instructions, CDATA, doctypes: dropped.
    return;
  }
  const el = node as Element;
  if (el.namespaceURI !== HTML_NS) {
    // Foreign content (SVG, MathML) never renders, whatever its name.
    return;
  }
  const tag = el.localName.toLowerCase();
  if (DROPPED_TAGS.has(tag)) {
    return;
  }
  if (!ALLOWED_TAGS.has(tag)) {
    sanitizeChildren(el, out);
    return;
  }
  const children: SafeNode[] = [];
  sanitizeChildren(el, children);
  out.push({ kind: "el", tag, attrs: safeAttrs(tag, el), children });
}

/**
 * sanitize returns what may render of root's children (root itself is the
 * container, typically a DOMParser document's body, and is not included).
 */
export function sanitize(root: Node): SafeNode[] {
  const out: SafeNode[] = [];
  sanitizeChildren(root, out);
  return out;
}
