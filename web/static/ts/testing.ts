// A tiny in-browser test runner for *.test.ts files, driven by the Go
// harness in web/webtest. A test file registers tests with test(); the
// harness page imports the file, then calls run(), and reads the results from
// window.__results ({done, tests: [{name, ok, error}]}), one Go subtest each.
// Tests run one after another; a test may be async.

import { app, h, type Child } from "./hyperapp.js";

export type TestFn = () => void | Promise<void>;

export interface TestResult {
  name: string;
  ok: boolean;
  error?: string;
}

interface Registry {
  tests: { name: string; fn: TestFn }[];
  run: () => Promise<void>;
}

interface WebtestGlobal {
  __webtest?: Registry;
  __results?: { done: boolean; tests: TestResult[]; loadError?: string };
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    return err.stack !== undefined && err.stack.includes(err.message) ? err.stack : err.name + ": " + err.message;
  }
  return String(err);
}

// The registry lives on the page's global object, so that every bundle that
// imports this module (each has its own copy) registers into one list.
function registry(): Registry {
  const g = globalThis as WebtestGlobal;
  if (g.__webtest === undefined) {
    const reg: Registry = {
      tests: [],
      run: async () => {
        const results: TestResult[] = [];
        const seen = new Set<string>();
        for (const { name, fn } of reg.tests) {
          if (seen.has(name)) {
            results.push({ name, ok: false, error: "duplicate test name" });
            continue;
          }
          seen.add(name);
          try {
            await fn();
            results.push({ name, ok: true });
          } catch (err) {
            results.push({ name, ok: false, error: describe(err) });
          }
        }
        g.__results = { done: true, tests: results };
      },
    };
    g.__webtest = reg;
  }
  return g.__webtest;
}

/** test registers a test; call it at the top level of a *.test.ts file. */
export function test(name: string, fn: TestFn): void {
  registry().tests.push({ name, fn });
}

export class AssertionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AssertionError";
  }
}

/** assert fails the test with message unless cond holds. */
export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) {
    throw new AssertionError(message);
  }
}

/** assertEqual compares JSON-shaped values deeply. */
export function assertEqual<T>(actual: T, expected: T, message = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) {
    throw new AssertionError((message !== "" ? message + ": " : "") + "got " + a + ", want " + e);
  }
}

/** nextFrame resolves after the next animation frame (hyperapp renders then). */
export function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

/**
 * mount renders children with hyperapp's app() into a fresh live element
 * appended to parent, and resolves with that element once hyperapp has drawn
 * it. The element stays in the document; remove it when done if it matters.
 */
export async function mount(children: readonly Child[], parent: Element = document.body): Promise<HTMLElement> {
  const host = document.createElement("div");
  const slot = document.createElement("div");
  host.appendChild(slot);
  parent.appendChild(host);
  app({ init: {}, view: () => h("div", { class: "webtest-root" }, [...children]), node: slot });
  for (let frame = 0; frame < 20; frame++) {
    await nextFrame();
    const root = host.firstElementChild;
    if (root !== null && root.className === "webtest-root") {
      return root as HTMLElement;
    }
  }
  throw new AssertionError("hyperapp did not render within 20 frames");
}
