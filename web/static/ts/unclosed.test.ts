// webtest: no-csp (hostile markup must meet a page where a surviving handler would run)
//
// One unclosed element in agent prose must not hide the rest of it: the
// pipeline (html-repair.ts) neither executes nor swallows. Whatever the
// sanitizer drops, the text after it stays. Every case renders through
// renderMarkdown into a live element and is checked against the allowlist
// invariants and the script sentinel, then for the text after the tag.

import { test, assert, assertEqual } from "./testing.js";
import { installSentinel } from "./testing-invariants.js";
import { checkedRenderer } from "./testing-markdown.js";
import { tokenize } from "./html-repair.js";

const executed = installSentinel();
const render = checkedRenderer(executed);

function visible(root: HTMLElement, s: string): boolean {
  return (root.textContent ?? "").includes(s);
}

// Every element the sanitizer drops with its content, opened and never closed.
const DROPPED = [
  "textarea", "noscript", "style", "title", "xmp", "plaintext", "script", "iframe", "noembed", "noframes",
  "template", "select", "option", "optgroup", "datalist", "button", "svg", "math", "object", "audio", "video",
  "canvas", "dialog", "form", "portal", "picture", "map", "applet", "frameset",
];

for (const tag of DROPPED) {
  for (const [shape, md] of [
    ["own paragraph", `Before the tag.\n\n<${tag}>\n\nAfter the tag, with **bold** text.\n\n- a list item`],
    ["inline", `Before <${tag}> after the tag, with **bold** text.\n\nNext paragraph.`],
    ["upper case with attributes", `Before <${tag.toUpperCase()} title="a>b" data-x='c'> after the tag, with **bold** text.`],
  ] as const) {
    test(`unclosed <${tag}> (${shape}) leaves the text after it`, async () => {
      const root = await render(md);
      assert(visible(root, "after the tag") || visible(root, "After the tag"), `the text after <${tag}> is gone: ${JSON.stringify(root.textContent)}`);
      assert(visible(root, "Before"), "the text before is gone");
      assert(root.querySelector("strong") !== null, "the Markdown after the tag did not render");
    });
  }
}

test("a closed element still loses its content; the text after it stays", async () => {
  for (const tag of ["textarea", "style", "title", "xmp", "noscript", "script", "button", "select", "template"]) {
    const root = await render(`Before <${tag}>HIDDEN-${tag}</${tag}> after.`);
    assert(!visible(root, "HIDDEN-" + tag), `<${tag}>'s content became visible`);
    assert(visible(root, "after."), `the text after a closed <${tag}> is gone`);
  }
});

test("a closed raw-text element then an unclosed one: the first's content stays hidden", async () => {
  const root = await render("<style>.HIDDEN{}</style> one <textarea> two **three**");
  assert(!visible(root, "HIDDEN"), "the closed style's body is visible");
  assert(visible(root, "two") && root.querySelector("strong")?.textContent === "three", "text after the textarea is gone");
});

test("several unclosed elements in a row all give the text back", async () => {
  const root = await render("a <textarea> b <style> c <title> d <xmp> e <noscript> f <plaintext> g **end**");
  for (const s of ["a", "b", "c", "d", "e", "f", "g"]) {
    assert(visible(root, " " + s + " ") || visible(root, s + " "), `${s} is gone: ${JSON.stringify(root.textContent)}`);
  }
  assertEqual(root.querySelector("strong")?.textContent, "end");
});

test("an unclosed script followed by a handler neither runs nor hides the rest", async () => {
  const root = await render(`x <script>alert(1)\n\n<img src=x onerror="window.__executed.push('img')"> tail **bold**`);
  assert(root.querySelector("img") === null && root.querySelector("script") === null, "an element survived");
  assert(visible(root, "tail"), "the text after the script is gone");
});

test("an unclosed tag cannot join the text around it into a new tag", async () => {
  const root = await render(`<<textarea>script>window.__executed.push('joined')<</textarea>/script> after`);
  assert(root.querySelector("script") === null, "a script element appeared");
  assert(visible(root, "after"), "the text after is gone");
});

test("self-closing syntax does not close an HTML element, and the rest still shows", async () => {
  const root = await render("a <textarea/> b <button/> c *d*");
  assert(visible(root, "b") && visible(root, "c"), `text lost: ${JSON.stringify(root.textContent)}`);
  assertEqual(root.querySelector("em")?.textContent, "d");
});

test("an end tag hidden in an attribute does not count as closing", async () => {
  const root = await render(`<button title="</button>"> after the button **b**`);
  assert(visible(root, "after the button"), `the text is gone: ${JSON.stringify(root.textContent)}`);
});

test("an unclosed comment or bogus comment does not hide the rest", async () => {
  for (const opener of ["<!--", "<!", "<?", "<!DOCTYPE html", "</3"]) {
    const root = await render(`before ${opener} after the opener **b**`);
    assert(visible(root, "after the opener"), `${opener}: the text is gone: ${JSON.stringify(root.textContent)}`);
  }
  const closed = await render("before <!-- a comment --> after");
  assert(!visible(closed, "a comment") && visible(closed, "after"), "a closed comment changed meaning");
});

test("a tag cut off inside an attribute value leaves the text visible", async () => {
  const root = await render(`before <a href="https://x.example title=t> after the tag\n\nnext **b**`);
  assert(visible(root, "after the tag") && visible(root, "next"), `the text is gone: ${JSON.stringify(root.textContent)}`);
  assert(root.querySelector("strong")?.textContent === "b", "Markdown after it did not render");
});

test("a guessed sentinel in the prose changes nothing", async () => {
  const root = await render("<!--guildhall-end-00000000000000000000000000000000--> x <textarea> after **b**");
  assert(visible(root, "after"), "the text after the textarea is gone");
});

test("unclosed elements inside foreign content give the text back", async () => {
  const root = await render("<svg><foreignObject><textarea> after the svg **b**");
  assert(visible(root, "after the svg"), `the text is gone: ${JSON.stringify(root.textContent)}`);
  assert(root.querySelector("svg, textarea, foreignObject") === null, "a dropped element survived");
});

test("markup in code stays literal text", async () => {
  const root = await render("Use `<textarea>` here.\n\n```html\n<style>\n<title>\n```\n\nAfter the code.");
  assertEqual(root.querySelector("p code")?.textContent, "<textarea>");
  assert((root.querySelector("pre code")?.textContent ?? "").includes("<style>"), "the fenced block lost its text");
  assert(visible(root, "After the code."), "the text after the code is gone");
});

test("a long prose with many unclosed tags keeps every word", async () => {
  const words: string[] = [];
  let md = "";
  for (let i = 0; i < 120; i++) {
    words.push("word" + i);
    md += `word${i} <${DROPPED[i % DROPPED.length]}> `;
  }
  const root = await render(md);
  for (const w of words) {
    assert(visible(root, w), `${w} is gone`);
  }
});

test("tokenize: tags in comments, attribute values and raw text are not tags", () => {
  const html = `<p title="<textarea>">a</p><!-- <style> --><style><textarea></style><textarea x='</textarea'>`;
  const starts = tokenize(html).filter((t) => t.kind === "start").map((t) => t.name);
  assertEqual(starts, ["p", "style", "textarea"]);
  const last = tokenize(html).at(-1)!;
  assertEqual(html.slice(last.start, last.end), "<textarea x='</textarea'>");
});

test("tokenize: a tag cut off at the end of the input", () => {
  const toks = tokenize(`ok <a href="x`);
  assertEqual(toks.map((t) => t.kind), ["eof-in-tag"]);
  assertEqual(toks[0].start, 3);
});
