// The Client: what every part of the console shares once it is mounted —
// dispatching actions, reading the state, calling the API — and the tables
// of actions, fetchers and views the parts make. app.ts builds it; each
// part (actions.ts, queue-actions.ts, stage.ts, fetchers.ts, the views)
// is a factory over it, and reaches the others through it at call time, so
// the parts may name each other without an import cycle.

import type { Reply } from "./api.js";
import type { Action, State } from "./state.js";
import type { Actions } from "./actions.js";
import type { QueueActions } from "./queue-actions.js";
import type { Stage } from "./stage.js";
import type { Fetchers } from "./fetchers.js";

/** The Performance API bookkeeping of one flow update (window.__ghPerf). */
export interface Perf {
  on: boolean;
  merge: number;
  render: number;
  view: number;
}

export interface Client {
  send: <P>(action: Action<P>, payload?: P) => unknown;
  getState: () => State;
  api: <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<Reply<T>>;
  /** effect is a hyperapp effect that runs fn. */
  effect: (fn: () => void) => unknown;
  /** The sound of a new question, made on the click that turns sound on. */
  audio: AudioContext | null;
  perf: Perf;
  act: Actions;
  queue: QueueActions;
  stage: Stage;
  fetch: Fetchers;
}
