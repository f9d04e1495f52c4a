// The render step of the suites that feed the Markdown pipeline hostile
// prose (markdown.test.ts, unclosed.test.ts), written once so that every
// case of both is checked the same way.

import { assertEqual, mount } from "./testing.js";
import { assertSafe } from "./testing-invariants.js";
import { renderMarkdown } from "./markdown-render.js";

/**
 * checkedRenderer returns render: md through renderMarkdown into a live
 * element, which is checked against the allowlist invariants and, with
 * executed (the suite's installSentinel reader), for a script that ran.
 */
export function checkedRenderer(executed: () => readonly string[]): (md: string) => Promise<HTMLElement> {
  return async (md: string): Promise<HTMLElement> => {
    const root = await mount(renderMarkdown(md));
    assertSafe(root, JSON.stringify(md));
    assertEqual(executed(), [], "no script ran");
    return root;
  };
}
