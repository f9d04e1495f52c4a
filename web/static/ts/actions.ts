// The console's actions: what a click, a key or an answer from the server
// does to the State. Loading, the screens, questions and answers, the
// result, run control, interrupts, the plan, transcripts, preferences,
// Compose and resuming from History. The queue's actions are in
// queue-actions.ts, the run stage's (flow graph, sequence view, inspector)
// in stage.ts.

import { emptyModel, merge, terminalStatus, type Envelope } from "./model.js";
import type { Tier } from "./labels.js";
import type { PendingQuestion } from "./question-modal.js";
import type { QueueItem } from "./queue-view.js";
import { enc, type RunView } from "./api.js";
import { STREAM_TAIL, type Action, type Screen, type State } from "./state.js";
import type { Client } from "./client.js";

/** Actions is the table makeActions builds. */
export type Actions = ReturnType<typeof makeActions>;

/** makeActions builds the console's actions over c. */
export function makeActions(c: Client) {
  const { send, api, effect } = c;

  const Patch: Action<Partial<State>> = (s, p) => ({ ...s, ...p });

  const Init: Action<null> = (s) => [s, effect(() => void c.fetch.boot())];

  // With window.__ghPerf set (the browser benchmark sets it), each flow
  // update is timed with the Performance API: the merge of the envelope,
  // then the frame it produced (view, patch, style and layout), recorded as
  // one "gh:frame" measure whose duration is their sum (the wait for the
  // next animation frame between them is not work, so it is left out).
  const perf = c.perf;
  const FlowLoaded: Action<{ runId: string; env: Envelope }> = (s, p) => {
    if (perf.on) {
      const t0 = performance.now();
      const out = flowLoaded(s, p);
      perf.merge = Math.max(perf.merge, 0) + performance.now() - t0;
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
        c.fetch.reloadFlow();
      })];
    }
    const flow = merge(base, p.env);
    flow.runId = p.runId;
    return { ...s, flow };
  };

  // A finished run's change set is read once it is seen finished (the
  // result shows it), as the terminal's result card does.
  const RunLoaded: Action<RunView> = (s, run) => {
    if (run.runId !== s.runId) {
      return s;
    }
    if (terminalStatus(run.status) && (s.changes === null || s.changes.runId !== run.runId)) {
      return [{ ...s, run, changes: { runId: run.runId, set: null, error: "" }, changeOpen: "" },
        effect(() => void c.fetch.loadChanges(run.runId))];
    }
    return { ...s, run };
  };
  const ToggleChange: Action<string> = (s, path) => ({ ...s, changeOpen: s.changeOpen === path ? "" : path });
  const ToggleTask: Action<unknown> = (s) => ({ ...s, taskOpen: !s.taskOpen });

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
      transcript: null, stream: null, thread: null, interruptOpen: false, copied: false, changes: null, changeOpen: "", taskOpen: false,
      flowCam: { x: 0, y: 0, k: s.flowCam.k }, flowFollow: true, flowSel: "", seqTop: 0, seqLeft: 0, seqFollow: true, seqSel: -1,
    }, effect(() => {
      void c.fetch.refreshFlow();
      void c.fetch.refreshRun();
      void c.fetch.refreshThread();
    })];
  };

  const Watch: Action<string> = (s, runId) => {
    const next = ViewRun({ ...s, screen: "watch", follow: runId === "" }, runId);
    return next;
  };

  const SetScreen: Action<Screen> = (s, screen) => [{ ...s, screen, tip: null, historyNotice: "" },
    screen === "history" || screen === "compose" ? effect(() => void c.fetch.refreshRuns())
      : screen === "queue" ? effect(() => void c.fetch.refreshQueue()) : null];

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
        void c.fetch.refreshQuestions();
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
      c.fetch.scheduleRun();
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
        c.fetch.scheduleRun();
      })();
    })];
  };

  const TogglePlan: Action<unknown> = (s) => {
    const open = !s.planOpen;
    const runId = s.runId;
    return [{ ...s, planOpen: open }, open ? effect(() => void c.fetch.loadPlan(runId)) : null];
  };

  const OpenTranscript: Action<string> = (s, roleId) => {
    const runId = s.runId;
    return [s, effect(() => void c.fetch.loadTranscript(runId, roleId))];
  };

  const ToggleSound: Action<unknown> = (s) => {
    const on = !s.sound;
    if (on && c.audio === null) {
      try {
        c.audio = new AudioContext(); // created on this click: a user gesture
      } catch {
        c.audio = null;
      }
    }
    return { ...s, sound: on };
  };

  const SetTier: Action<Event> = (s, ev) => ({ ...s, tier: (ev.target as HTMLSelectElement).value as Tier });

  const Toggle: Action<string> = (s, id) => ({ ...s, expanded: s.expanded === id ? "" : id });

  const ComposeFrom: Action<string> = (s, runId) => [{ ...s, screen: "compose", continuesFrom: runId }, effect(() => void c.fetch.refreshRuns())];
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
          void c.fetch.refreshQueue();
          return;
        }
        if (res.status === 201 && res.body !== null && res.body.runId !== undefined) {
          send(Patch, { composeBusy: false, task: "", continuesFrom: "", composeNotice: "" });
          send(Watch, res.body.runId ?? "");
          send(Patch, { follow: true });
          void c.fetch.refreshRuns();
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
      void c.fetch.refreshRuns();
    })();
  })];

  return {
    Patch,
    Init,
    FlowLoaded,
    RunLoaded,
    ToggleChange,
    ToggleTask,
    QuestionsLoaded,
    ViewRun,
    Watch,
    SetScreen,
    StreamDelta,
    DeferQuestion,
    ShowQuestion,
    CopyText,
    CopyRaw,
    AnswerDraft,
    AnswerSubmit,
    AnswerOption,
    CloseResult,
    control,
    OpenInterrupt,
    CloseInterrupt,
    InterruptKind,
    InterruptDraft,
    InterruptSubmit,
    TogglePlan,
    OpenTranscript,
    ToggleSound,
    SetTier,
    Toggle,
    ComposeFrom,
    TaskInput,
    EffortInput,
    ContinueInput,
    SaveDefault,
    Submit,
    ResumeRun,
  };
}
