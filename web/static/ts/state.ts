// The client's state: what the console shows plus the flow version it
// asks deltas from, its first value, the fixed copy the screens use, and
// the small helpers that name and time runs. Hyperapp actions take a State
// and give the next one (Action); the Client (client.ts) dispatches them.

import { emptyModel, type ModelState } from "./model.js";
import type { Tier } from "./labels.js";
import type { Camera } from "./run-stage/index.js";
import { runTitle } from "./title.js";
import { sameText } from "./result-modal.js";
import type { PendingQuestion } from "./question-modal.js";
import type { Thread } from "./thread-view.js";
import type { QueueEditDraft, QueueItem } from "./queue-view.js";
import type { ChangesState } from "./changes-view.js";
import type { Config, EgressNote, HealthView, McpNote, RunSummary, RunView, Transcript } from "./api.js";

export type Target =
  | { kind: "operation"; id: string }
  // A flow node names its lane and node key too: a tool node is about its
  // own caller's calls.
  | { kind: "participant"; id: string; stack?: string; node?: string }
  | { kind: "role"; id: string; roleKind: "role" | "tool" };

export interface Tip {
  target: Target;
  x: number;
  y: number;
  hideToken: number;
  /** Opened by a click or Enter: stays until closed, and hover does not replace it. */
  pinned: boolean;
  /** The operation whose details the card shows besides its target's: a tool node's latest result. */
  detailsOp?: string;
}

export type Screen = "watch" | "history" | "compose" | "queue";

export interface State {
  config: Config | null;
  tier: Tier;
  screen: Screen;
  view: "flow" | "sequence";
  follow: boolean;
  runId: string;
  run: RunView | null;
  flow: ModelState;
  questions: PendingQuestion[];
  answerDraft: string;
  answerBusy: boolean;
  answerNotice: string;
  health: HealthView | null;
  tip: Tip | null;
  details: { opId: string; text: string } | null;
  resultSeenFor: string;
  copied: boolean;
  interruptOpen: boolean;
  interruptKind: "inquiry" | "plan_modification";
  interruptDraft: string;
  interruptNotice: string;
  planOpen: boolean;
  plan: string | null;
  runs: RunSummary[];
  expanded: string;
  task: string;
  effort: string;
  continuesFrom: string;
  composeBusy: boolean;
  composeNotice: string;
  defaultEffort: string;
  transcript: Transcript | null;
  stream: { roleId: string; text: string } | null;
  sound: boolean;
  thread: Thread | null;
  drawerOpen: boolean;
  notice: string;
  historyNotice: string;
  egress: { last: EgressNote; denied: number } | null;
  mcp: McpNote | null;
  queue: QueueItem[];
  queueTask: string;
  queueEffort: string;
  queueBusy: boolean;
  queueNotice: string;
  queueEdit: QueueEditDraft | null;
  queueExpanded: string;
  queueAnswerFor: string;
  queueAnswerDraft: string;
  queueAnswerBusy: boolean;
  queueAnswerNotice: string;
  authLost: boolean;
  /** The run view's canvas in CSS pixels (measured). */
  stage: { w: number; h: number };
  /** The flow graph's camera, and whether it follows the active node. */
  flowCam: Camera;
  flowFollow: boolean;
  /** The selected flow node (run-stage placedKey), or "". */
  flowSel: string;
  /** The sequence view's scroll position, whether it follows the newest row, and the selected row. */
  seqTop: number;
  seqLeft: number;
  seqFollow: boolean;
  seqSel: number;
  /** A question the operator put off (Esc or "Answer later"); its modal stays hidden. */
  deferred: string;
  /** What the live region last said about the selection. */
  announce: string;
  /** Whether the side panel lists every role instance of a long run. */
  rolesAll: boolean;
  /** The viewed run's change set (read when it has finished), and the file whose diff is open. */
  changes: ChangesState | null;
  changeOpen: string;
  /** Whether the task card shows the whole task. */
  taskOpen: boolean;
}

