// Typed access to the vendored hyperapp@2.0.0 (../vendor/hyperapp.js, an ES
// module served verbatim). web/assets keeps the import external, so every
// bundle shares the one vendored file instead of inlining a copy.
//
// hyperapp 2.0.0 has no text() export: a string child is its text node. h()
// turns each string child into a text vnode, and a view may return a string.

// @ts-ignore -- plain JavaScript without type declarations; typed below.
import * as hyperapp from "../vendor/hyperapp.js";

/** A hyperapp virtual node. Its fields are hyperapp's business. */
export interface VNode {
  readonly name: string;
  readonly props: Readonly<Record<string, unknown>>;
  readonly children: readonly VNode[];
}

/** A child in h(): a vnode, a string (a text node), or nothing. */
export type Child = VNode | string | null | undefined | boolean | readonly Child[];

/** Props of an element: attributes and DOM properties, plus on* actions. */
export type Props = Readonly<Record<string, unknown>>;

/** What app() takes; init and actions follow hyperapp 2.0.0's conventions. */
export interface AppProps<S> {
  init: S | unknown;
  view: (state: S) => VNode | string;
  node: Node;
  subscriptions?: (state: S) => unknown;
  middleware?: (dispatch: unknown) => unknown;
}

/** h builds an element vnode; string children become text nodes. */
export const h: (tag: string, props?: Props | null, ...children: Child[]) => VNode = hyperapp.h;

/** app mounts a hyperapp program on node (which it replaces). */
export const app: <S>(props: AppProps<S>) => void = hyperapp.app;

/** text is the text child for value: in hyperapp 2.0.0, the string itself. */
export function text(value: string): string {
  return value;
}
