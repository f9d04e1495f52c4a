// The sanitizer's invariants, checked on a rendered live DOM subtree by tests.
// This is deliberately a second, independent statement of the allowlist (it
// does not import markdown.ts): a change that widens the sanitizer must also
// change this file, and the browser's own URL parser is the judge of hrefs.

const TAGS = new Set([
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
  "ul", "ol", "li", "pre", "code", "blockquote",
  "em", "strong", "del", "s", "a", "span",
  "table", "thead", "tbody", "tr", "th", "td",
]);

const ATTRS: Record<string, readonly string[]> = {
  a: ["href", "title"],
  code: ["class"],
  pre: ["class"],
  span: ["class"],
};

const PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/**
 * violations lists every way the subtree below root (root excluded) breaks
 * the allowlist: a tag that is not allowed, an attribute a tag may not carry,
 * an href whose scheme (as the browser resolves it) is not http, https or
 * mailto, or a node that is neither an element nor text.
 */
export function violations(root: Element): string[] {
  const out: string[] = [];
  const walk = (node: Node): void => {
    for (let child = node.firstChild; child !== null; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) {
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE) {
        out.push("node of type " + child.nodeType);
        continue;
      }
      const el = child as Element;
      const tag = el.localName;
      if (el.namespaceURI !== "http://www.w3.org/1999/xhtml" || !TAGS.has(tag)) {
        out.push("element <" + tag + "> in " + String(el.namespaceURI));
      }
      const allowed = ATTRS[tag] ?? [];
      for (const attr of Array.from(el.attributes)) {
        if (!allowed.includes(attr.name)) {
          out.push("attribute " + attr.name + "=" + JSON.stringify(attr.value) + " on <" + tag + ">");
        }
      }
      const href = el.getAttribute("href");
      if (href !== null) {
        let protocol = "";
        try {
          protocol = new URL(href, document.baseURI).protocol;
        } catch {
          protocol = "(unparsable)";
        }
        if (!PROTOCOLS.has(protocol)) {
          out.push("href " + JSON.stringify(href) + " resolves to " + protocol);
        }
      }
      walk(el);
    }
  };
  walk(root);
  return out;
}

/** assertSafe throws when the subtree below root breaks the allowlist. */
export function assertSafe(root: Element, what = ""): void {
  const found = violations(root);
  if (found.length > 0) {
    throw new Error((what !== "" ? what + ": " : "") + "unsafe DOM: " + found.join("; "));
  }
}

interface Sentinel {
  __xss?: string[];
}

/**
 * installSentinel replaces alert, confirm, prompt and print with functions
 * that record their call in window.__xss (the payloads of XSS corpora call
 * them), and returns a reader of the recorded calls. Payloads that run other
 * code are caught by the DOM invariants: no handler attribute, no script.
 */
export function installSentinel(): () => readonly string[] {
  const g = globalThis as unknown as Sentinel & Record<string, unknown>;
  g.__xss = g.__xss ?? [];
  for (const name of ["alert", "confirm", "prompt", "print"]) {
    g[name] = (...args: unknown[]) => {
      (g.__xss as string[]).push(name + "(" + args.map(String).join(", ") + ")");
      return name === "confirm" ? false : undefined;
    };
  }
  return () => g.__xss ?? [];
}
