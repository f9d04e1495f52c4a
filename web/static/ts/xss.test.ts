// webtest: no-csp (see below)
//
// The external XSS corpora (shared/testdata/xss, served by the Go harness at
// /testdata/xss/) through the whole pipeline: renderMarkdown, then a live DOM
// via hyperapp. For every payload: only allowlisted tags and attributes, only
// http/https/mailto or relative hrefs, no script runs (alert and friends are
// trapped, and every rendered element is hovered, focused and clicked), and
// the visible text is exactly the text outside the dropped elements, so no
// script or style body shows. The page runs without a CSP, so that a handler
// that survived would really run; the canary test proves the trap works.

import { test, assert, assertEqual, mount, nextFrame } from "./testing.js";
import { violations, installSentinel } from "./testing-invariants.js";
import { renderMarkdown, markdownDocument } from "./markdown-render.js";
import { DROPPED_TAGS } from "./markdown.js";

const BASE = "/testdata/xss/";
const executed = installSentinel();

interface Vector {
  id: string;
  label: string;
  payload: string;
}

async function fetchText(name: string): Promise<string> {
  const res = await fetch(BASE + name);
  if (!res.ok) {
    throw new Error(`GET ${BASE}${name}: ${res.status}`);
  }
  return res.text();
}

function pad(n: number): string {
  return String(n).padStart(3, "0");
}

interface DOMPurifyCase { title: string; payload: string }
interface BluemondayFile { cases: { suite: string; policy: string; in: string }[] }
interface H5SCFile { items: { id: number; name: string; data: string }[] }

const sets: { file: string; prefix: string; vectors: (json: unknown) => Vector[] }[] = [
  {
    file: "dompurify-expect-3.4.14.json",
    prefix: "dompurify",
    vectors: (json) => (json as DOMPurifyCase[]).map((c, i) => ({ id: pad(i), label: c.title, payload: c.payload })),
  },
  {
    file: "bluemonday-xss-vectors.json",
    prefix: "bluemonday",
    vectors: (json) => (json as BluemondayFile).cases.map((c, i) => ({ id: pad(i), label: c.suite, payload: c.in })),
  },
  {
    file: "h5sc-html5sec-vectors.json",
    prefix: "h5sc",
    vectors: (json) => (json as H5SCFile).items.map((c) => ({ id: pad(c.id), label: c.name, payload: c.data })),
  },
];

// The README's table gives each file's number of vectors, as "(223)".
const readme = await fetchText("README.md");
function documentedCount(file: string): number {
  for (const line of readme.split("\n")) {
    if (line.includes("`" + file + "`")) {
      const m = /\((\d+)\)\s*\|\s*$/.exec(line);
      if (m !== null) {
        return Number(m[1]);
      }
    }
  }
  throw new Error(`README.md documents no vector count for ${file}`);
}

const corpus: { prefix: string; file: string; vectors: Vector[] }[] = [];
for (const s of sets) {
  corpus.push({ prefix: s.prefix, file: s.file, vectors: s.vectors(JSON.parse(await fetchText(s.file))) });
}

// All rendered trees stay mounted here until the end, so a late event (an
// image error, a timer) still finds its element and the final test sees it.
const arena = document.createElement("div");
arena.id = "xss-arena";
document.body.appendChild(arena);
// Clicks run handlers, but never follow a link away from the test page.
arena.addEventListener("click", (e) => e.preventDefault(), true);
arena.addEventListener("submit", (e) => e.preventDefault(), true);
const roots: { name: string; root: HTMLElement }[] = [];

async function settle(): Promise<void> {
  await nextFrame();
  await new Promise((resolve) => setTimeout(resolve, 0));
}

// What the sanitizer must show: the text of the parsed document outside the
// dropped elements (and outside foreign content). Unwrapping keeps text.
function expectedText(payload: string): string {
  let doc: Document;
  try {
    doc = markdownDocument(payload);
  } catch {
    return payload; // The fallback shows the raw source.
  }
  const body = doc.body;
  if (body === null) {
    return "";
  }
  for (const el of Array.from(body.querySelectorAll("*"))) {
    if (el.namespaceURI !== "http://www.w3.org/1999/xhtml" || DROPPED_TAGS.has(el.localName)) {
      el.remove();
    }
  }
  return body.textContent ?? "";
}

function poke(root: HTMLElement): void {
  for (const el of Array.from(root.querySelectorAll<HTMLElement>("*"))) {
    for (const type of ["mouseover", "mouseenter", "mousedown", "mouseup", "click", "dblclick"]) {
      el.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true }));
    }
    el.dispatchEvent(new FocusEvent("focus"));
    el.dispatchEvent(new Event("toggle"));
  }
}

test("canary: an inline handler does run on this page, and the trap sees it", () => {
  const probe = document.createElement("div");
  probe.setAttribute("onclick", "alert('canary')");
  document.body.appendChild(probe);
  probe.click();
  probe.remove();
  const calls = executed();
  assertEqual(calls, ["alert(canary)"]);
  (calls as string[]).length = 0;
});

test("corpus: every file has its documented number of vectors", () => {
  for (const set of corpus) {
    assertEqual(set.vectors.length, documentedCount(set.file), set.file);
  }
  assert(DROPPED_TAGS.has("script") && DROPPED_TAGS.has("style"), "script and style are dropped");
});

for (const set of corpus) {
  for (const v of set.vectors) {
    const name = set.prefix + "/" + v.id;
    test(name, async () => {
      const what = `${set.file} ${v.id} (${v.label}) ${JSON.stringify(v.payload)}`;
      const root = await mount(renderMarkdown(v.payload), arena);
      roots.push({ name, root });
      poke(root);
      await settle();
      const bad = violations(root);
      assert(bad.length === 0, `${what}: ${bad.join("; ")}`);
      assertEqual(executed(), [], `${what}: script ran`);
      assertEqual(root.textContent, expectedText(v.payload), `${what}: visible text`);
    });
  }
}

test("corpus: no script ran, and every rendered tree is still safe", async () => {
  await settle();
  await settle();
  assertEqual(executed(), [], "script ran");
  for (const { name, root } of roots) {
    const bad = violations(root);
    assert(bad.length === 0, `${name}: ${bad.join("; ")}`);
  }
  assert(roots.length > 0, "no vector rendered");
});
