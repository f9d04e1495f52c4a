// The product client: one screen (a top bar and the Watch / History /
// Compose / Queue screens) over the live API. It keeps what it shows plus the flow
// version it asks deltas from; the server holds the run.
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

import { app, h, type VNode, type Child } from "./hyperapp.js";
import { prose } from "./prose.js";
import { emptyModel, merge, terminalStatus, type Envelope, type ModelState } from "./model.js";
import { LabelResolver, TIERS, deriveCostStrip, deriveNowCaption, type LabelSet, type Tier } from "./labels.js";
import {
  COL_GAP, DETAIL_ZOOM, NODE_W, PAD, SEQ_HEAD_H, SEQ_ROW_H, activeNodeKey, clampZoom, describeNode, fitCamera, layoutFlow, messageText, newFlowIndex,
  placedKey, renderFlow, renderSequenceBody, renderSequenceHeader, rowTop, sequenceColumns, sequenceHeight, showNode, step, syncFlowIndex,
  toolNodeAt, typeSlots, zoomAt, type Camera, type Direction, type FlowLayout, type Placed, type TreeNode,
} from "./run-stage/index.js";
import { renderRunNote } from "./outcome.js";
import { FocusKeeper, onFocusin, onKeydown } from "./modal.js";
import { plainLine, runTitle } from "./title.js";
import {
  deriveOperationTooltip, deriveParticipantTooltip, deriveRoleTooltip, renderTooltip, type TooltipContent,
} from "./tooltip.js";
import { renderQuestionModal, type PendingQuestion } from "./question-modal.js";
import { renderResultModal, type RunError, type RunResult } from "./result-modal.js";
import { renderTaskIdentity, renderThreadBody, type Thread } from "./thread-view.js";
import { parkedQuestion, renderQueue, type QueueEditDraft, type QueueItem } from "./queue-view.js";

// ---- API shapes (see docs/api.md) ----

interface Config {
  version: string;
  entryRole: string;
  labels: LabelSet;
  efforts: string[];
  logLevels: string[];
  queue: boolean;
  setup: string[];
}

// A change of an MCP server's state (mcp_server events).
interface McpNote {
  runId: string;
  server: string;
  state: string;
  message?: string;
  tools?: number;
  roleId?: string;
}

// An egress decision of the run's sandbox proxy or web tools.
interface EgressNote {
  runId: string;
  host: string;
  port: number;
  allowed: boolean;
  via: string;
  reason?: string;
  roleId?: string;
}

interface HealthView {
  state: string;
  category?: string;
  consecutiveFailures: number;
  nextProbeAt?: string;
  suspendedRunId?: string;
}

interface RunSummary {
  runId: string;
  task: string;
  effort: string;
  status: string;
  startedAt: string;
  endedAt?: string;
  continuesFrom?: string;
  summary: string | null;
  result?: RunResult | null;
  error?: RunError | null;
  active: boolean;
}

interface QuestionRecord {
  id: string;
  question: string;
  answered: boolean;
  answer?: string;
  askedAt: string;
}

interface InterruptRecord {
  trigger: string;
  message?: string;
  at: string;
  resolved: boolean;
  action?: string;
  answer?: string;
  dropped?: string;
}

interface RoleView {
  id: string;
  role: string;
  status: string;
  invocations: number;
}

interface RunView extends RunSummary {
  suspension?: { category: string; suspendedAt: string };
  roles: RoleView[];
  currentActivity: string;
  questions: QuestionRecord[];
  interrupts: InterruptRecord[];
  planModifications: { message: string; targetRole: string; at: string }[];
  interruptPending: boolean;
  /** The model answered without any tool call in the whole run. */
  noAction?: boolean;
  /** What the run told the operator about its setup (tool calls written as text), the program's words. */
  notes?: string[];
}

interface TranscriptMessage {
  kind: string;
  role: string;
  content: string;
  truncated?: boolean;
  toolCalls?: { id: string; name: string; arguments: string }[];
  tool?: string;
  resultKind?: string;
}

interface Transcript {
  runId: string;
  roleId: string;
  role: string;
  messages: TranscriptMessage[];
  omitted: number;
}

type Target =
  | { kind: "operation"; id: string }
  // A flow node names its lane and node key too: a tool node is about its
  // own caller's calls.
  | { kind: "participant"; id: string; stack?: string; node?: string }
  | { kind: "role"; id: string; roleKind: "role" | "tool" };

interface Tip {
  target: Target;
  x: number;
  y: number;
  hideToken: number;
  /** Opened by a click or Enter: stays until closed, and hover does not replace it. */
  pinned: boolean;
  /** The operation whose details the card shows besides its target's: a tool node's latest result. */
  detailsOp?: string;
}

type Screen = "watch" | "history" | "compose" | "queue";

interface State {
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
}

const initialState: State = {
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
};

// ---- fixed copy ----

const HEALTH_COPY: Record<string, string> = {
  auth: "The model provider rejected Guildhall's credentials.",
  rate_limit: "The model provider is limiting how fast Guildhall may send requests.",
  server: "The model provider is returning server errors.",
  timeout: "The model provider is not answering in time.",
  cut_stream: "The model provider's replies are being cut off.",
  malformed: "The model provider is sending replies Guildhall cannot read.",
  context_length: "A request was too long for the model's context window.",
  network: "Guildhall cannot reach the model provider.",
};

const PAUSE_COPY: Record<string, string> = {
  paused: "This run is paused. It continues from where it stopped when you resume it.",
  suspended: "This run is suspended: the model provider stopped answering. Guildhall keeps checking and resumes the run when the provider is back.",
};

const STREAM_TAIL = 3000;
/** Event types that change only the flow model, not the run view (GET /api/runs/:id). */
const FLOW_ONLY_EVENTS: ReadonlySet<string> = new Set([
  "llm_call", "llm_call_start", "tool_call", "tool_result", "context_pressure", "context_compacted", "observe", "egress",
]);

/** The side panel lists at most this many role instances until asked for all. */
const ROLE_LIST_MAX = 24;
const STREAM_FLUSH_MS = 200;

/**
 * runLabel is the one-line label of a run, as plain text: its summary, else
 * its task's first line with the Markdown punctuation taken out (title.ts).
 */
function runLabel(r: RunSummary | null): string {
  if (r === null) {
    return "";
  }
  return runTitle(r.summary, r.task);
}

/** resumable: a run that stopped before finishing and is not the live one. */
function resumable(r: RunSummary): boolean {
  return !r.active && (r.status === "running" || r.status === "suspended" || r.status === "paused");
}

