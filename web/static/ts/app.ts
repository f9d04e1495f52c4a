// The product client: one screen (a top bar and the Watch / History /
// Compose / Queue screens) over the live API. It keeps what it shows plus the flow
// version it asks deltas from; the server holds the run. This file mounts
// it: it makes the Client (client.ts) and its parts, and draws the page.
//
// Text safety: agent prose (task text, result summaries, error messages,
// question text and context, operation details, plan, inquiry answers,
// streamed replies, transcript messages) reaches the DOM only through
// prose() → renderMarkdown (the sanitized pipeline). Every machine field
// (ids, statuses, counts, times, paths, tool names, the one-line summary,
// the operator's own answers and messages) is a text node. The
// task-identity header (the generated thread summary or the deterministic
// identity and latest human text) is text only; the task-history drawer
// and the Queue screen follow the same split (thread-view.ts,
// queue-view.ts).
//
// The parts: api.ts (the API's shapes and URLs), state.ts (the State),
// actions.ts and queue-actions.ts (what the operator and the server do to
// it), stage.ts (the flow graph and sequence view), fetchers.ts (the reads
// and the event stream), chrome.ts, watch-view.ts and screens.ts (the
// views).

import { app, h, type VNode } from "./hyperapp.js";
import { LabelResolver } from "./labels.js";
import { renderRunNote } from "./outcome.js";
import { FocusKeeper } from "./modal.js";
import { request, type Reply } from "./api.js";
import { initialState, type Action, type Dispatch, type State } from "./state.js";
import type { Client } from "./client.js";
import { makeActions } from "./actions.js";
import { makeQueueActions } from "./queue-actions.js";
import { makeStage } from "./stage.js";
import { makeFetchers } from "./fetchers.js";
import { makeChrome } from "./chrome.js";
import { makeWatchView } from "./watch-view.js";
import { makeScreens } from "./screens.js";

/** start mounts the client on node. */
export function start(node: Element): void {
  let dispatch: Dispatch = () => undefined;
  const send = <P>(action: Action<P>, payload?: P) => dispatch(action, payload);
  const getState = (): State => {
    let out = initialState;
    dispatch((s: State) => {
      out = s;
      return s;
    });
    return out;
  };
  // A 401 means this tab's access cookie is not (or no longer) this
  // server's: Guildhall restarted, or the address was opened without the
  // printed URL. Every later request would fail the same way, so say so once.
  const api = async <T>(path: string, init?: { method?: string; body?: unknown }): Promise<Reply<T>> => {
    const res = await request<T>(path, init);
    if (res.status === 401 && !getState().authLost) {
      send(c.act.Patch, { authLost: true });
    }
    return res;
  };
  const effect = (fn: () => void): unknown => [(_d: unknown, f: () => void) => f(), fn];
  // With window.__ghPerf set (the browser benchmark sets it), each flow
  // update is timed with the Performance API: the merge of the envelope,
  // then the frame it produced (view, patch, style and layout), recorded as
  // one "gh:frame" measure whose duration is their sum (the wait for the
  // next animation frame between them is not work, so it is left out).
  const perf = { on: (globalThis as { __ghPerf?: boolean }).__ghPerf === true, merge: -1, render: -1, view: -1 };
  const c = { send, getState, api, effect, audio: null, perf } as unknown as Client;
  c.act = makeActions(c);
  c.queue = makeQueueActions(c);
  c.stage = makeStage(c);
  c.fetch = makeFetchers(c);
  const stage = c.stage;
  const { updateChrome, authBanner, healthBanner, mcpLine, egressLine, topBar } = makeChrome(c);
  const { watchScreen, watchModals } = makeWatchView(c);
  const { historyScreen, composeScreen, queueScreen } = makeScreens(c);

  const focus = new FocusKeeper();
  let observed: Element | null = null;
  const resize = new ResizeObserver((entries) => {
    for (const e of entries) {
      const w = Math.round(e.contentRect.width);
      const hgt = Math.round(e.contentRect.height);
      const cur = getState().stage;
      if (w !== cur.w || hgt !== cur.h) {
        // A phone starts a little zoomed out, so a node and its callee fit;
        // so does a window narrowed to a phone's width.
        const first = (cur.w === 0 || cur.w >= 600) && w < 600 && getState().flowCam.k === 1;
        send(c.act.Patch, first ? { stage: { w, h: hgt }, flowCam: { ...getState().flowCam, k: 0.8 } } : { stage: { w, h: hgt } });
      }
    }
  });

  // afterRender keeps the live DOM in step with what was just drawn: the
  // canvas size is measured, the sequence view's scroll position follows
  // the newest row or a selection, and focus moves into (and back out of)
  // a modal. It runs as a microtask after hyperapp's patch.
  function afterRender(s: State): void {
    const canvas = document.querySelector(".stage-canvas");
    if (canvas !== observed) {
      if (observed !== null) {
        resize.unobserve(observed);
      }
      observed = canvas;
      if (canvas !== null) {
        resize.observe(canvas);
      }
    }
    const seq = document.querySelector<HTMLElement>(".seq-scroll");
    if (seq !== null) {
      const to = stage.takeSeqScroll();
      if (to !== null) {
        seq.scrollTop = to;
      } else if (s.seqFollow) {
        const bottom = seq.scrollHeight - seq.clientHeight;
        if (Math.abs(seq.scrollTop - bottom) > 1) {
          seq.scrollTop = bottom;
        }
      }
    }
    focus.sync();
    if (perf.merge >= 0 && perf.render >= 0) {
      const patched = performance.now();
      void document.body.offsetHeight; // style and layout of this frame, inside the measure
      const render = performance.now() - perf.render;
      performance.measure("gh:frame", {
        start: perf.render - perf.merge, duration: perf.merge + render,
        detail: { merge: perf.merge, view: perf.view - perf.render, patch: patched - perf.view, layout: performance.now() - patched },
      });
      perf.merge = -1;
      perf.render = -1;
    }
  }

  function view(s: State): VNode {
    if (perf.merge >= 0) {
      perf.render = performance.now();
    }
    updateChrome(s);
    queueMicrotask(() => afterRender(s));
    const r = new LabelResolver(s.config?.labels, s.tier);
    const tree = h("div", { class: "app" }, [
      h("header", { class: "page-head" }, [
        h("a", { class: "skip-link", href: "#main" }, "Skip to the content"),
        topBar(s),
        h("div", { class: "banners" }, [authBanner(s), healthBanner(s), mcpLine(s), egressLine(s), renderRunNote(s.run !== null && s.run.runId === s.runId ? s.run.notes : undefined)]),
      ]),
      s.screen === "watch" ? watchScreen(s, r) : s.screen === "history" ? historyScreen(s)
        : s.screen === "queue" ? queueScreen(s) : composeScreen(s),
      ...(s.screen === "watch" ? watchModals(s, r) : []),
    ]);
    if (perf.render >= 0) {
      perf.view = performance.now();
    }
    return tree;
  }

  app<State>({
    init: [initialState, effect(() => send(c.act.Init, null))],
    view,
    node,
    middleware: (d: unknown) => {
      dispatch = d as Dispatch;
      return d;
    },
  });
}

const root = document.getElementById("app");
if (root !== null) {
  start(root);
}
