// The fetchers: every read of the API, the event stream that says when to
// read again, and the boot that starts both. What they read goes into the
// State through actions; the fetch bookkeeping (one flow request at a time,
// the run view's debounce, the questions already announced) stays here.

import { FLOW_ONLY_EVENTS, STREAM_FLUSH_MS } from "./state.js";
import type { Envelope } from "./model.js";
import type { PendingQuestion } from "./question-modal.js";
import type { Thread } from "./thread-view.js";
import type { QueueItem } from "./queue-view.js";
import type { ChangeSet } from "./changes-view.js";
import { onFocusin, onKeydown } from "./modal.js";
import {
  enc, serverURL, type Config, type EgressNote, type HealthView, type McpNote, type RunSummary, type RunView, type Transcript,
} from "./api.js";
import type { Client } from "./client.js";

/** Fetchers is the table makeFetchers builds. */
export type Fetchers = ReturnType<typeof makeFetchers>;

/** makeFetchers builds the fetchers over c; c.act, c.queue and c.stage must be made. */
export function makeFetchers(c: Client) {
  const { send, api, getState } = c;
  const { Patch, FlowLoaded, RunLoaded, QuestionsLoaded, ViewRun, StreamDelta } = c.act;
  const { QueueLoaded } = c.queue;
  const { DetailsLoaded } = c.stage;
  // Fetch bookkeeping, not view state.
  let flowBusy = false;
  let flowDirty = false;
  let runTimer: number | undefined;
  const seenQuestions = new Set<string>();

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

  // reloadFlow asks for the viewed run's flow again from its start: a delta
  // that did not follow the version held.
  function reloadFlow(): void {
    flowDirty = true;
    void refreshFlow();
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

  async function loadChanges(runId: string): Promise<void> {
    const res = await api<ChangeSet & { error?: string }>(`/api/runs/${enc(runId)}/changes`);
    if (getState().runId !== runId) {
      return;
    }
    const error = !res.ok || res.body === null ? "the change set could not be read" : res.body.error ?? "";
    send(Patch, { changes: { runId, set: error === "" ? res.body : null, error } });
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
    const audio = c.audio;
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

  // ---- the event stream ----

  function connect(): void {
    const es = new EventSource(serverURL("/api/events")); // same-origin: the cookie goes along
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

  return {
    refreshFlow,
    reloadFlow,
    refreshRun,
    scheduleRun,
    refreshQuestions,
    refreshHealth,
    refreshRuns,
    refreshThread,
    refreshQueue,
    loadDetails,
    loadChanges,
    loadPlan,
    loadTranscript,
    refreshAll,
    beep,
    connect,
    boot,
  };
}