function formatTime(iso: string | undefined): string {
  if (!iso) {
    return "";
  }
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function prettyJSON(s: string): string {
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

function enc(s: string): string {
  return encodeURIComponent(s);
}

interface Reply<T> {
  ok: boolean;
  status: number;
  body: T;
}

/**
 * request calls the API. The server's access cookie (HttpOnly, set on the
 * first visit of the printed URL) rides along on every same-origin request,
 * so the client never sees, stores or sends the token itself.
 */
async function request<T>(path: string, init?: { method?: string; body?: unknown }): Promise<Reply<T>> {
  const opts: RequestInit = { method: init?.method ?? "GET", credentials: "same-origin", headers: {} };
  if (init?.body !== undefined) {
    opts.headers = { "Content-Type": "application/json" };
    opts.body = JSON.stringify(init.body);
  }
  try {
    const res = await fetch(path, opts);
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { ok: res.ok, status: res.status, body: body as T };
  } catch {
    return { ok: false, status: 0, body: null as T };
  }
}

type Dispatch = (action: unknown, props?: unknown) => unknown;
type Action<P = unknown> = (s: State, p: P) => State | [State, ...unknown[]];

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
      send(Patch, { authLost: true });
    }
    return res;
  };
  // Fetch bookkeeping, not view state.
  let flowBusy = false;
  let flowDirty = false;
  let runTimer: number | undefined;
  let tipSeq = 0;
  let audio: AudioContext | null = null;
  const seenQuestions = new Set<string>();
  // The flow graph's incremental index of the viewed model (run-stage), and
  // the camera the last frame drew (the follow camera is derived per frame).
  const flowIndex = newFlowIndex();
  let lastCam: Camera = initialState.flowCam;
  // Pointer gestures on the flow graph: the pointers down, and the camera
  // and positions a drag or pinch started from.
  const pointers = new Map<number, { x: number; y: number }>();
  let gesture: { cam: Camera; x: number; y: number; dist: number; moved: boolean } | null = null;
  let dragged = false;
  const focus = new FocusKeeper();
  let observed: Element | null = null;
  const resize = new ResizeObserver((entries) => {
    for (const e of entries) {
      const w = Math.round(e.contentRect.width);
      const hgt = Math.round(e.contentRect.height);
      const cur = getState().stage;
      if (w !== cur.w || hgt !== cur.h) {
        // A phone starts a little zoomed out, so a node and its callee fit.
        const first = cur.w === 0 && w < 600 && getState().flowCam.k === 1;
        send(Patch, first ? { stage: { w, h: hgt }, flowCam: { ...getState().flowCam, k: 0.8 } } : { stage: { w, h: hgt } });
      }
    }
  });

  const effect = (fn: () => void): unknown => [(_d: unknown, f: () => void) => f(), fn];

  // ---- fetchers ----

  async function refreshFlow(): Promise<void> {
    if (flowBusy) {
      flowDirty = true;
      return;
    }
    flowBusy = true;
    try {
      do {
        flowDirty = false;
        const s = getState();
        if (s.runId === "") {
          break;
        }
        const version = s.flow.runId === s.runId ? s.flow.version : 0;
        const res = await api<Envelope>(`/api/runs/${enc(s.runId)}/flow?version=${version}`);
        if (res.ok && res.body !== null) {
          send(FlowLoaded, { runId: s.runId, env: res.body });
        }
      } while (flowDirty);
    } finally {
      flowBusy = false;
    }
  }

  async function refreshRun(): Promise<void> {
    const id = getState().runId;
    if (id === "") {
      return;
    }
    const res = await api<RunView>(`/api/runs/${enc(id)}`);
    if (res.ok) {
      send(RunLoaded, res.body);
    }
  }

  function scheduleRun(): void {
    if (runTimer !== undefined) {
      return;
    }
    runTimer = window.setTimeout(() => {
      runTimer = undefined;
      void refreshRun();
    }, 250);
  }

  async function refreshQuestions(): Promise<void> {
    const res = await api<{ questions: PendingQuestion[] }>("/api/questions");
    if (res.ok && res.body !== null) {
      const fresh = res.body.questions.filter((q) => !seenQuestions.has(q.id));
      fresh.forEach((q) => seenQuestions.add(q.id));
      if (fresh.length > 0 && getState().sound) {
        beep();
      }
      send(QuestionsLoaded, res.body.questions);
    }
  }

  async function refreshHealth(): Promise<void> {
    const res = await api<HealthView>("/api/health");
    if (res.ok) {
      send(Patch, { health: res.body });
    }
  }

  async function refreshRuns(): Promise<void> {
    const res = await api<{ runs: RunSummary[] }>("/api/runs");
    if (res.ok && res.body !== null) {
      send(Patch, { runs: res.body.runs });
    }
  }

  async function refreshThread(): Promise<void> {
    const id = getState().runId;
    if (id === "") {
      return;
    }
    const res = await api<Thread>(`/api/runs/${enc(id)}/thread`);
    if (res.ok && res.body !== null && res.body.runId === getState().runId) {
      send(Patch, { thread: res.body });
    }
  }

  async function refreshQueue(): Promise<void> {
    const res = await api<{ items: QueueItem[] }>("/api/queue");
    if (res.ok && res.body !== null) {
      send(QueueLoaded, res.body.items);
    } else if (res.status === 503) {
      send(Patch, { queueNotice: "The queue file is malformed, so the queue is stopped. Repair it or run `guildhall queue reset`." });
    }
  }

  async function loadDetails(runId: string, opId: string): Promise<void> {
    const res = await api<{ details?: string }>(`/api/runs/${enc(runId)}/flow?operation=${enc(opId)}`);
    if (res.ok && res.body !== null) {
      send(DetailsLoaded, { opId, text: res.body.details ?? "" });
    }
  }

  async function loadPlan(runId: string): Promise<void> {
    const res = await api<{ content: string | null }>(`/api/runs/${enc(runId)}/plan`);
    send(Patch, { plan: res.ok && res.body !== null ? res.body.content ?? "" : "" });
  }

  async function loadTranscript(runId: string, roleId: string): Promise<void> {
    const res = await api<Transcript>(`/api/runs/${enc(runId)}/transcript?roleId=${enc(roleId)}`);
    if (res.ok) {
      send(Patch, { transcript: res.body });
    }
  }

  function refreshAll(): void {
    void refreshFlow();
    void refreshRun();
    void refreshQuestions();
    void refreshHealth();
    void refreshRuns();
    void refreshThread();
    if (getState().config?.queue) {
      void refreshQueue();
    }
  }

  function beep(): void {
    if (audio === null) {
      return;
    }
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = "sine";
    osc.frequency.value = 660;
    gain.gain.setValueAtTime(0.0001, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.08, audio.currentTime + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.35);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.4);
  }

  // ---- actions ----

  const Patch: Action<Partial<State>> = (s, p) => ({ ...s, ...p });

  const Init: Action<null> = (s) => [s, effect(() => void boot())];

  // With window.__ghPerf set (the browser benchmark sets it), each flow
  // update is timed with the Performance API: the merge of the envelope,
  // then the frame it produced (view, patch, style and layout), recorded as
  // one "gh:frame" measure whose duration is their sum (the wait for the
  // next animation frame between them is not work, so it is left out).
  const perf = (globalThis as { __ghPerf?: boolean }).__ghPerf === true;
  let perfMerge = -1;
  let perfRender = -1;
  let perfView = -1;
  const FlowLoaded: Action<{ runId: string; env: Envelope }> = (s, p) => {
    if (perf) {
      const t0 = performance.now();
      const out = flowLoaded(s, p);
      perfMerge = Math.max(perfMerge, 0) + performance.now() - t0;
      return out;
    }
    return flowLoaded(s, p);
  };
  const flowLoaded = (s: State, p: { runId: string; env: Envelope }): State | [State, unknown] => {
    if (p.runId !== s.runId) {
      return s;
    }
    const base = s.flow.runId === p.runId ? s.flow : emptyModel();
    if (p.env.kind === "delta" && p.env.from !== base.version) {
      return [{ ...s, flow: emptyModel() }, effect(() => {
        flowDirty = true;
        void refreshFlow();
      })];
    }
    const flow = merge(base, p.env);
    flow.runId = p.runId;
    return { ...s, flow };
  };

  const RunLoaded: Action<RunView> = (s, run) => (run.runId === s.runId ? { ...s, run } : s);

  const QuestionsLoaded: Action<PendingQuestion[]> = (s, questions) => {
    const current = s.questions.find((q) => q.runId === s.runId);
    const still = current !== undefined && questions.some((q) => q.id === current.id);
    return still ? { ...s, questions } : { ...s, questions, answerDraft: "", answerBusy: false, answerNotice: "" };
  };

  const ViewRun: Action<string> = (s, runId) => {
    if (runId === s.runId) {
      return s;
    }
    return [{
      ...s, runId, run: null, flow: emptyModel(), tip: null, details: null, plan: null, planOpen: false,
      transcript: null, stream: null, thread: null, interruptOpen: false, copied: false,
      flowCam: { x: 0, y: 0, k: s.flowCam.k }, flowFollow: true, flowSel: "", seqTop: 0, seqLeft: 0, seqFollow: true, seqSel: -1,
    }, effect(() => {
      void refreshFlow();
      void refreshRun();
      void refreshThread();
    })];
  };

  const Watch: Action<string> = (s, runId) => {
    const next = ViewRun({ ...s, screen: "watch", follow: runId === "" }, runId);
    return next;
  };

  const SetScreen: Action<Screen> = (s, screen) => [{ ...s, screen, tip: null, historyNotice: "" },
    screen === "history" || screen === "compose" ? effect(() => void refreshRuns())
      : screen === "queue" ? effect(() => void refreshQueue()) : null];

  const StreamDelta: Action<{ roleId: string; content: string }> = (s, p) => {
    const prev = s.stream !== null && s.stream.roleId === p.roleId ? s.stream.text : "";
    let text = prev + p.content;
    if (text.length > STREAM_TAIL) {
      text = text.slice(text.length - STREAM_TAIL);
    }
    return { ...s, stream: { roleId: p.roleId, text } };
  };

  // Tooltip wiring: hover resolves the target off data-* attributes the
  // stage set from model ids; a grace timer keeps the card while the
  // pointer moves between the target and the card.
  const targetOf = (ev: Event): Target | null => {
    const t = ev.target;
    if (!(t instanceof Element)) {
      return null;
    }
    const el = t.closest("[data-operation],[data-participant],[data-role]");
    if (el === null) {
      return null;
    }
    const op = el.getAttribute("data-operation");
    if (op !== null) {
      return { kind: "operation", id: op };
    }
    const p = el.getAttribute("data-participant");
    if (p !== null) {
      return { kind: "participant", id: p };
    }
    const role = el.getAttribute("data-role") ?? "";
    return { kind: "role", id: role, roleKind: el.getAttribute("data-kind") === "tool" ? "tool" : "role" };
  };
  const sameTarget = (a: Target, b: Target) => a.kind === b.kind && a.id === b.id;

  const HideIf: Action<number> = (s, token) => (s.tip !== null && s.tip.hideToken === token ? { ...s, tip: null } : s);
  const scheduleHide = (s: State): State | [State, unknown] => {
    if (s.tip === null || s.tip.hideToken !== 0 || s.tip.pinned) {
      return s;
    }
    const token = ++tipSeq;
    return [{ ...s, tip: { ...s.tip, hideToken: token } }, effect(() => {
      window.setTimeout(() => send(HideIf, token), 300);
    })];
  };
  const StageOver: Action<MouseEvent> = (s, ev) => {
    if (s.tip?.pinned === true || gesture !== null) {
      return s; // a pinned inspector stays until closed; a drag is not a hover
    }
    const target = targetOf(ev);
    if (target === null) {
      return scheduleHide(s);
    }
    if (s.tip !== null && sameTarget(s.tip.target, target)) {
      return s.tip.hideToken === 0 ? s : { ...s, tip: { ...s.tip, hideToken: 0 } };
    }
    const tip: Tip = { target, x: ev.clientX, y: ev.clientY, hideToken: 0, pinned: false };
    if (target.kind === "operation") {
      const runId = s.runId;
      return [{ ...s, tip, details: null }, effect(() => void loadDetails(runId, target.id))];
    }
    return { ...s, tip };
  };
  // pin opens the inspector on a target until it is closed (click or Enter).
  const pin = (s: State, target: Target): State | [State, unknown] => {
    const tip: Tip = { target, x: 0, y: 0, hideToken: 0, pinned: true };
    const opId = target.kind === "operation" ? target.id : latestResultOf(s, target);
    if (opId !== undefined) {
      const runId = s.runId;
      tip.detailsOp = target.kind === "operation" ? undefined : opId;
      const keep = s.details !== null && s.details.opId === opId ? s.details : null;
      return [{ ...s, tip, details: keep }, keep !== null ? null : effect(() => void loadDetails(runId, opId))];
    }
    return { ...s, tip };
  };
  const toolNode = (t: Target): TreeNode | undefined =>
    (t.kind === "participant" ? toolNodeAt(flowIndex, t.stack, t.node) : undefined);
  // latestResultOf is the return of a tool node's latest call.
  const latestResultOf = (s: State, t: Target): string | undefined => {
    const n = toolNode(t);
    const call = n !== undefined && n.last >= 0 ? s.flow.operations[n.last] : undefined;
    return call?.closedBy;
  };
  // nodeTarget is the inspector's target for placed node p.
  const nodeTarget = (layout: FlowLayout, p: Placed): Target =>
    ({ kind: "participant", id: p.pid, stack: layout.lanes[p.lane].stack, node: p.key });
  const Pin: Action<Target> = (s, target) => pin(s, target);
  const ClosePin: Action<unknown> = (s) => ({ ...s, tip: null });
  // A click on a role or tool chip above the graph inspects that type.
  const ChipClick: Action<MouseEvent> = (s, ev) => {
    const t = targetOf(ev);
    return t !== null ? pin(s, t) : s;
  };
  const StageLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const CardEnter: Action<MouseEvent> = (s) => (s.tip === null ? s : { ...s, tip: { ...s.tip, hideToken: 0 } });
  const CardLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const DetailsLoaded: Action<{ opId: string; text: string }> = (s, d) =>
    (s.tip !== null && (s.tip.target.kind === "operation" && s.tip.target.id === d.opId || s.tip.detailsOp === d.opId) ? { ...s, details: d } : s);

  // ---- the flow graph: selection, pan and zoom ----

  const canvas = (s: State) => ({ w: s.stage.w > 0 ? s.stage.w : 800, h: s.stage.h > 0 ? s.stage.h : 480 });
  const flowLayoutOf = (s: State): FlowLayout => {
    syncFlowIndex(flowIndex, s.flow);
    return layoutFlow(flowIndex, s.flow);
  };
  // select moves the flow selection to placed node i, brings it into view
  // and says what it is in the live region.
  const selectNode = (s: State, layout: FlowLayout, i: number): State => {
    const p = layout.placed[i];
    if (p === undefined) {
      return s;
    }
    const { w, h: hgt } = canvas(s);
    const cam = showNode(lastCam, p, w, hgt);
    const r = new LabelResolver(s.config?.labels, s.tier);
    return {
      ...s, flowSel: placedKey(layout.lanes[p.lane].stack, p.key), flowCam: cam, flowFollow: false,
      announce: describeNode(s.flow, r, flowIndex, layout, i),
    };
  };
  const FLOW_KEYS: Record<string, Direction> = {
    ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right", Home: "first", End: "last",
  };
  const FlowKey: Action<KeyboardEvent> = (s, ev) => {
    const layout = flowLayoutOf(s);
    const { w, h: hgt } = canvas(s);
    const at = s.flowSel !== "" ? layout.byKey.get(s.flowSel) ?? -1 : -1;
    const dir = FLOW_KEYS[ev.key];
    if (dir !== undefined && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      if (at < 0) {
        const active = activeNodeKey(flowIndex, s.flow);
        const start = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) ?? 0 : 0;
        return selectNode(s, layout, start);
      }
      return selectNode(s, layout, step(layout, at, dir));
    }
    switch (ev.key) {
      case "Enter":
      case " ": {
        ev.preventDefault();
        const p = at >= 0 ? layout.placed[at] : undefined;
        return p !== undefined ? pin(s, nodeTarget(layout, p)) : s;
      }
      case "+":
      case "=":
        ev.preventDefault();
        return { ...s, flowCam: zoomAt(lastCam, 1.25, w / 2, hgt / 2), flowFollow: false };
      case "-":
      case "_":
        ev.preventDefault();
        return { ...s, flowCam: zoomAt(lastCam, 0.8, w / 2, hgt / 2), flowFollow: false };
      case "0":
        ev.preventDefault();
        return { ...s, flowCam: fitCamera(layout, w, hgt), flowFollow: false };
      case "f":
        return { ...s, flowFollow: true };
      case "PageDown":
      case "PageUp": {
        ev.preventDefault();
        const dy = (ev.key === "PageDown" ? 0.9 : -0.9) * hgt / lastCam.k;
        return { ...s, flowCam: { ...lastCam, y: lastCam.y + dy }, flowFollow: false };
      }
    }
    return s;
  };
  const Zoom: Action<number> = (s, factor) => {
    const { w, h: hgt } = canvas(s);
    return { ...s, flowCam: zoomAt(lastCam, factor, w / 2, hgt / 2), flowFollow: false };
  };
  const Fit: Action<unknown> = (s) => {
    const { w, h: hgt } = canvas(s);
    return { ...s, flowCam: fitCamera(flowLayoutOf(s), w, hgt), flowFollow: false };
  };
  // Follow goes back to the run: readable again if zoomed out, with the
  // node that acts now (else the main lane's root) at the top left.
  const Follow: Action<unknown> = (s) => {
    const layout = flowLayoutOf(s);
    const k = lastCam.k < DETAIL_ZOOM ? 1 : lastCam.k;
    const active = activeNodeKey(flowIndex, s.flow);
    const at = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) ?? 0 : 0;
    const p = layout.placed[at];
    const cam = p !== undefined ? { x: Math.max(0, p.x - NODE_W - COL_GAP - PAD), y: Math.max(0, p.y - 2 * PAD - 30), k } : { x: 0, y: 0, k };
    return { ...s, flowFollow: true, flowCam: cam };
  };
  const FlowWheel: Action<WheelEvent> = (s, ev) => {
    ev.preventDefault();
    const rect = (ev.currentTarget as Element).getBoundingClientRect();
    const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? rect.height : 1;
    if (ev.ctrlKey || ev.metaKey) {
      // A pinch on a touchpad arrives as a wheel with ctrlKey.
      const factor = Math.exp(-ev.deltaY * unit * 0.002);
      return { ...s, flowCam: zoomAt(lastCam, factor, ev.clientX - rect.left, ev.clientY - rect.top), flowFollow: false };
    }
    const dx = (ev.shiftKey ? ev.deltaY : ev.deltaX) * unit / lastCam.k;
    const dy = (ev.shiftKey ? 0 : ev.deltaY) * unit / lastCam.k;
    return { ...s, flowCam: { ...lastCam, x: lastCam.x + dx, y: lastCam.y + dy }, flowFollow: false };
  };
  const pinchDistance = () => {
    const ps = Array.from(pointers.values());
    return ps.length >= 2 ? Math.hypot(ps[0].x - ps[1].x, ps[0].y - ps[1].y) : 0;
  };
  const FlowPointerDown: Action<PointerEvent> = (s, ev) => {
    if (ev.button !== 0 && ev.pointerType === "mouse") {
      return s;
    }
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    (ev.currentTarget as Element).setPointerCapture?.(ev.pointerId);
    const ps = Array.from(pointers.values());
    const cx = ps.reduce((a, p) => a + p.x, 0) / ps.length;
    const cy = ps.reduce((a, p) => a + p.y, 0) / ps.length;
    gesture = { cam: lastCam, x: cx, y: cy, dist: pinchDistance(), moved: gesture?.moved ?? false };
    dragged = false;
    return s;
  };
  const FlowPointerMove: Action<PointerEvent> = (s, ev) => {
    if (gesture === null || !pointers.has(ev.pointerId)) {
      return s;
    }
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    const ps = Array.from(pointers.values());
    const cx = ps.reduce((a, p) => a + p.x, 0) / ps.length;
    const cy = ps.reduce((a, p) => a + p.y, 0) / ps.length;
    const dx = cx - gesture.x;
    const dy = cy - gesture.y;
    if (!gesture.moved && Math.hypot(dx, dy) < 4 && ps.length < 2) {
      return s; // a click, not yet a drag
    }
    gesture.moved = true;
    dragged = true;
    let cam = { ...gesture.cam, x: gesture.cam.x - dx / gesture.cam.k, y: gesture.cam.y - dy / gesture.cam.k };
    if (ps.length >= 2 && gesture.dist > 0) {
      const rect = (ev.currentTarget as Element).getBoundingClientRect();
      cam = zoomAt(cam, pinchDistance() / gesture.dist, cx - rect.left, cy - rect.top);
    }
    return { ...s, flowCam: { ...cam, k: clampZoom(cam.k) }, flowFollow: false, tip: s.tip?.pinned ? s.tip : null };
  };
  const FlowPointerUp: Action<PointerEvent> = (s, ev) => {
    pointers.delete(ev.pointerId);
    if (pointers.size === 0) {
      gesture = null;
    } else if (gesture !== null) {
      // One finger of a pinch lifted: carry on as a drag from here.
      const [p] = Array.from(pointers.values());
      gesture = { cam: lastCam, x: p.x, y: p.y, dist: 0, moved: true };
    }
    return s;
  };
  const FlowClick: Action<MouseEvent> = (s, ev) => {
    if (dragged) {
      dragged = false;
      return s;
    }
    const el = ev.target instanceof Element ? ev.target.closest("[data-node]") : null;
    if (el === null) {
      return s.tip?.pinned ? { ...s, tip: null } : s;
    }
    const layout = flowLayoutOf(s);
    const i = layout.byKey.get(el.getAttribute("data-node") ?? "") ?? -1;
    const next = selectNode(s, layout, i);
    const p = layout.placed[i];
    return p !== undefined ? pin(next, nodeTarget(layout, p)) : next;
  };

  // ---- the sequence view: scroll window, selection ----

  let seqScrollTo: number | null = null;
  const SeqScroll: Action<Event> = (s, ev) => {
    const el = ev.currentTarget as HTMLElement;
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - SEQ_ROW_H;
    if (el.scrollTop === s.seqTop && el.scrollLeft === s.seqLeft && atEnd === s.seqFollow) {
      return s;
    }
    return { ...s, seqTop: el.scrollTop, seqLeft: el.scrollLeft, seqFollow: atEnd };
  };
  const selectRow = (s: State, i: number, r: LabelResolver): State => {
    const n = s.flow.operations.length;
    if (n === 0) {
      return s;
    }
    const at = Math.max(0, Math.min(n - 1, i));
    const { h: hgt } = canvas(s);
    const top = rowTop(at);
    const view = hgt - 40; // below the sticky column headings
    if (top < s.seqTop) {
      seqScrollTo = Math.max(0, top - SEQ_ROW_H);
    } else if (top + SEQ_ROW_H > s.seqTop + view) {
      seqScrollTo = top + 2 * SEQ_ROW_H - view;
    }
    syncFlowIndex(flowIndex, s.flow);
    return { ...s, seqSel: at, seqFollow: false, announce: messageText(s.flow, r, flowIndex, s.flow.operations[at], at) };
  };
  const SeqKey: Action<KeyboardEvent> = (s, ev) => {
    const r = new LabelResolver(s.config?.labels, s.tier);
    const n = s.flow.operations.length;
    const page = Math.max(1, Math.floor(canvas(s).h / SEQ_ROW_H) - 2);
    const at = s.seqSel >= 0 ? s.seqSel : Math.min(n - 1, Math.floor(s.seqTop / SEQ_ROW_H));
    const moves: Record<string, number> = { ArrowUp: -1, ArrowDown: 1, PageUp: -page, PageDown: page, Home: -n, End: n };
    const d = moves[ev.key];
    if (d !== undefined && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      return selectRow(s, s.seqSel < 0 && d > 0 && d < n ? at : at + d, r);
    }
    if ((ev.key === "Enter" || ev.key === " ") && s.seqSel >= 0 && s.seqSel < n) {
      ev.preventDefault();
      return pin(s, { kind: "operation", id: s.flow.operations[s.seqSel].id });
    }
    if (ev.key === "f") {
      return { ...s, seqFollow: true, seqSel: -1 };
    }
    return s;
  };
  const SeqClick: Action<MouseEvent> = (s, ev) => {
    const el = ev.target instanceof Element ? ev.target.closest("[data-index]") : null;
    if (el === null) {
      return s;
    }
    const i = Number.parseInt(el.getAttribute("data-index") ?? "", 10);
    const op = s.flow.operations[i];
    if (op === undefined) {
      return s;
    }
    const next = selectRow(s, i, new LabelResolver(s.config?.labels, s.tier));
    seqScrollTo = null; // it is on screen: it was clicked
    return pin(next, { kind: "operation", id: op.id });
  };
  const SeqFollow: Action<unknown> = (s) => ({ ...s, seqFollow: true, seqSel: -1 });

  // ---- questions put off ----

  const DeferQuestion: Action<string> = (s, id) => ({ ...s, deferred: id });
  const ShowQuestion: Action<unknown> = (s) => ({ ...s, deferred: "" });

  const CopyText: Action<string> = (s, text) => [s, effect(() => {
    void navigator.clipboard?.writeText(text).catch(() => undefined);
  })];
  const CopyRaw: Action<string> = (s, text) => [{ ...s, copied: true }, effect(() => {
    void navigator.clipboard?.writeText(text).catch(() => undefined);
  })];

  const AnswerDraft: Action<Event> = (s, ev) => ({ ...s, answerDraft: (ev.target as HTMLTextAreaElement).value });
  const sendAnswer = (s: State, answer: string): State | [State, unknown] => {
    const q = s.questions.find((x) => x.runId === s.runId);
    if (q === undefined || answer.trim() === "" || s.answerBusy) {
      return s;
    }
    return [{ ...s, answerBusy: true, answerNotice: "" }, effect(() => {
      void (async () => {
        const res = await api<unknown>("/api/answer", { method: "POST", body: { id: q.id, answer } });
        if (!res.ok) {
          send(Patch, {
            answerBusy: false,
            answerNotice: res.status === 409 ? "This question was already answered." : "The answer could not be sent. Try again.",
          });
        }
        void refreshQuestions();
      })();
    })];
  };
  const AnswerSubmit: Action<Event> = (s, ev) => {
    ev.preventDefault();
    return sendAnswer(s, s.answerDraft);
  };
  const AnswerOption: Action<string> = (s, label) => sendAnswer(s, label);

  const CloseResult: Action<unknown> = (s) => ({ ...s, resultSeenFor: s.runId, copied: false });

  const control = (verb: "pause" | "resume" | "terminate"): Action<unknown> => (s) => [s, effect(() => {
    void (async () => {
      const res = await api<unknown>(`/api/runs/${enc(s.runId)}/${verb}`, { method: "POST" });
      send(Patch, { notice: res.ok ? "" : "The run is not active." });
      scheduleRun();
    })();
  })];

  const OpenInterrupt: Action<unknown> = (s) => ({ ...s, interruptOpen: true, interruptNotice: "" });
  const CloseInterrupt: Action<unknown> = (s) => ({ ...s, interruptOpen: false });
  const InterruptKind: Action<"inquiry" | "plan_modification"> = (s, k) => ({ ...s, interruptKind: k });
  const InterruptDraft: Action<Event> = (s, ev) => ({ ...s, interruptDraft: (ev.target as HTMLTextAreaElement).value });
  const InterruptSubmit: Action<Event> = (s, ev) => {
    ev.preventDefault();
    if (s.interruptDraft.trim() === "") {
      return s;
    }
    const body = { kind: s.interruptKind, message: s.interruptDraft };
    const runId = s.runId;
    return [{ ...s, interruptDraft: "", interruptNotice: "Sending…" }, effect(() => {
      void (async () => {
        const res = await api<unknown>(`/api/runs/${enc(runId)}/interrupt`, { method: "POST", body });
        send(Patch, {
          interruptNotice: res.ok ? "Sent. The run takes it up at its next safe point."
            : res.status === 409 ? "The run is not active, so nothing was sent." : "It could not be sent. Try again.",
        });
        scheduleRun();
      })();
    })];
  };

  const TogglePlan: Action<unknown> = (s) => {
    const open = !s.planOpen;
    const runId = s.runId;
    return [{ ...s, planOpen: open }, open ? effect(() => void loadPlan(runId)) : null];
  };

  const OpenTranscript: Action<string> = (s, roleId) => {
    const runId = s.runId;
    return [s, effect(() => void loadTranscript(runId, roleId))];
  };

  const ToggleSound: Action<unknown> = (s) => {
    const on = !s.sound;
    if (on && audio === null) {
      try {
        audio = new AudioContext(); // created on this click: a user gesture
      } catch {
        audio = null;
      }
    }
    return { ...s, sound: on };
  };

  const SetTier: Action<Event> = (s, ev) => ({ ...s, tier: (ev.target as HTMLSelectElement).value as Tier });

  const Toggle: Action<string> = (s, id) => ({ ...s, expanded: s.expanded === id ? "" : id });

  const ComposeFrom: Action<string> = (s, runId) => [{ ...s, screen: "compose", continuesFrom: runId }, effect(() => void refreshRuns())];
  const TaskInput: Action<Event> = (s, ev) => ({ ...s, task: (ev.target as HTMLTextAreaElement).value });
  const EffortInput: Action<Event> = (s, ev) => ({ ...s, effort: (ev.target as HTMLSelectElement).value });
  const ContinueInput: Action<Event> = (s, ev) => ({ ...s, continuesFrom: (ev.target as HTMLSelectElement).value });
  const SaveDefault: Action<unknown> = (s) => [s, effect(() => {
    void (async () => {
      const res = await api<{ effort: string }>("/api/settings", { method: "PUT", body: { effort: s.effort, logLevel: "" } });
      send(Patch, { composeNotice: res.ok ? "Saved as this project's default effort." : "The default could not be saved.", defaultEffort: res.ok ? s.effort : s.defaultEffort });
    })();
  })];
  const Submit: Action<Event> = (s, ev) => {
    ev.preventDefault();
    if (s.task.trim() === "" || s.composeBusy) {
      return s;
    }
    const body: Record<string, string> = { task: s.task };
    if (s.effort !== "") {
      body.effort = s.effort;
    }
    if (s.continuesFrom !== "") {
      body.continuesFrom = s.continuesFrom;
    }
    return [{ ...s, composeBusy: true, composeNotice: "" }, effect(() => {
      void (async () => {
        const res = await api<{ runId?: string; queued?: QueueItem; error?: string }>("/api/runs", { method: "POST", body });
        if (res.status === 201 && res.body !== null && res.body.queued !== undefined) {
          const item = res.body.queued;
          send(Patch, { composeBusy: false, task: "", continuesFrom: "", composeNotice: "" });
          send(Patch, { screen: "queue", queueNotice: "A run is in progress, so the task was queued as " + item.id + "." });
          void refreshQueue();
          return;
        }
        if (res.status === 201 && res.body !== null && res.body.runId !== undefined) {
          send(Patch, { composeBusy: false, task: "", continuesFrom: "", composeNotice: "" });
          send(Watch, res.body.runId ?? "");
          send(Patch, { follow: true });
          void refreshRuns();
          return;
        }
        send(Patch, {
          composeBusy: false,
          composeNotice: res.status === 409 ? "Another run is in progress. Submit again when it has finished."
            : "The task could not be started.",
        });
      })();
    })];
  };

  // ---- History: resume a stopped run ----

  const ResumeRun: Action<string> = (s, runId) => [{ ...s, historyNotice: "Resuming " + runId + "…" }, effect(() => {
    void (async () => {
      const res = await api<{ error?: string }>(`/api/runs/${enc(runId)}/resume`, { method: "POST" });
      if (res.ok) {
        send(Patch, { historyNotice: "" });
        send(Watch, runId);
        send(Patch, { follow: true });
      } else {
        const code = (res.body as { error?: string } | null)?.error ?? "";
        send(Patch, {
          historyNotice: code === "run_in_progress" ? "Another run is in progress. Resume this one when it has finished."
            : code === "run_not_active" ? "This run cannot be resumed: it has finished or has no checkpoint to resume from."
              : "The run could not be resumed.",
        });
      }
      void refreshRuns();
    })();
  })];

  // ---- the queue ----

  const QueueLoaded: Action<QueueItem[]> = (s, items) => {
    const answering = items.find((it) => it.id === s.queueAnswerFor && it.status === "needs_input");
    const edit = s.queueEdit !== null && items.some((it) => it.id === s.queueEdit?.id && it.status === "waiting") ? s.queueEdit : null;
    return answering !== undefined ? { ...s, queue: items, queueEdit: edit }
      : { ...s, queue: items, queueEdit: edit, queueAnswerFor: "", queueAnswerDraft: "", queueAnswerBusy: false, queueAnswerNotice: "" };
  };

  const QUEUE_ERRORS: Record<string, string> = {
    not_found: "That task is no longer in the queue.",
    status_forbidden: "That task has moved on since the list was drawn; it cannot be changed that way now.",
    invalid_body: "That is not a valid change.",
    queue_corrupt: "The queue file is malformed, so the queue is stopped. Repair it or run `guildhall queue reset`.",
    queue_unavailable: "This console has no queue.",
  };
  const queueError = (res: Reply<unknown>): string =>
    QUEUE_ERRORS[(res.body as { error?: string } | null)?.error ?? ""] ?? "The queue could not be changed. Try again.";

  const queueCall = (path: string, method: string, body?: unknown, after?: () => void): unknown => effect(() => {
    void (async () => {
      const res = await api<unknown>(path, { method, body });
      send(Patch, { queueNotice: res.ok ? "" : queueError(res) });
      if (res.ok && after !== undefined) {
        after();
      }
      void refreshQueue();
    })();
  });

  const QueueTask: Action<Event> = (s, ev) => ({ ...s, queueTask: (ev.target as HTMLTextAreaElement).value });
  const QueueEffort: Action<Event> = (s, ev) => ({ ...s, queueEffort: (ev.target as HTMLSelectElement).value });
  const QueueAdd: Action<Event> = (s, ev) => {
    ev.preventDefault();
    if (s.queueTask.trim() === "" || s.queueBusy) {
      return s;
    }
    const body: Record<string, string> = { task: s.queueTask };
    if (s.queueEffort !== "") {
      body.effort = s.queueEffort;
    }
    return [{ ...s, queueBusy: true, queueNotice: "" }, effect(() => {
      void (async () => {
        const res = await api<{ item: QueueItem }>("/api/queue", { method: "POST", body });
        if (res.status === 201) {
          send(Patch, { queueBusy: false, queueTask: "", queueNotice: "" });
        } else {
          send(Patch, { queueBusy: false, queueNotice: queueError(res) });
        }
        void refreshQueue();
      })();
    })];
  };
  const QueueMove: Action<{ id: string; delta: number }> = (s, p) =>
    [s, queueCall(`/api/queue/${enc(p.id)}`, "PATCH", { moveBy: p.delta })];
  const QueueTop: Action<string> = (s, id) => [s, queueCall(`/api/queue/${enc(id)}`, "PATCH", { position: 0 })];
  const QueueCancel: Action<string> = (s, id) => [s, queueCall(`/api/queue/${enc(id)}`, "DELETE")];
  const QueueRequeue: Action<string> = (s, id) => [s, queueCall(`/api/queue/${enc(id)}/requeue`, "POST")];
  const QueueToggle: Action<string> = (s, id) => ({ ...s, queueExpanded: s.queueExpanded === id ? "" : id });
  const QueueEditOpen: Action<QueueItem> = (s, it) => ({ ...s, queueEdit: { id: it.id, task: it.task, effort: it.effort ?? "" } });
  const QueueEditTask: Action<Event> = (s, ev) =>
    (s.queueEdit === null ? s : { ...s, queueEdit: { ...s.queueEdit, task: (ev.target as HTMLTextAreaElement).value } });
  const QueueEditEffort: Action<Event> = (s, ev) =>
    (s.queueEdit === null ? s : { ...s, queueEdit: { ...s.queueEdit, effort: (ev.target as HTMLSelectElement).value } });
  const QueueEditClose: Action<unknown> = (s) => ({ ...s, queueEdit: null });
  const QueueEditSave: Action<Event> = (s, ev) => {
    ev.preventDefault();
    const d = s.queueEdit;
    if (d === null || d.task.trim() === "") {
      return s;
    }
    return [s, queueCall(`/api/queue/${enc(d.id)}`, "PATCH", { task: d.task, effort: d.effort }, () => send(Patch, { queueEdit: null }))];
  };
  const QueueAnswerOpen: Action<string> = (s, id) =>
    ({ ...s, queueAnswerFor: id, queueAnswerDraft: "", queueAnswerBusy: false, queueAnswerNotice: "" });
  const QueueAnswerClose: Action<unknown> = (s) => ({ ...s, queueAnswerFor: "" });
  const QueueAnswerDraft: Action<Event> = (s, ev) => ({ ...s, queueAnswerDraft: (ev.target as HTMLTextAreaElement).value });
  const sendQueueAnswer = (s: State, answer: string): State | [State, unknown] => {
    const id = s.queueAnswerFor;
    if (id === "" || answer.trim() === "" || s.queueAnswerBusy) {
      return s;
    }
    return [{ ...s, queueAnswerBusy: true, queueAnswerNotice: "" }, effect(() => {
      void (async () => {
        const res = await api<{ item: QueueItem }>(`/api/queue/${enc(id)}/answer`, { method: "POST", body: { answer } });
        if (res.ok) {
          send(Patch, { queueAnswerFor: "", queueAnswerDraft: "", queueAnswerBusy: false, queueNotice: "Answered. The task runs next." });
        } else {
          send(Patch, { queueAnswerBusy: false, queueAnswerNotice: queueError(res) });
        }
        void refreshQueue();
      })();
    })];
  };
  const QueueAnswerSubmit: Action<Event> = (s, ev) => {
    ev.preventDefault();
    return sendQueueAnswer(s, s.queueAnswerDraft);
  };
  const QueueAnswerOption: Action<string> = (s, label) => sendQueueAnswer(s, label);

  // ---- the event stream ----

  function connect(): void {
    const es = new EventSource("/api/events"); // same-origin: the cookie goes along
    // A refused stream (401) closes for good; a request tells whether access was lost.
    es.addEventListener("error", () => {
      if (es.readyState === EventSource.CLOSED) {
        void refreshHealth();
      }
    });
    es.addEventListener("hello", (ev) => {
      const hello = JSON.parse((ev as MessageEvent).data) as { runId: string };
      const s = getState();
      if (s.follow && hello.runId !== "" && hello.runId !== s.runId) {
        send(ViewRun, hello.runId);
      }
      refreshAll();
    });
    es.addEventListener("event", (ev) => {
      const n = JSON.parse((ev as MessageEvent).data) as { seq: number; type: string; runId: string };
      const s = getState();
      if (n.type === "run_status" && getState().config?.queue) {
        void refreshQueue(); // a queued run may have settled, whichever run is viewed
      }
      if (n.type === "run_started") {
        void refreshRuns();
        if (s.follow && n.runId !== s.runId) {
          send(ViewRun, n.runId);
          return;
        }
      }
      if (n.runId !== s.runId) {
        return;
      }
      void refreshFlow();
      // The run view (roles, questions, interrupts, result) changes with
      // few event types; the frequent ones (model and tool calls) change
      // only the flow model, which the delta above carries.
      if (!FLOW_ONLY_EVENTS.has(n.type)) {
        scheduleRun();
      }
      switch (n.type) {
        case "ask_human":
        case "human_answer":
          void refreshQuestions();
          void refreshThread();
          break;
        case "llm_call":
          if (s.stream !== null) {
            send(Patch, { stream: null });
          }
          break;
        case "run_status":
          // A finished run's outcome summary (summary.txt) is written just
          // after its last event, and no event says so: look again shortly.
          for (const ms of [1500, 5000, 15000]) {
            window.setTimeout(() => {
              if (getState().runId === n.runId) {
                void refreshRun();
                void refreshRuns();
              }
            }, ms);
          }
          void refreshHealth();
          void refreshRuns();
          void refreshThread();
          void refreshQuestions(); // a run that ends takes its open questions with it
          break;
        case "provider_failure":
          void refreshHealth();
          void refreshRuns();
          void refreshThread();
          break;
      }
    });
    es.addEventListener("queue", () => void refreshQueue());
    es.addEventListener("mcp", (ev) => {
      const n = JSON.parse((ev as MessageEvent).data) as McpNote;
      if (n.runId === getState().runId) {
        send(Patch, { mcp: n });
      }
    });
    es.addEventListener("egress", (ev) => {
      const n = JSON.parse((ev as MessageEvent).data) as EgressNote;
      const s = getState();
      if (n.runId !== s.runId) {
        return;
      }
      const denied = (s.egress?.denied ?? 0) + (n.allowed ? 0 : 1);
      send(Patch, { egress: { last: n, denied } });
    });
    // Streamed text is buffered and shown at most every STREAM_FLUSH_MS:
    // each flush re-renders the tail through the Markdown pipeline.
    let pending: { roleId: string; content: string } | null = null;
    let flushTimer: number | undefined;
    es.addEventListener("delta", (ev) => {
      const d = JSON.parse((ev as MessageEvent).data) as { runId: string; roleId: string; content: string };
      if (d.runId !== getState().runId) {
        return;
      }
      if (pending !== null && pending.roleId !== d.roleId) {
        send(StreamDelta, pending);
        pending = null;
      }
      pending = { roleId: d.roleId, content: (pending?.content ?? "") + d.content };
      if (flushTimer === undefined) {
        flushTimer = window.setTimeout(() => {
          flushTimer = undefined;
          if (pending !== null) {
            send(StreamDelta, pending);
            pending = null;
          }
        }, STREAM_FLUSH_MS);
      }
    });
    es.addEventListener("resync", () => refreshAll());
  }

  async function boot(): Promise<void> {
    document.addEventListener("keydown", onKeydown);
    document.addEventListener("focusin", onFocusin);
    // The run list (newest first) rather than /api/run: a workspace with
    // no runs yet is not an error worth a 404 in the console.
    const [config, settings, runs] = await Promise.all([
      api<Config>("/api/config"),
      api<{ effort: string }>("/api/settings"),
      api<{ runs: RunSummary[] }>("/api/runs"),
    ]);
    send(Patch, {
      config: config.ok ? config.body : null,
      defaultEffort: settings.ok && settings.body !== null ? settings.body.effort : "",
    });
    const latest = runs.ok && runs.body !== null ? runs.body.runs[0] : undefined;
    if (latest !== undefined) {
      send(ViewRun, latest.runId);
    }
    refreshAll();
    connect();
  }

  // ---- views ----

  function updateChrome(s: State): void {
    const status = s.run?.status ?? "";
    const asking = s.questions.some((q) => q.runId === s.runId);
    const label = runLabel(s.run);
    const mark = asking ? "? " : status === "running" ? "▶ " : status === "success" ? "✓ " : status === "error" ? "✗ " : "";
    const title = mark + (label !== "" ? label + " — " : "") + "Guildhall";
    if (document.title !== title) {
      document.title = title;
    }
    const icon = asking ? "question" : status === "running" ? "running" : status === "success" ? "done"
      : status === "" ? "idle" : status === "paused" || status === "suspended" ? "question" : "error";
    const link = document.getElementById("favicon");
    const href = "/static/css/favicon-" + icon + ".svg";
    if (link instanceof HTMLLinkElement && link.getAttribute("href") !== href) {
      link.setAttribute("href", href);
    }
  }

  function authBanner(s: State): VNode | null {
    if (!s.authLost) {
      return null;
    }
    return h("div", { class: "auth-banner", role: "alert" },
      "This page has lost its access to Guildhall. Open the URL that Guildhall printed when it started.");
  }

  function healthBanner(s: State): VNode | null {
    const hv = s.health;
    if (hv === null || hv.state === "ok") {
      return null;
    }
    const base = HEALTH_COPY[hv.category ?? ""] ?? "The model provider is having trouble.";
    const tail = hv.state === "suspended" ? " The run is suspended until the provider recovers." : " Guildhall is retrying.";
    return h("div", { class: "health-banner health-banner--" + hv.state, role: "status" }, base + tail);
  }

  // egressLine shows the run's latest egress decision, and how many were
  // denied: machine fields and the program's own words, as text.
  // mcpLine shows an MCP server that failed, exited or stopped answering:
  // the server's name and the program's words, as text.
  function mcpLine(s: State): VNode | null {
    const n = s.mcp;
    if (n === null || n.runId !== s.runId || n.state === "ready") {
      return null;
    }
    const text = "MCP server " + n.server + " " + n.state + (n.message ? ": " + n.message : "");
    return h("div", { class: "egress-line egress-line--denied mcp-line", role: "alert" }, text);
  }

  function egressLine(s: State): VNode | null {
    const e = s.egress;
    if (e === null || e.last.runId !== s.runId) {
      return null;
    }
    const n = e.last;
    const who = n.roleId ? " (" + n.roleId + " via " + n.via + ")" : " (via " + n.via + ")";
    const text = (n.allowed ? "Egress allowed: " : "Egress denied: ") + n.host + ":" + n.port + who +
      (!n.allowed && n.reason ? ": " + n.reason : "") + (e.denied > 0 ? " · " + e.denied + " denied in this run" : "");
    return h("div", { class: "egress-line egress-line--" + (n.allowed ? "allowed" : "denied"), role: "status" }, text);
  }

  function pauseCard(s: State): VNode | null {
    const r = s.run;
    if (r === null || (r.status !== "paused" && r.status !== "suspended")) {
      return null;
    }
    return h("div", { class: "pause-card pause-card--" + r.status, role: "status" }, [
      h("p", {}, PAUSE_COPY[r.status]),
      r.suspension ? h("p", { class: "muted" }, "Since " + formatTime(r.suspension.suspendedAt)) : null,
      h("div", { class: "actions" }, [
        r.status === "paused" ? h("button", { type: "button", class: "primary", onclick: control("resume") }, "Resume") : null,
        h("button", { type: "button", class: "danger", onclick: control("terminate") }, "Terminate"),
      ]),
    ]);
  }

  function topBar(s: State): VNode {
    const tab = (screen: Screen, label: string) =>
      h("button", {
        type: "button", class: { tab: true, "is-active": s.screen === screen }, onclick: [SetScreen, screen],
        "aria-current": s.screen === screen ? "page" : undefined,
      }, label);
    const label = s.run !== null ? runLabel(s.run) : "No run yet";
    return h("div", { class: "top-bar" }, [
      h("h1", { class: "brand" }, "Guildhall"),
      h("div", { class: "run-identity" }, [
        h("span", { class: "run-label", title: label }, label),
        s.run !== null ? h("span", { class: "status status--" + s.run.status }, s.run.status) : null,
        s.run !== null ? h("span", { class: "effort" }, "effort " + s.run.effort) : null,
      ]),
      h("nav", { class: "tabs", "aria-label": "Screens" }, [tab("watch", "Watch"), tab("history", "History"), tab("compose", "Compose"),
        s.config?.queue ? tab("queue", queueTabLabel(s)) : null]),
      h("div", { class: "prefs" }, [
        h("label", {}, ["Labels ", h("select", { onchange: SetTier, value: s.tier },
          TIERS.map((t) => h("option", { value: t, selected: s.tier === t }, t)))]),
        h("button", { type: "button", class: "sound", "aria-pressed": String(s.sound), onclick: ToggleSound }, s.sound ? "Sound on" : "Sound off"),
      ]),
      s.config !== null && s.config.setup.length > 0
        ? h("div", { class: "setup", title: s.config.setup.join("\n") }, s.config.setup.join(" · "))
        : null,
    ]);
  }

  function tooltipContent(s: State, r: LabelResolver): TooltipContent | null {
    const t = s.tip?.target;
    if (t === undefined) {
      return null;
    }
    switch (t.kind) {
      case "operation":
        return deriveOperationTooltip(s.flow, r, t.id, s.details?.opId === t.id ? s.details.text : undefined);
      case "participant": {
        const n = toolNode(t);
        const caller = t.node !== undefined ? t.node.slice(0, t.node.indexOf("\u0000")) : "";
        const latest = s.tip?.detailsOp !== undefined && s.details?.opId === s.tip.detailsOp ? s.details.text : undefined;
        return deriveParticipantTooltip(s.flow, r, t.id, n !== undefined ? { caller, callOps: n.callOps, latestResult: latest } : undefined);
      }
      case "role":
        return deriveRoleTooltip(s.flow, r, t.roleKind, t.id);
    }
  }

  function interruptModal(s: State): VNode {
    return h("div", { class: "modal-backdrop interrupt-modal" }, [
      h("form", {
        class: "modal-card", role: "dialog", "aria-modal": "true", tabindex: "-1", "aria-labelledby": "interrupt-heading",
        onsubmit: InterruptSubmit,
      }, [
        h("div", { class: "modal-head" }, [
          h("div", { class: "modal-runlabel" }, "Run " + s.runId),
          h("h2", { id: "interrupt-heading" }, "Interrupt the run"),
        ]),
        h("div", { class: "modal-body" }, [
          h("p", { class: "muted" }, "Ask the run a question, or change its plan. It takes this up at its next safe point."),
          h("fieldset", { class: "kind-choice" }, [
            h("legend", { class: "sr-only" }, "What to send"),
            h("label", {}, [h("input", { type: "radio", name: "ikind", checked: s.interruptKind === "inquiry", onchange: [InterruptKind, "inquiry"] }), " Ask a question"]),
            h("label", {}, [h("input", { type: "radio", name: "ikind", checked: s.interruptKind === "plan_modification", onchange: [InterruptKind, "plan_modification"] }), " Change the plan"]),
          ]),
        ]),
        h("div", { class: "modal-foot" }, [
          h("label", { for: "interrupt-input" }, s.interruptKind === "inquiry" ? "Your question" : "The change"),
          h("textarea", { id: "interrupt-input", rows: 4, value: s.interruptDraft, oninput: InterruptDraft, "data-autofocus": "" }),
          h("div", { class: "modal-actions" }, [
            h("span", { class: "muted key-hint" }, "Ctrl+Enter sends · Esc closes"),
            h("button", { type: "button", onclick: CloseInterrupt, "data-esc": "" }, "Close"),
            h("button", { type: "submit", class: "primary", disabled: s.interruptDraft.trim() === "" }, "Send"),
          ]),
          s.interruptNotice !== "" ? h("p", { class: "notice", role: "status" }, s.interruptNotice) : null,
        ]),
      ]),
    ]);
  }

  function sidePanel(s: State, r: LabelResolver): VNode {
    const run = s.run;
    const items: Child[] = [];
    if (run !== null) {
      // A long run has hundreds of role instances: the list shows the
      // running ones and the newest, and the rest on request.
      const many = run.roles.length > ROLE_LIST_MAX && !s.rolesAll;
      const shown = many
        ? run.roles.filter((role, i) => role.status === "running" || i >= run.roles.length - ROLE_LIST_MAX + 4)
        : run.roles;
      items.push(h("section", { class: "panel roles" }, [
        h("h2", {}, "Roles"),
        h("ul", {}, shown.map((role) => h("li", { key: role.id }, [
          h("button", { type: "button", class: "link", onclick: [OpenTranscript, role.id] },
            r.roleLabel("role", role.role) + " · " + role.id),
          h("span", { class: "status status--" + role.status }, role.status),
        ]))),
        run.roles.length > ROLE_LIST_MAX
          ? h("button", { type: "button", class: "link more", onclick: [Patch, { rolesAll: !s.rolesAll }], "aria-expanded": String(s.rolesAll) },
            s.rolesAll ? "Show fewer" : "Show all " + run.roles.length + " role instances")
          : null,
      ]));
      items.push(h("section", { class: "panel plan" }, [
        h("button", { type: "button", class: "disclosure", "aria-expanded": String(s.planOpen), onclick: TogglePlan },
          s.planOpen ? "▾ Plan" : "▸ Plan"),
        s.planOpen ? (s.plan === null ? h("p", { class: "muted" }, "Loading…")
          : s.plan === "" ? h("p", { class: "muted" }, "No plan was written for this run.") : prose(s.plan, "md plan-body")) : null,
      ]));
      if (run.questions.length > 0) {
        items.push(h("section", { class: "panel question-history" }, [
          h("h2", {}, "Questions"),
          ...run.questions.map((q) => h("div", { class: "qa", key: q.id }, [
            prose(q.question, "md"),
            q.answered ? h("p", { class: "answer" }, ["Answer: ", h("span", { class: "answer-text" }, q.answer ?? "")])
              : h("p", { class: "muted" }, "Waiting for an answer"),
          ])),
        ]));
      }
      if (run.interrupts.length > 0 || run.planModifications.length > 0) {
        items.push(h("section", { class: "panel interrupt-history" }, [
          h("h2", {}, "Interrupts"),
          ...run.interrupts.map((i, n) => h("div", { class: "interrupt-card", key: "i" + n }, [
            h("div", { class: "muted" }, i.trigger + " · " + formatTime(i.at)),
            i.message ? h("p", { class: "operator-message" }, i.message) : null,
            i.dropped ? h("p", { class: "muted" }, "Not answered: " + i.dropped)
              : i.resolved ? (i.answer ? prose(i.answer, "md answer-card") : h("p", { class: "muted" }, i.action ?? ""))
                : h("p", { class: "muted" }, "In progress"),
          ])),
          ...run.planModifications.map((p, n) => h("div", { class: "interrupt-card", key: "p" + n }, [
            h("div", { class: "muted" }, "plan change for " + p.targetRole + " · " + formatTime(p.at)),
            h("p", { class: "operator-message" }, p.message),
          ])),
        ]));
      }
      if (s.stream !== null && s.stream.text !== "" && !terminalStatus(run.status)) {
        items.push(h("section", { class: "panel stream" }, [
          h("h2", {}, "Replying now · " + s.stream.roleId),
          prose(s.stream.text, "md stream-text"),
        ]));
      }
    }
    return h("aside", { class: "side" }, items);
  }

  function transcriptView(t: Transcript, r: LabelResolver): VNode {
    return h("aside", { class: "transcript", "aria-label": "Transcript" }, [
      h("div", { class: "transcript-head" }, [
        h("h2", {}, r.roleLabel("role", t.role) + " · " + t.roleId),
        h("button", { type: "button", onclick: [Patch, { transcript: null }], "data-esc": "" }, "Close"),
      ]),
      t.omitted > 0 ? h("p", { class: "muted" }, t.omitted + " earlier messages not shown") : null,
      ...t.messages.map((m, i) => h("div", { class: "msg msg--" + m.kind + " msg--" + m.role, key: String(i) }, [
        h("div", { class: "msg-head" }, m.kind === "tool_result" ? "tool result · " + (m.tool ?? "") + " · " + (m.resultKind ?? "") : m.role),
        m.kind === "tool_result" ? h("pre", {}, prettyJSON(m.content)) : m.content !== "" ? prose(m.content, "md") : null,
        ...(m.toolCalls ?? []).map((c) => h("div", { class: "tool-call" }, [
          h("div", { class: "msg-head" }, "calls " + c.name),
          h("pre", {}, prettyJSON(c.arguments)),
        ])),
        m.truncated ? h("p", { class: "muted" }, "(cut; the run log keeps it whole)") : null,
      ])),
    ]);
  }

  function drawer(s: State): VNode | null {
    if (!s.drawerOpen) {
      return null;
    }
    const t = s.thread;
    return h("aside", { class: "drawer", "aria-label": "Task history" }, [
      h("div", { class: "transcript-head" }, [
        h("h2", {}, "Task history"),
        h("button", { type: "button", onclick: [Patch, { drawerOpen: false }], "data-esc": "" }, "Close"),
      ]),
      t === null ? h("p", { class: "muted" }, "Loading…") : renderThreadBody(t),
    ]);
  }

  // flowStage is the flow graph with its strip of role and tool counts and
  // its pan and zoom controls. The camera follows the active node until the
  // operator pans, zooms or walks the graph.
  function flowStage(s: State, r: LabelResolver): VNode[] {
    syncFlowIndex(flowIndex, s.flow);
    const layout = layoutFlow(flowIndex, s.flow);
    const { w, h: hgt } = canvas(s);
    let cam = s.flowCam;
    if (s.flowFollow) {
      const active = activeNodeKey(flowIndex, s.flow);
      const at = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) : undefined;
      if (at !== undefined) {
        cam = showNode(cam, layout.placed[at], w, hgt);
      }
    }
    lastCam = cam;
    const drawing = renderFlow(s.flow, r, flowIndex, { camera: cam, width: w, height: hgt, selected: s.flowSel });
    const slots = typeSlots(s.flow);
    return [
      h("div", { class: "stage-toolbar" }, [
        h("div", { class: "type-chips", role: "group", "aria-label": "Roles and tools that ran" }, slots.map((t) =>
          h("button", {
            type: "button", class: "type-chip type-chip--" + t.kind, key: t.kind + ":" + t.role, "data-role": t.role, "data-kind": t.kind,
            onclick: ChipClick,
          }, [
            h("span", { class: "type-chip-label" }, (t.kind === "tool" ? "⚙ " : "") + r.roleLabel(t.kind, t.role)),
            h("span", { class: "type-chip-count" }, t.kind === "role" ? (t.instances > 1 ? t.instances + " instances" : "1 instance") : "×" + t.invocations),
          ]))),
        h("div", { class: "zoom-controls", role: "group", "aria-label": "Pan and zoom" }, [
          h("button", { type: "button", onclick: [Zoom, 0.8], "aria-label": "Zoom out" }, "−"),
          h("span", { class: "zoom-level", "aria-live": "off" }, Math.round(cam.k * 100) + "%"),
          h("button", { type: "button", onclick: [Zoom, 1.25], "aria-label": "Zoom in" }, "+"),
          h("button", { type: "button", onclick: Fit }, "Fit"),
          h("button", { type: "button", onclick: Follow, "aria-pressed": String(s.flowFollow) }, "Follow"),
        ]),
      ]),
      h("div", {
        class: "stage-canvas flow-canvas", tabindex: "0", role: "application",
        "aria-label": "Flow graph, " + layout.placed.length + " nodes. Arrow keys walk the graph, Enter inspects, plus and minus zoom, 0 fits, f follows the run.",
        "aria-describedby": "stage-announce",
        onkeydown: FlowKey, onwheel: FlowWheel, onpointerdown: FlowPointerDown, onpointermove: FlowPointerMove,
        onpointerup: FlowPointerUp, onpointercancel: FlowPointerUp, onclick: FlowClick,
      }, [s.flow.operations.length === 0 ? h("p", { class: "empty" }, "Nothing has happened yet.") : drawing.svg]),
    ];
  }

  // sequenceStage is the sequence diagram in its scroll window.
  function sequenceStage(s: State, r: LabelResolver): VNode[] {
    syncFlowIndex(flowIndex, s.flow);
    const { w, h: hgt } = canvas(s);
    const cols = sequenceColumns(s.flow, r);
    // Columns share the width when they can; below 96 px each the diagram scrolls sideways.
    const colW = Math.max(96, Math.min(170, Math.floor((w - 26) / Math.max(cols.length, 1))));
    const n = s.flow.operations.length;
    return [
      h("div", { class: "stage-toolbar" }, [
        h("span", { class: "muted seq-count" }, n + (n === 1 ? " operation" : " operations")),
        h("div", { class: "zoom-controls" }, [
          h("button", { type: "button", onclick: SeqFollow, "aria-pressed": String(s.seqFollow) }, "Follow newest"),
        ]),
      ]),
      h("div", {
        class: "stage-canvas seq-scroll", tabindex: "0", role: "application",
        "aria-label": "Sequence diagram, " + n + " operations. Up and down select a message, Enter inspects it, f follows the newest.",
        "aria-describedby": "stage-announce",
        onscroll: SeqScroll, onkeydown: SeqKey, onclick: SeqClick,
      }, [
        h("div", { class: "seq-sticky" }, [renderSequenceHeader(cols, colW)]),
        n === 0 ? h("p", { class: "empty" }, "Nothing has happened yet.")
          : renderSequenceBody(s.flow, r, flowIndex, cols, {
            // Following, the window is the newest rows, whatever the scroll
            // position was: the scroll catches up after the frame.
            scrollTop: s.seqFollow ? Math.max(0, sequenceHeight(s.flow) + SEQ_HEAD_H - hgt) : s.seqTop,
            height: Math.max(hgt, 200), scrollLeft: s.seqLeft, width: w, columnWidth: colW, selected: s.seqSel,
          }),
      ]),
    ];
  }

  function pendingQuestion(s: State): PendingQuestion | undefined {
    return s.questions.find((q) => q.runId === s.runId);
  }

  function watchScreen(s: State, r: LabelResolver): VNode {
    const run = s.run;
    const live = run !== null && run.active;
    const question = pendingQuestion(s);
    const tipContent = tooltipContent(s, r);
    const thread = s.thread !== null && s.thread.runId === s.runId ? s.thread : null;
    const title = run !== null && (thread === null || thread.lineage.length <= 1) ? runLabel(run)
      : thread !== null ? plainLine(thread.identity.firstTask) : "";
    return h("main", { class: "watch", id: "main" }, [
      thread !== null ? renderTaskIdentity(thread, title) : null,
      pauseCard(s),
      h("div", { class: "watch-bar" }, [
        h("div", { class: "now" }, [
          h("span", { class: "now-caption" }, deriveNowCaption(s.flow, r)),
          h("span", { class: "cost-strip" }, deriveCostStrip(s.flow.totals).map((part) => h("span", { class: "cost" }, part))),
        ]),
        h("div", { class: "controls" }, [
          h("div", { class: "toggle", role: "group", "aria-label": "View" }, [
            h("button", { type: "button", class: { "is-active": s.view === "flow" }, "aria-pressed": String(s.view === "flow"), onclick: [Patch, { view: "flow" }] }, "Flow"),
            h("button", { type: "button", class: { "is-active": s.view === "sequence" }, "aria-pressed": String(s.view === "sequence"), onclick: [Patch, { view: "sequence" }] }, "Sequence"),
          ]),
          live && run?.status === "running" ? h("button", { type: "button", onclick: control("pause") }, "Pause") : null,
          live ? h("button", { type: "button", onclick: OpenInterrupt }, "Interrupt") : null,
          live ? h("button", { type: "button", class: "danger", onclick: control("terminate") }, "Terminate") : null,
          h("button", { type: "button", onclick: [Patch, { drawerOpen: !s.drawerOpen }], "aria-expanded": String(s.drawerOpen) }, "Task history"),
          run !== null && !live && terminalStatus(run.status) ? h("button", { type: "button", onclick: [ComposeFrom, run.runId] }, "Continue…") : null,
        ]),
      ]),
      question !== undefined && s.deferred === question.id
        ? h("div", { class: "notice-bar", role: "status" }, [
          h("span", {}, "A question is waiting for your answer."),
          h("button", { type: "button", class: "primary", onclick: ShowQuestion }, "Answer"),
        ])
        : null,
      s.notice !== "" ? h("p", { class: "notice" }, s.notice) : null,
      run !== null && run.interruptPending ? h("p", { class: "notice" }, "An interrupt is waiting for the run's next safe point.") : null,
      h("div", { class: "watch-body" }, [
        h("section", {
          class: "stage stage--" + s.view, "aria-label": s.view === "flow" ? "Flow graph" : "Sequence diagram",
          onmouseover: StageOver, onmouseleave: StageLeave,
        }, [
          ...(s.runId === "" ? [h("p", { class: "empty" }, "No run yet. Start one from Compose.")]
            : s.view === "flow" ? flowStage(s, r) : sequenceStage(s, r)),
          h("p", { class: "sr-only", id: "stage-announce", "aria-live": "polite" }, s.announce),
        ]),
        sidePanel(s, r),
      ]),
      tipContent !== null && s.tip !== null && (s.tip.pinned || watchModals(s, r).length === 0) ? renderTooltip({ content: tipContent, x: s.tip.x, y: s.tip.y, pinned: s.tip.pinned }, {
        onEnter: CardEnter, onLeave: CardLeave, onCopy: (src: string) => [CopyText, src], onClose: ClosePin,
      }) : null,
      s.transcript !== null ? transcriptView(s.transcript, r) : null,
      drawer(s),
    ]);
  }

  // watchModals are the Watch screen's page overlays: the question, the
  // result and the interrupt modal.
  function watchModals(s: State, r: LabelResolver): VNode[] {
    const run = s.run;
    const question = pendingQuestion(s);
    const out: VNode[] = [];
    if (question !== undefined && s.deferred !== question.id) {
      const asker = s.flow.participants.find((p) => p.roleId === question.roleId);
      out.push(renderQuestionModal({
        question, runLabel: run !== null ? runLabel(run) : question.runId,
        askerLabel: asker !== undefined ? r.participantLabel(asker) : "The run",
        draft: s.answerDraft, busy: s.answerBusy, notice: s.answerNotice,
        onDraft: AnswerDraft, onOption: (label: string) => [AnswerOption, label], onSubmit: AnswerSubmit,
        onDefer: [DeferQuestion, question.id],
      }));
    } else if (run !== null && terminalStatus(run.status) && s.resultSeenFor !== run.runId && question === undefined) {
      out.push(renderResultModal({
        runLabel: runLabel(run), status: run.status, result: run.result, error: run.error, copied: s.copied, noAction: run.noAction === true,
        onClose: CloseResult, onCopyRaw: (raw: string) => [CopyRaw, raw],
      }));
    }
    if (s.interruptOpen) {
      out.push(interruptModal(s));
    }
    return out;
  }

  function historyScreen(s: State): VNode {
    return h("main", { class: "history", id: "main" }, [
      h("h2", {}, "History"),
      s.historyNotice !== "" ? h("p", { class: "notice" }, s.historyNotice) : null,
      s.runs.length === 0 ? h("p", { class: "muted" }, "No runs yet.") : null,
      h("ul", { class: "run-list" }, s.runs.map((r) => {
        const open = s.expanded === r.runId;
        const err = r.error ?? r.result?.error ?? null;
        return h("li", { key: r.runId, class: { "run-row": true, "is-active": r.runId === s.runId } }, [
          h("button", { type: "button", class: "run-row-head", "aria-expanded": String(open), onclick: [Toggle, r.runId] }, [
            h("span", { class: "run-primary" }, runLabel(r)),
            h("span", { class: "status status--" + r.status }, r.status),
            h("span", { class: "muted" }, formatTime(r.startedAt)),
          ]),
          open ? h("div", { class: "run-row-body" }, [
            h("div", { class: "muted" }, r.runId + " · effort " + r.effort + (r.continuesFrom ? " · continues " + r.continuesFrom : "")),
            h("div", { class: "section-label" }, "Task"),
            prose(r.task, "md"),
            r.result && r.result.summary ? h("div", {}, [h("div", { class: "section-label" }, "Result"), prose(r.result.summary, "md")]) : null,
            err !== null && err.message ? h("div", {}, [h("div", { class: "section-label" }, "Error"), prose(err.message, "md")]) : null,
            h("div", { class: "actions" }, [
              h("button", { type: "button", onclick: [Watch, r.runId] }, "Watch"),
              resumable(r) ? h("button", { type: "button", class: "primary", onclick: [ResumeRun, r.runId] }, "Resume") : null,
              terminalStatus(r.status) ? h("button", { type: "button", onclick: [ComposeFrom, r.runId] }, "Continue from this run") : null,
            ]),
          ]) : null,
        ]);
      })),
    ]);
  }

  function reference(prior: RunSummary): VNode {
    const err = prior.error ?? prior.result?.error ?? null;
    return h("section", { class: "continuation-reference" }, [
      h("div", { class: "section-label" }, "Continuing from"),
      h("div", { class: "muted" }, [h("span", { class: "ref-id" }, prior.runId), " · ", h("span", { class: "status status--" + prior.status }, prior.status)]),
      h("div", { class: "section-label" }, "Prior task"),
      prose(prior.task, "md"),
      prior.result && prior.result.summary ? h("div", {}, [h("div", { class: "section-label" }, "Prior result"), prose(prior.result.summary, "md")]) : null,
      prior.result && prior.result.artifacts && prior.result.artifacts.length > 0
        ? h("ul", { class: "artifacts" }, prior.result.artifacts.map((a) => h("li", {}, a))) : null,
      err !== null && err.message ? h("div", {}, [h("div", { class: "section-label" }, "Prior error"), prose(err.message, "md")]) : null,
      err !== null && err.detail !== undefined && err.detail !== null
        ? h("details", { class: "technical" }, [h("summary", {}, "Technical details"),
          h("pre", {}, typeof err.detail === "string" ? err.detail : JSON.stringify(err.detail, null, 2))])
        : null,
    ]);
  }

  function composeScreen(s: State): VNode {
    const efforts = s.config?.efforts ?? ["quick", "standard", "thorough"];
    const finished = s.runs.filter((r) => terminalStatus(r.status));
    const prior = finished.find((r) => r.runId === s.continuesFrom);
    return h("main", { class: "compose", id: "main" }, [
      h("h2", {}, "Compose a task"),
      h("form", { class: { "compose-form": true, "is-busy": s.composeBusy }, onsubmit: Submit }, [
        h("label", { for: "task-input" }, "Task"),
        h("textarea", { id: "task-input", rows: 8, value: s.task, oninput: TaskInput, placeholder: "What should the guild do?" }),
        h("div", { class: "compose-row" }, [
          h("label", {}, ["Effort ", h("select", { onchange: EffortInput }, [
            h("option", { value: "", selected: s.effort === "" }, "project default" + (s.defaultEffort ? " (" + s.defaultEffort + ")" : "")),
            ...efforts.map((e) => h("option", { value: e, selected: s.effort === e }, e)),
          ])]),
          s.effort !== "" ? h("button", { type: "button", onclick: SaveDefault }, "Save as default") : null,
          h("label", {}, ["Continue from ", h("select", { onchange: ContinueInput }, [
            h("option", { value: "", selected: s.continuesFrom === "" }, "a new task"),
            ...finished.map((r) => h("option", { value: r.runId, selected: s.continuesFrom === r.runId }, r.runId + " · " + runLabel(r))),
          ])]),
        ]),
        prior !== undefined ? reference(prior) : null,
        h("div", { class: "actions" }, [
          h("button", { type: "submit", class: "primary", disabled: s.composeBusy || s.task.trim() === "" }, "Start run"),
        ]),
        s.composeNotice !== "" ? h("p", { class: "notice" }, s.composeNotice) : null,
      ]),
    ]);
  }

  function queueTabLabel(s: State): string {
    const parked = s.queue.filter((it) => it.status === "needs_input").length;
    const waiting = s.queue.filter((it) => it.status === "waiting").length;
    return "Queue" + (waiting > 0 ? " (" + waiting + ")" : "") + (parked > 0 ? " ?" : "");
  }

  function queueScreen(s: State): VNode {
    const answering = s.queue.find((it) => it.id === s.queueAnswerFor && it.status === "needs_input");
    return h("main", { class: "queue", id: "main" }, [
      h("h2", {}, "Queue"),
      renderQueue({
        items: s.queue, efforts: s.config?.efforts ?? ["quick", "standard", "thorough"],
        task: s.queueTask, effort: s.queueEffort, busy: s.queueBusy, notice: s.queueNotice,
        edit: s.queueEdit, expanded: s.queueExpanded,
        onTask: QueueTask, onEffort: QueueEffort, onAdd: QueueAdd,
        onMove: (id: string, delta: number) => [QueueMove, { id, delta }],
        onTop: (id: string) => [QueueTop, id],
        onCancel: (id: string) => [QueueCancel, id],
        onRequeue: (id: string) => [QueueRequeue, id],
        onEdit: (it: QueueItem) => [QueueEditOpen, it],
        onEditTask: QueueEditTask, onEditEffort: QueueEditEffort, onEditSave: QueueEditSave, onEditClose: QueueEditClose,
        onAnswer: (id: string) => [QueueAnswerOpen, id],
        onToggle: (id: string) => [QueueToggle, id],
        onWatch: (runId: string) => [Watch, runId],
      }),
      answering !== undefined ? h("div", { class: "queue-modal-host" }, [
        renderQuestionModal({
          question: parkedQuestion(answering), runLabel: (answering.runId ?? answering.id) + " · queued task " + answering.id,
          askerLabel: "A queued task", draft: s.queueAnswerDraft, busy: s.queueAnswerBusy, notice: s.queueAnswerNotice,
          onDraft: QueueAnswerDraft, onOption: (label: string) => [QueueAnswerOption, label], onSubmit: QueueAnswerSubmit,
          onClose: QueueAnswerClose,
        }),
      ]) : null,
    ]);
  }

  // afterRender keeps the live DOM in step with what was just drawn: the
  // canvas size is measured, the sequence view's scroll position follows
  // the newest row or a selection, and focus moves into (and back out of)
  // a modal. It runs as a microtask after hyperapp's patch.
  function afterRender(s: State): void {
    const stage = document.querySelector(".stage-canvas");
    if (stage !== observed) {
      if (observed !== null) {
        resize.unobserve(observed);
      }
      observed = stage;
      if (stage !== null) {
        resize.observe(stage);
      }
    }
    const seq = document.querySelector<HTMLElement>(".seq-scroll");
    if (seq !== null) {
      if (seqScrollTo !== null) {
        seq.scrollTop = seqScrollTo;
        seqScrollTo = null;
      } else if (s.seqFollow) {
        const bottom = seq.scrollHeight - seq.clientHeight;
        if (Math.abs(seq.scrollTop - bottom) > 1) {
          seq.scrollTop = bottom;
        }
      }
    }
    focus.sync();
    if (perfMerge >= 0 && perfRender >= 0) {
      const patched = performance.now();
      void document.body.offsetHeight; // style and layout of this frame, inside the measure
      const render = performance.now() - perfRender;
      performance.measure("gh:frame", {
        start: perfRender - perfMerge, duration: perfMerge + render,
        detail: { merge: perfMerge, view: perfView - perfRender, patch: patched - perfView, layout: performance.now() - patched },
      });
      perfMerge = -1;
      perfRender = -1;
    }
  }

  function view(s: State): VNode {
    if (perfMerge >= 0) {
      perfRender = performance.now();
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
    if (perfRender >= 0) {
      perfView = performance.now();
    }
    return tree;
  }

  app<State>({
    init: [initialState, effect(() => send(Init, null))],
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
