// prose() is the one way the client shows agent prose: a block rendered by
// the shared sanitized Markdown pipeline (markdown-render.ts → markdown.ts
// allowlist). The pipeline's output (the sanitized node tree) is cached by
// source text, so a block is converted once and not on every frame of a
// live run; each frame builds fresh vnodes from it, which hyperapp diffs to
// nothing when the text is unchanged.
//
// This replaces hyperapp's Lazy: hyperapp 2.0.0 compares a Lazy node with
// whatever vnode sat at its place before and throws when that one was not a
// Lazy (a "waiting" line that becomes an answer, say), which breaks the
// whole page.

import { h, type VNode } from "./hyperapp.js";
import { markdownToSafe, toVNodes } from "./markdown-render.js";
import type { SafeNode } from "./markdown.js";

/** How many distinct prose blocks the cache keeps (least recently used go first). */
const CACHE_MAX = 512;

// cache maps a source to its sanitized nodes, or to null when the pipeline
// failed (the block then shows its raw source as one text node).
const cache = new Map<string, readonly SafeNode[] | null>();

function pipeline(src: string): readonly SafeNode[] | null {
  const hit = cache.get(src);
  if (hit !== undefined) {
    cache.delete(src); // refresh its place in the order
    cache.set(src, hit);
    return hit;
  }
  let out: readonly SafeNode[] | null;
  try {
    out = markdownToSafe(src);
  } catch {
    out = null;
  }
  cache.set(src, out);
  if (cache.size > CACHE_MAX) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) {
      cache.delete(oldest);
    }
  }
  return out;
}

/** prose renders src (agent Markdown) as a sanitized block with class cls. */
export function prose(src: string, cls = "md"): VNode {
  const safe = pipeline(src);
  return h("div", { class: cls }, safe === null ? [src] : toVNodes(safe));
}
