// webtest: no-csp (hostile markup must meet a page where a surviving handler would run)
//
// Browser tests of the sanitized Markdown pipeline (markdown.ts and
// markdown-render.ts). The spec's "source/web/markdown.test.ts" lives here.
// Every case renders through renderMarkdown into a live element with
// hyperapp's app(), then asserts on the resulting DOM. Run by
// TestBrowserSuites (web/webtest).

import { test, assert, assertEqual, mount } from "./testing.js";
import { installSentinel } from "./testing-invariants.js";
import { checkedRenderer } from "./testing-markdown.js";
import { renderMarkdown, markdownToSafe } from "./markdown-render.js";
import { sanitize, safeHref, safeClass, type SafeNode } from "./markdown.js";

const executed = installSentinel();
const render = checkedRenderer(executed);

function hrefs(root: Element): (string | null)[] {
  return Array.from(root.querySelectorAll("a")).map((a) => a.getAttribute("href"));
}

function tags(root: Element): string[] {
  return Array.from(root.querySelectorAll("*")).map((el) => el.localName);
}

// ---------------------------------------------------------------------------
// Hostile inputs. Each renders; the invariants (allowlisted tags and
// attributes only, safe hrefs, no script run) are checked for all of them,
// then the case's own expectations.

interface Hostile {
  name: string;
  md: string;
  /** Strings that must not be visible text. */
  hidden?: string[];
  /** Strings that must be visible text. */
  visible?: string[];
  /** The href attribute of each <a>, in order (null: the link lost its href). */
  hrefs?: (string | null)[];
  /** Tags that must be present. */
  has?: string[];
  /** Tags that must be absent. */
  lacks?: string[];
}

