// prose() is the one way the client shows agent prose: a block rendered by
// the shared sanitized Markdown pipeline (markdown-render.ts → markdown.ts
// allowlist). It is a hyperapp Lazy node keyed by the source string, so a
// block is converted once and re-rendered only when its text changes, not
// on every frame of a live run.

// @ts-ignore -- plain JavaScript without type declarations; typed below.
import * as hyperapp from "../vendor/hyperapp.js";
import { h, type VNode } from "./hyperapp.js";
import { renderMarkdown } from "./markdown-render.js";

interface ProseProps {
  view: (p: ProseProps) => VNode;
  src: string;
  cls: string;
}

const lazy: (props: ProseProps) => VNode = hyperapp.Lazy;

function proseView(p: ProseProps): VNode {
  return h("div", { class: p.cls }, renderMarkdown(p.src));
}

/** prose renders src (agent Markdown) as a sanitized block with class cls. */
export function prose(src: string, cls = "md"): VNode {
  return lazy({ view: proseView, src, cls });
}