export const initialState: State = {
  config: null, tier: "friendly", screen: "watch", view: "flow", follow: true,
  runId: "", run: null, flow: emptyModel(), questions: [], answerDraft: "", answerBusy: false, answerNotice: "",
  health: null, tip: null, details: null, resultSeenFor: "", copied: false,
  interruptOpen: false, interruptKind: "inquiry", interruptDraft: "", interruptNotice: "",
  planOpen: false, plan: null, runs: [], expanded: "",
  task: "", effort: "", continuesFrom: "", composeBusy: false, composeNotice: "", defaultEffort: "",
  transcript: null, stream: null, sound: false, thread: null, drawerOpen: false, notice: "", historyNotice: "", egress: null, mcp: null,
  queue: [], queueTask: "", queueEffort: "", queueBusy: false, queueNotice: "", queueEdit: null, queueExpanded: "",
  queueAnswerFor: "", queueAnswerDraft: "", queueAnswerBusy: false, queueAnswerNotice: "",
  authLost: false,
  stage: { w: 0, h: 0 }, flowCam: { x: 0, y: 0, k: 1 }, flowFollow: true, flowSel: "",
  seqTop: 0, seqLeft: 0, seqFollow: true, seqSel: -1, deferred: "", announce: "", rolesAll: false,
  changes: null, changeOpen: "", taskOpen: false,
};

// ---- fixed copy ----

export const HEALTH_COPY: Record<string, string> = {
  auth: "The model provider rejected Guildhall's credentials.",
  rate_limit: "The model provider is limiting how fast Guildhall may send requests.",
  server: "The model provider is returning server errors.",
  timeout: "The model provider is not answering in time.",
  cut_stream: "The model provider's replies are being cut off.",
  malformed: "The model provider is sending replies Guildhall cannot read.",
  context_length: "A request was too long for the model's context window.",
  network: "Guildhall cannot reach the model provider.",
};

export const PAUSE_COPY: Record<string, string> = {
  paused: "This run is paused. It continues from where it stopped when you resume it.",
  suspended: "This run is suspended: the model provider stopped answering. Guildhall keeps checking and resumes the run when the provider is back.",
};

export const STREAM_TAIL = 3000;
/** Event types that change only the flow model, not the run view (GET /api/runs/:id). */
export const FLOW_ONLY_EVENTS: ReadonlySet<string> = new Set([
  "llm_call_start", "tool_call", "tool_result", "context_pressure", "context_compacted", "observe", "egress",
]);

/** The side panel lists at most this many role instances until asked for all. */
export const ROLE_LIST_MAX = 24;
export const STREAM_FLUSH_MS = 200;

/**
 * runLabel is the one-line label of a run, as plain text: its summary, else
 * its task's first line with the Markdown punctuation taken out (title.ts).
 */
export function runLabel(r: RunSummary | null): string {
  if (r === null) {
    return "";
  }
  // A run that stopped (terminated, failed) may have no summary of its own
  // but the words of its result ("The operator terminated the run."): the
  // result says them, and the label names the task instead.
  const said = [r.result?.summary ?? "", r.error?.message ?? r.result?.error?.message ?? ""];
  if (r.status !== "success" && r.summary && said.some((t) => t !== "" && sameText(t, r.summary ?? ""))) {
    return runTitle(null, r.task);
  }
  return runTitle(r.summary, r.task);
}

/** compactTokens writes a token count as the terminal does: 950, 12.3k, 1.2M. */
export function compactTokens(n: number): string {
  const trim = (s: string) => s.replace(".0", "");
  return n >= 1_000_000 ? trim((n / 1e6).toFixed(1) + "M") : n >= 1000 ? trim((n / 1e3).toFixed(1) + "k") : String(n);
}

/** resumable: a run that stopped before finishing and is not the live one. */
export function resumable(r: RunSummary): boolean {
  return !r.active && (r.status === "running" || r.status === "suspended" || r.status === "paused");
}

export function formatTime(iso: string | undefined): string {
  if (!iso) {
    return "";
  }
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function prettyJSON(s: string): string {
  try {
    const v: unknown = JSON.parse(s);
    if (v !== null && typeof v === "object") {
      return JSON.stringify(v, null, 2);
    }
  } catch {
    // as is
  }
  return s;
}

export type Dispatch = (action: unknown, props?: unknown) => unknown;
export type Action<P = unknown> = (s: State, p: P) => State | [State, ...unknown[]];