const hostile: Hostile[] = [
  // Event handlers and the elements that carry them.
  { name: "img onerror", md: `<img src=x onerror="alert(1)">`, lacks: ["img"] },
  { name: "img srcset onerror", md: `<img srcset="x 1x, y 2x" onerror=alert(1)>after`, lacks: ["img"], visible: ["after"] },
  { name: "div onclick is unwrapped", md: `<div onclick="alert(1)">inner text</div>`, visible: ["inner text"], lacks: ["div"] },
  { name: "p style stripped", md: `<p style="background:url(javascript:alert(1))" id="p1">styled</p>`, has: ["p"], visible: ["styled"] },
  { name: "span style and foreign class", md: `<span style="color:red" class="hljs-keyword modal-overlay" onmouseover=alert(1)>tok</span>`, has: ["span"] },
  { name: "h1 with id and handler", md: `<h1 id="top" onclick="alert(1)">Heading</h1>`, has: ["h1"], visible: ["Heading"] },
  { name: "body onload", md: `<body onload=alert(1)>body text</body>`, visible: ["body text"] },
  { name: "details ontoggle", md: `<details open ontoggle=alert(1)><summary>sum</summary>more</details>`, lacks: ["details", "summary"], visible: ["sum", "more"] },
  { name: "marquee onstart", md: `<marquee onstart=alert(1)>scroll</marquee>`, lacks: ["marquee"], visible: ["scroll"] },
  { name: "custom element handler", md: `<x-widget onclick=alert(1) tabindex=0>custom</x-widget>`, visible: ["custom"] },
  { name: "handler with odd separators", md: `<a href="https://ok.example"/onmouseover=alert(1)//>ok</a>`, visible: ["ok"] },
  { name: "a with handler keeps safe href", md: `<a href="https://ok.example/" onmouseover="alert(1)" target="_blank" rel="opener">ok</a>`, hrefs: ["https://ok.example/"] },
  { name: "table cell background", md: `<table onmouseover=alert(1)><tr><td background="javascript:alert(1)">cell</td></tr></table>`, has: ["table", "td"], visible: ["cell"] },
  { name: "input autofocus onfocus", md: `<input autofocus onfocus=alert(1) value="typed">`, lacks: ["input"], hidden: ["typed"] },
  { name: "audio onerror", md: `<audio src=x onerror=alert(1)>fallback</audio>`, lacks: ["audio"], hidden: ["fallback"] },
  { name: "video source onerror", md: `<video><source onerror="alert(1)">v</video>`, lacks: ["video", "source"] },

  // javascript: smuggled past a naive scheme check.
  { name: "javascript href", md: `<a href="javascript:alert(1)">x</a>`, hrefs: [null], visible: ["x"] },
  { name: "mixed case javascript", md: `<a href="JaVaScRiPt:alert(1)">x</a>`, hrefs: [null] },
  { name: "tab entity inside scheme", md: `<a href="jav&#x09;ascript:alert(1)">x</a>`, hrefs: [null] },
  { name: "literal tab inside scheme", md: `<a href="java\tscript:alert(1)">x</a>`, hrefs: [null] },
  { name: "newline entity inside scheme", md: `<a href="java&#x0A;script:alert(1)">x</a>`, hrefs: [null] },
  { name: "carriage return inside scheme", md: `<a href="java&#13;script:alert(1)">x</a>`, hrefs: [null] },
  { name: "leading controls and spaces", md: `<a href=" &#1;&#2; javascript:alert(1)">x</a>`, hrefs: [null] },
  { name: "embedded C0 controls", md: `<a href="j&#1;ava&#31;script:alert(1)">x</a>`, hrefs: [null] },
  { name: "embedded DEL and C1", md: "<a href=\"java&#127;scr\u0085ipt:alert(1)\">x</a>", hrefs: [null] },
  { name: "C1 entity remapped to a non-scheme char", md: `<a href="javascr&#133;ipt:alert(1)">x</a>`, hrefs: ["javascr\u2026ipt:alert(1)"] },
  { name: "NUL inside scheme", md: `<a href="java\u0000script:alert(1)">x</a>` },
  { name: "decimal entities", md: `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>`, hrefs: [null] },
  { name: "padded decimal entities", md: `<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">x</a>`, hrefs: [null] },
  { name: "hex entities", md: `<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)">x</a>`, hrefs: [null] },
  { name: "named colon entity", md: `<a href="javascript&colon;alert(1)">x</a>`, hrefs: [null] },
  { name: "unquoted javascript href", md: `<a href=javascript:alert(1)>x</a>`, hrefs: [null] },

  // Other dangerous or unknown schemes.
  { name: "data text/html", md: `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`, hrefs: [null] },
  { name: "data with spaces", md: `<a href=" data:text/html,<script>alert(1)</script>">x</a>`, hrefs: [null], lacks: ["script"] },
  { name: "vbscript", md: `<a href="vbscript:msgbox(1)">x</a>`, hrefs: [null] },
  { name: "unknown scheme", md: `<a href="livescript:alert(1)">x</a>`, hrefs: [null] },
  { name: "file scheme", md: `<a href="file:///etc/passwd">x</a>`, hrefs: [null] },

  // Markdown syntax that produces links and images.
  { name: "markdown javascript link", md: `[click](javascript:alert(1))`, hrefs: [null], visible: ["click"] },
  { name: "markdown uppercase javascript link", md: `[click](JAVASCRIPT:alert(1))`, hrefs: [null] },
  { name: "markdown data link", md: `[click](data:text/html,alert(1))`, hrefs: [null] },
  { name: "markdown reference link", md: "[click][evil]\n\n[evil]: javascript:alert(1)", hrefs: [null], visible: ["click"] },
  { name: "markdown link title breakout", md: "[t][r]\n\n[r]: https://example.com \"a\\\" onmouseover=alert(1)\"", hrefs: ["https://example.com"] },
  { name: "markdown image javascript", md: `![alt](javascript:alert(1))`, lacks: ["img"] },
  { name: "markdown image", md: `![alt text](https://example.com/x.png)`, lacks: ["img"] },
  { name: "autolink javascript", md: `<javascript:alert(1)>`, lacks: ["a"] },

  // Dropped wholesale: content never becomes visible text.
  { name: "script body hidden", md: `before<script>alert("SCRIPT-BODY")</script>after`, hidden: ["SCRIPT-BODY"], visible: ["before", "after"], lacks: ["script"] },
  { name: "style body hidden", md: `<style>.STYLE-BODY{display:none}</style>text`, hidden: ["STYLE-BODY"], visible: ["text"] },
  { name: "svg onload", md: `<svg onload=alert(1)><text>SVG-TEXT</text></svg>`, lacks: ["svg", "text"], hidden: ["SVG-TEXT"] },
  { name: "svg script", md: `<svg><script>alert("SVG-SCRIPT")</script></svg>`, hidden: ["SVG-SCRIPT"] },
  { name: "svg a xlink:href", md: `<svg><a xlink:href="javascript:alert(1)"><text>LINK</text></a></svg>`, hidden: ["LINK"] },
  { name: "mathml href", md: `<math href="javascript:alert(1)">MATH</math>`, lacks: ["math"], hidden: ["MATH"] },
  { name: "mathml mXSS", md: `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>`, lacks: ["img", "math", "style"] },
  { name: "iframe javascript src", md: `<iframe src="javascript:alert(1)">IFRAME</iframe>`, lacks: ["iframe"], hidden: ["IFRAME"] },
  { name: "iframe srcdoc", md: `<iframe srcdoc="<script>alert(1)</script>"></iframe>`, lacks: ["iframe"] },
  { name: "object data", md: `<object data="javascript:alert(1)">OBJ</object>`, lacks: ["object"], hidden: ["OBJ"] },
  { name: "embed src", md: `<embed src="javascript:alert(1)">`, lacks: ["embed"] },
  { name: "form action and button", md: `<form action="javascript:alert(1)"><button formaction="javascript:alert(1)">BUTTON</button></form>`, lacks: ["form", "button"], hidden: ["BUTTON"] },
  { name: "textarea content", md: `<textarea><img src=x onerror=alert(1)>TEXTAREA</textarea>`, hidden: ["TEXTAREA"] },
  { name: "select content", md: `<select><option>OPTION</option></select>`, hidden: ["OPTION"] },
  { name: "base href", md: `<base href="javascript:alert(1)//">text`, lacks: ["base"] },
  { name: "meta refresh", md: `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">text`, lacks: ["meta"] },
  { name: "link import", md: `<link rel="import" href="https://evil.example/x.html">text`, lacks: ["link"] },
  { name: "template content", md: `<template><img src=x onerror=alert(1)>TEMPLATE</template>`, hidden: ["TEMPLATE"] },
  { name: "noscript mXSS", md: `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`, lacks: ["img", "noscript"] },
  { name: "xmp content", md: `<xmp><img src=x onerror=alert(1)>XMP</xmp>`, hidden: ["XMP"], lacks: ["img"] },
  { name: "canvas and dialog", md: `<canvas>CANVAS</canvas><dialog open>DIALOG</dialog>`, hidden: ["CANVAS", "DIALOG"] },

  // Nested and malformed markup.
  { name: "split script tag", md: `<scr<script>ipt>alert(1)</script>`, lacks: ["script"] },
  { name: "doubled script tag", md: `<<script>script>alert("NESTED")<</script>/script>`, lacks: ["script"], hidden: ["NESTED"] },
  { name: "unclosed img", md: `<img src=x onerror=alert(1)//`, lacks: ["img"] },
  { name: "unclosed attribute", md: `<a href="https://ok.example onmouseover=alert(1) x="y">z</a>` },
  { name: "comment hides img", md: `<!-- <img src=x onerror=alert(1)> -->visible`, lacks: ["img"], visible: ["visible"] },
  { name: "processing instruction", md: `<?xml-stylesheet href="javascript:alert(1)"?>pi`, visible: ["pi"] },
  { name: "cdata in html", md: `<![CDATA[<img src=x onerror=alert(1)>]]>`, lacks: ["img"] },
  { name: "deep nesting", md: "<div>".repeat(600) + "deep" + "</div>".repeat(600), visible: ["deep"], lacks: ["div"] },
  { name: "code class smuggling", md: `<code class="language-js hljs evil" onmouseover=alert(1)>c</code>`, has: ["code"] },

  // Code shows markup as text.
  { name: "fenced code with html", md: "```html\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n```", visible: ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"], has: ["pre", "code"], lacks: ["script", "img"] },
  { name: "inline code with html", md: "`<img src=x onerror=alert(1)>`", visible: ["<img src=x onerror=alert(1)>"], lacks: ["img"] },

  // Allowed URLs pass.
  { name: "protocol-relative allowed", md: `<a href="//evil.example/x">x</a>`, hrefs: ["//evil.example/x"] },
  { name: "anchor allowed", md: `<a href="#section-2">x</a>`, hrefs: ["#section-2"] },
  { name: "relative allowed", md: `<a href="docs/readme.md?x=1">x</a>`, hrefs: ["docs/readme.md?x=1"] },
  { name: "mailto allowed", md: `<a href="mailto:ops@example.com">mail</a>`, hrefs: ["mailto:ops@example.com"] },
  { name: "https autolink", md: `<https://example.com/path>`, hrefs: ["https://example.com/path"] },
  { name: "markdown https link with title", md: `[docs](https://example.com/docs "The docs")`, hrefs: ["https://example.com/docs"] },
];

for (const c of hostile) {
  test("hostile: " + c.name, async () => {
    const root = await render(c.md);
    const text = root.textContent ?? "";
    for (const s of c.hidden ?? []) {
      assert(!text.includes(s), `${JSON.stringify(s)} is visible in ${JSON.stringify(text)}`);
    }
    for (const s of c.visible ?? []) {
      assert(text.includes(s), `${JSON.stringify(s)} is not visible in ${JSON.stringify(text)}`);
    }
    if (c.hrefs !== undefined) {
      assertEqual(hrefs(root), c.hrefs, "hrefs");
    }
    const present = tags(root);
    for (const t of c.has ?? []) {
      assert(present.includes(t), `<${t}> missing, have ${present.join(",")}`);
    }
    for (const t of c.lacks ?? []) {
      assert(!present.includes(t), `<${t}> present`);
    }
  });
}

test("hostile: attributes on allowed tags are reduced to the allowlist", async () => {
  const root = await render(
    `<a href="https://a.example" title="T" id="i" name="n" style="x" download ping="https://p.example">a</a>` +
    `<span class="hljs-string evil" id="s" title="t">s</span><code class="language-go" data-x="1">c</code>`);
  const a = root.querySelector("a")!;
  assertEqual(a.getAttributeNames().sort(), ["href", "title"]);
  assertEqual(a.getAttribute("title"), "T");
  assertEqual(root.querySelector("span")!.getAttributeNames(), ["class"]);
  assertEqual(root.querySelector("span")!.getAttribute("class"), "hljs-string");
  assertEqual(root.querySelector("code")!.getAttribute("class"), "language-go");
});

test("hostile: a link's title is text, not markup", async () => {
  const root = await render(`<a href="https://a.example" title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">a</a>`);
  assertEqual(root.querySelector("a")!.getAttribute("title"), `"><img src=x onerror=alert(1)>`);
  assert(root.querySelector("img") === null, "no img");
});

// ---------------------------------------------------------------------------
// Positive rendering.

test("render: GFM table", async () => {
  const root = await render("| name | value |\n|------|-------|\n| a | 1 |\n| b | 2 |");
  assert(root.querySelector("table > thead > tr > th") !== null, "header cell");
  assertEqual(Array.from(root.querySelectorAll("tbody td")).map((td) => td.textContent), ["a", "1", "b", "2"]);
});

test("render: strikethrough", async () => {
  const root = await render("keep ~~gone~~ keep");
  assertEqual(root.querySelector("del")?.textContent, "gone");
});

test("render: headings carry no id", async () => {
  const root = await render("# Title\n\n## Sub title\n\n###### Six");
  assertEqual(tags(root).filter((t) => /^h\d$/.test(t)), ["h1", "h2", "h6"]);
  for (const el of Array.from(root.querySelectorAll("h1, h2, h6"))) {
    assertEqual(el.getAttributeNames(), [], el.localName + " attributes");
  }
  assertEqual(root.querySelector("h1")?.textContent, "Title");
});

test("render: prose elements", async () => {
  const root = await render("*em* **strong** `code`\n\n> quote\n\n- one\n- two\n\n1. first\n\n---\n\nline  \nbreak");
  for (const t of ["em", "strong", "code", "blockquote", "ul", "ol", "li", "hr", "br", "p"]) {
    assert(root.querySelector(t) !== null, `<${t}> missing`);
  }
});

test("render: fenced code is highlighted with hljs classes", async () => {
  const root = await render("```js\nconst answer = 42; // note\n```");
  const code = root.querySelector("pre > code")!;
  assertEqual(code.getAttribute("class"), "hljs language-js");
  assert(code.querySelector("span.hljs-keyword") !== null, "keyword span");
  assert(code.querySelector("span.hljs-comment") !== null, "comment span");
  assertEqual(code.textContent, "const answer = 42; // note\n");
});

test("render: fenced code without a language is auto-highlighted", async () => {
  const root = await render("```\nplain text here\n```");
  const cls = root.querySelector("pre > code")?.getAttribute("class") ?? "";
  assert(cls.split(" ").includes("hljs"), "class " + cls);
  assertEqual(root.querySelector("pre > code")?.textContent, "plain text here\n");
});

test("render: fenced code with an unknown language", async () => {
  const root = await render("```nosuchlang\n<b>x</b>\n```");
  assertEqual(root.querySelector("pre > code")?.textContent, "<b>x</b>\n");
  assert(root.querySelector("b") === null, "no b element");
});

test("render: many inline elements in one container (showdown #678 patch)", async () => {
  const ems = Array.from({ length: 14 }, (_, i) => `<em>${i}</em>`).join(" ");
  const root = await render(`<span class="hljs-string">${ems}</span>`);
  assertEqual(root.querySelectorAll("span > em").length, 14);
  assert(!(root.textContent ?? "").includes("¨"), "placeholder leaked: " + root.textContent);
});

test("render: renderMarkdown yields hyperapp children", () => {
  const out = renderMarkdown("hello *world*");
  assertEqual(out.length, 1);
  assert(typeof out[0] === "object", "an element vnode");
});

// ---------------------------------------------------------------------------
// Fallback: a missing or throwing library leaves the raw text as one node.

async function withGlobal(name: string, value: unknown, fn: () => Promise<void>): Promise<void> {
  const g = globalThis as unknown as Record<string, unknown>;
  const saved = g[name];
  g[name] = value;
  try {
    await fn();
  } finally {
    g[name] = saved;
  }
}

async function assertFallback(): Promise<void> {
  const src = "# Title <img src=x onerror=alert(1)>\n\n*x*";
  assertEqual(renderMarkdown(src), [src]);
  const root = await mount(renderMarkdown(src));
  assertEqual(root.childNodes.length, 1, "one node");
  assertEqual(root.firstChild!.nodeType, Node.TEXT_NODE, "a text node");
  assertEqual(root.textContent, src);
  assertEqual(executed(), []);
}

test("fallback: showdown missing", () => withGlobal("showdown", undefined, assertFallback));
test("fallback: highlight.js missing", () => withGlobal("hljs", undefined, assertFallback));
test("fallback: showdown throws", () =>
  withGlobal("showdown", { Converter: class { makeHtml(): string { throw new Error("boom"); } } }, assertFallback));
test("fallback: highlight.js throws", async () => {
  const real = (globalThis as unknown as { hljs: object }).hljs;
  const broken = { ...real, highlight: () => { throw new Error("boom"); }, highlightAuto: () => { throw new Error("boom"); } };
  await withGlobal("hljs", broken, async () => {
    assertEqual(renderMarkdown("```\ncode\n```"), ["```\ncode\n```"]);
  });
});

// ---------------------------------------------------------------------------
// The sanitizer in memory, on DOMParser trees.

function parse(html: string): Node {
  return new DOMParser().parseFromString(html, "text/html").body;
}

test("sanitize: drop, unwrap and keep", () => {
  const got = sanitize(parse(`<p>a<script>s</script><div>b<em onclick=x>c</em></div><!--c--></p>`));
  const want: SafeNode[] = [{
    kind: "el", tag: "p", attrs: {}, children: [
      { kind: "text", text: "a" },
      // <div> cannot nest in <p>: the parser closes the p, so b and c follow it.
    ],
  }, { kind: "text", text: "b" }, {
    kind: "el", tag: "em", attrs: {}, children: [{ kind: "text", text: "c" }],
  }, { kind: "el", tag: "p", attrs: {}, children: [] }];
  assertEqual(got, want);
});

test("sanitize: links", () => {
  assertEqual(sanitize(parse(`<a href="java\tscript:x" title="t" onclick="y">l</a>`)),
    [{ kind: "el", tag: "a", attrs: { title: "t" }, children: [{ kind: "text", text: "l" }] }]);
});

test("sanitize: foreign content is dropped whatever its name", () => {
  assertEqual(sanitize(parse(`<svg><a>svgtext</a></svg><math><a href="https://a">mathtext</a></math>z`)),
    [{ kind: "text", text: "z" }]);
});

test("sanitize: markdownToSafe of plain text", () => {
  assertEqual(markdownToSafe("hi"), [{ kind: "el", tag: "p", attrs: {}, children: [{ kind: "text", text: "hi" }] }]);
});

test("safeHref: table", () => {
  const cases: [string, string | null][] = [
    ["https://a.example/x?y#z", "https://a.example/x?y#z"],
    ["HTTP://A.EXAMPLE", "HTTP://A.EXAMPLE"],
    ["mailto:x@example.com", "mailto:x@example.com"],
    ["//cdn.example/x", "//cdn.example/x"],
    ["#frag", "#frag"],
    ["./a/b", "./a/b"],
    ["a:b", null],
    ["javascript:alert(1)", null],
    [" \t\njavascript:alert(1)", null],
    ["java\u0000script:alert(1)", null],
    ["java\u007fscript:alert(1)", null],
    ["java\u009fscript:alert(1)", null],
    ["\u0001\u0002javascript:alert(1)", null],
    ["data:text/html,x", null],
    ["vbscript:x", null],
    ["ftp://files.example", null],
    ["h\tt\ntps://ok.example", "https://ok.example"],
  ];
  for (const [input, want] of cases) {
    assertEqual(safeHref(input), want, JSON.stringify(input));
  }
});

test("safeClass: keeps highlight and language tokens only", () => {
  assertEqual(safeClass("hljs language-ts"), "hljs language-ts");
  assertEqual(safeClass("hljs-title function_ evil modal"), "hljs-title function_");
  assertEqual(safeClass("  hljs-keyword\thljs-keyword "), "hljs-keyword");
  assertEqual(safeClass("x\" onclick=\"y"), "");
});
