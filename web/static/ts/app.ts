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
import { renderFlow, renderSequence } from "./run-stage/index.js";
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
  | { kind: "participant"; id: string }
  | { kind: "role"; id: string; roleKind: "role" | "tool" };

interface Tip {
  target: Target;
  x: number;
  y: number;
  hideToken: number;
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
}

const initialState: State = {
  config: null, tier: "friendly", screen: "watch", view: "flow", follow: true,
  runId: "", run: null, flow: emptyModel(), questions: [], answerDraft: "", answerBusy: false, answerNotice: "",
  health: null, tip: null, details: null, resultSeenFor: "", copied: false,
  interruptOpen: false, interruptKind: "inquiry", interruptDraft: "", interruptNotice: "",
  planOpen: false, plan: null, runs: [], expanded: "",
  task: "", effort: "", continuesFrom: "", composeBusy: false, composeNotice: "", defaultEffort: "",
  transcript: null, stream: null, sound: false, thread: null, drawerOpen: false, notice: "", historyNotice: "", egress: null,
  queue: [], queueTask: "", queueEffort: "", queueBusy: false, queueNotice: "", queueEdit: null, queueExpanded: "",
  queueAnswerFor: "", queueAnswerDraft: "", queueAnswerBusy: false, queueAnswerNotice: "",
  authLost: false,
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
const STREAM_FLUSH_MS = 200;

function firstLine(s: string): string {
  const line = s.trim().split("\n")[0] ?? "";
  return line.length > 120 ? line.slice(0, 119) + "…" : line;
}

/** runLabel is the one-line label of a run: its summary, else its task's first line (text only). */
function runLabel(r: RunSummary | null): string {
  if (r === null) {
    return "";
  }
  return r.summary !== null && r.summary !== "" ? firstLine(r.summary) : firstLine(r.task);
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

  const FlowLoaded: Action<{ runId: string; env: Envelope }> = (s, p) => {
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
    if (s.tip === null || s.tip.hideToken !== 0) {
      return s;
    }
    const token = ++tipSeq;
    return [{ ...s, tip: { ...s.tip, hideToken: token } }, effect(() => {
      window.setTimeout(() => send(HideIf, token), 300);
    })];
  };
  const StageOver: Action<MouseEvent> = (s, ev) => {
    const target = targetOf(ev);
    if (target === null) {
      return scheduleHide(s);
    }
    if (s.tip !== null && sameTarget(s.tip.target, target)) {
      return s.tip.hideToken === 0 ? s : { ...s, tip: { ...s.tip, hideToken: 0 } };
    }
    const tip: Tip = { target, x: ev.clientX, y: ev.clientY, hideToken: 0 };
    if (target.kind === "operation") {
      const runId = s.runId;
      return [{ ...s, tip, details: null }, effect(() => void loadDetails(runId, target.id))];
    }
    return { ...s, tip };
  };
  const StageLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const CardEnter: Action<MouseEvent> = (s) => (s.tip === null ? s : { ...s, tip: { ...s.tip, hideToken: 0 } });
  const CardLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const DetailsLoaded: Action<{ opId: string; text: string }> = (s, d) =>
    (s.tip !== null && s.tip.target.kind === "operation" && s.tip.target.id === d.opId ? { ...s, details: d } : s);

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
      scheduleRun();
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
        case "provider_failure":
          void refreshHealth();
          void refreshRuns();
          void refreshThread();
          break;
      }
    });
    es.addEventListener("queue", () => void refreshQueue());
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
      h("button", { type: "button", class: { tab: true, "is-active": s.screen === screen }, onclick: [SetScreen, screen] }, label);
    return h("header", { class: "top-bar" }, [
      h("div", { class: "brand" }, "Guildhall"),
      h("div", { class: "run-identity" }, [
        h("span", { class: "run-label" }, s.run !== null ? runLabel(s.run) : "No run yet"),
        s.run !== null ? h("span", { class: "status status--" + s.run.status }, s.run.status) : null,
        s.run !== null ? h("span", { class: "effort" }, "effort " + s.run.effort) : null,
      ]),
      h("nav", { class: "tabs" }, [tab("watch", "Watch"), tab("history", "History"), tab("compose", "Compose"),
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
      case "participant":
        return deriveParticipantTooltip(s.flow, r, t.id);
      case "role":
        return deriveRoleTooltip(s.flow, r, t.roleKind, t.id);
    }
  }

  function interruptModal(s: State): VNode {
    return h("div", { class: "stage-modal interrupt-modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "interrupt-heading" }, [
      h("form", { class: "modal-card", onsubmit: InterruptSubmit }, [
        h("div", { class: "modal-runlabel" }, "Run " + s.runId),
        h("h2", { id: "interrupt-heading" }, "Interrupt the run"),
        h("p", { class: "muted" }, "Ask the run a question, or change its plan. It takes this up at its next safe point."),
        h("div", { class: "kind-choice" }, [
          h("label", {}, [h("input", { type: "radio", name: "ikind", checked: s.interruptKind === "inquiry", onchange: [InterruptKind, "inquiry"] }), " Ask a question"]),
          h("label", {}, [h("input", { type: "radio", name: "ikind", checked: s.interruptKind === "plan_modification", onchange: [InterruptKind, "plan_modification"] }), " Change the plan"]),
        ]),
        h("textarea", { rows: 4, value: s.interruptDraft, oninput: InterruptDraft, "aria-label": "Message" }),
        h("div", { class: "modal-actions" }, [
          h("button", { type: "button", onclick: CloseInterrupt }, "Close"),
          h("button", { type: "submit", class: "primary", disabled: s.interruptDraft.trim() === "" }, "Send"),
        ]),
        s.interruptNotice !== "" ? h("p", { class: "notice" }, s.interruptNotice) : null,
      ]),
    ]);
  }

  function sidePanel(s: State, r: LabelResolver): VNode {
    const run = s.run;
    const items: Child[] = [];
    if (run !== null) {
      items.push(h("section", { class: "panel roles" }, [
        h("h3", {}, "Roles"),
        h("ul", {}, run.roles.map((role) => h("li", { key: role.id }, [
          h("button", { type: "button", class: "link", onclick: [OpenTranscript, role.id] },
            r.roleLabel("role", role.role) + " · " + role.id),
          h("span", { class: "status status--" + role.status }, role.status),
        ]))),
      ]));
      items.push(h("section", { class: "panel plan" }, [
        h("button", { type: "button", class: "disclosure", "aria-expanded": String(s.planOpen), onclick: TogglePlan },
          s.planOpen ? "▾ Plan" : "▸ Plan"),
        s.planOpen ? (s.plan === null ? h("p", { class: "muted" }, "Loading…")
          : s.plan === "" ? h("p", { class: "muted" }, "No plan was written for this run.") : prose(s.plan, "md plan-body")) : null,
      ]));
      if (run.questions.length > 0) {
        items.push(h("section", { class: "panel question-history" }, [
          h("h3", {}, "Questions"),
          ...run.questions.map((q) => h("div", { class: "qa", key: q.id }, [
            prose(q.question, "md"),
            q.answered ? h("p", { class: "answer" }, ["Answer: ", h("span", { class: "answer-text" }, q.answer ?? "")])
              : h("p", { class: "muted" }, "Waiting for an answer"),
          ])),
        ]));
      }
      if (run.interrupts.length > 0 || run.planModifications.length > 0) {
        items.push(h("section", { class: "panel interrupt-history" }, [
          h("h3", {}, "Interrupts"),
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
      if (s.stream !== null && s.stream.text !== "") {
        items.push(h("section", { class: "panel stream" }, [
          h("h3", {}, "Replying now · " + s.stream.roleId),
          prose(s.stream.text, "md stream-text"),
        ]));
      }
    }
    return h("aside", { class: "side" }, items);
  }

  function transcriptView(t: Transcript, r: LabelResolver): VNode {
    return h("div", { class: "transcript", role: "dialog", "aria-label": "Transcript" }, [
      h("div", { class: "transcript-head" }, [
        h("h3", {}, r.roleLabel("role", t.role) + " · " + t.roleId),
        h("button", { type: "button", onclick: [Patch, { transcript: null }] }, "Close"),
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
        h("h3", {}, "Task history"),
        h("button", { type: "button", onclick: [Patch, { drawerOpen: false }] }, "Close"),
      ]),
      t === null ? h("p", { class: "muted" }, "Loading…") : renderThreadBody(t),
    ]);
  }

  function watchScreen(s: State, r: LabelResolver): VNode {
    const run = s.run;
    const live = run !== null && run.active;
    const question = s.questions.find((q) => q.runId === s.runId);
    const showResult = run !== null && terminalStatus(run.status) && s.resultSeenFor !== run.runId && question === undefined;
    const tipContent = tooltipContent(s, r);
    const asker = question !== undefined ? s.flow.participants.find((p) => p.roleId === question.roleId) : undefined;
    return h("main", { class: "watch" }, [
      s.thread !== null && s.thread.runId === s.runId ? renderTaskIdentity(s.thread) : null,
      pauseCard(s),
      h("div", { class: "watch-bar" }, [
        h("div", { class: "now" }, [
          h("span", { class: "now-caption" }, deriveNowCaption(s.flow, r)),
          h("span", { class: "cost-strip" }, deriveCostStrip(s.flow.totals).map((part) => h("span", { class: "cost" }, part))),
        ]),
        h("div", { class: "controls" }, [
          h("div", { class: "toggle", role: "group", "aria-label": "View" }, [
            h("button", { type: "button", class: { "is-active": s.view === "flow" }, onclick: [Patch, { view: "flow" }] }, "Flow"),
            h("button", { type: "button", class: { "is-active": s.view === "sequence" }, onclick: [Patch, { view: "sequence" }] }, "Sequence"),
          ]),
          live && run?.status === "running" ? h("button", { type: "button", onclick: control("pause") }, "Pause") : null,
          live ? h("button", { type: "button", onclick: OpenInterrupt }, "Interrupt") : null,
          live ? h("button", { type: "button", class: "danger", onclick: control("terminate") }, "Terminate") : null,
          h("button", { type: "button", onclick: [Patch, { drawerOpen: !s.drawerOpen }] }, "Task history"),
          run !== null && !live && terminalStatus(run.status) ? h("button", { type: "button", onclick: [ComposeFrom, run.runId] }, "Continue…") : null,
        ]),
      ]),
      s.notice !== "" ? h("p", { class: "notice" }, s.notice) : null,
      run !== null && run.interruptPending ? h("p", { class: "notice" }, "An interrupt is waiting for the run's next safe point.") : null,
      h("div", { class: "watch-body" }, [
        h("div", { class: "pb-flow stage", onmouseover: StageOver, onmouseleave: StageLeave }, [
          s.runId === "" ? h("p", { class: "empty" }, "No run yet. Start one from Compose.")
            : s.view === "flow" ? renderFlow(s.flow, r) : renderSequence(s.flow, r),
          question !== undefined ? renderQuestionModal({
            question, runLabel: run !== null ? runLabel(run) : question.runId,
            askerLabel: asker !== undefined ? r.participantLabel(asker) : "The run",
            draft: s.answerDraft, busy: s.answerBusy, notice: s.answerNotice,
            onDraft: AnswerDraft, onOption: (label: string) => [AnswerOption, label], onSubmit: AnswerSubmit,
          }) : null,
          showResult && run !== null ? renderResultModal({
            runLabel: runLabel(run), status: run.status, result: run.result, error: run.error, copied: s.copied,
            onClose: CloseResult, onCopyRaw: (raw: string) => [CopyRaw, raw],
          }) : null,
          s.interruptOpen ? interruptModal(s) : null,
        ]),
        sidePanel(s, r),
      ]),
      tipContent !== null && s.tip !== null ? renderTooltip({ content: tipContent, x: s.tip.x, y: s.tip.y }, {
        onEnter: CardEnter, onLeave: CardLeave, onCopy: (src: string) => [CopyText, src],
      }) : null,
      s.transcript !== null ? transcriptView(s.transcript, r) : null,
      drawer(s),
    ]);
  }

  function historyScreen(s: State): VNode {
    return h("main", { class: "history" }, [
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
    return h("main", { class: "compose" }, [
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
    return h("main", { class: "queue" }, [
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

  function view(s: State): VNode {
    updateChrome(s);
    const r = new LabelResolver(s.config?.labels, s.tier);
    return h("div", { class: "app" }, [
      topBar(s),
      authBanner(s),
      healthBanner(s),
      egressLine(s),
      s.screen === "watch" ? watchScreen(s, r) : s.screen === "history" ? historyScreen(s)
        : s.screen === "queue" ? queueScreen(s) : composeScreen(s),
    ]);
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
