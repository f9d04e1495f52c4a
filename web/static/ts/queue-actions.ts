// The Queue screen's actions: adding, reordering, editing, cancelling and
// requeueing tasks, and answering a parked task's question. What the
// server refuses is said in the program's words (QUEUE_ERRORS).

import type { QueueItem } from "./queue-view.js";
import { enc, type Reply } from "./api.js";
import type { Action, State } from "./state.js";
import type { Client } from "./client.js";

/** QueueActions is the table makeQueueActions builds. */
export type QueueActions = ReturnType<typeof makeQueueActions>;

/** makeQueueActions builds the Queue screen's actions over c. */
export function makeQueueActions(c: Client) {
  const { send, api, effect } = c;
  const { Patch } = c.act;

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
      void c.fetch.refreshQueue();
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
        void c.fetch.refreshQueue();
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
        void c.fetch.refreshQueue();
      })();
    })];
  };
  const QueueAnswerSubmit: Action<Event> = (s, ev) => {
    ev.preventDefault();
    return sendQueueAnswer(s, s.queueAnswerDraft);
  };
  const QueueAnswerOption: Action<string> = (s, label) => sendQueueAnswer(s, label);

  return {
    QueueLoaded,
    QueueTask,
    QueueEffort,
    QueueAdd,
    QueueMove,
    QueueTop,
    QueueCancel,
    QueueRequeue,
    QueueToggle,
    QueueEditOpen,
    QueueEditTask,
    QueueEditEffort,
    QueueEditClose,
    QueueEditSave,
    QueueAnswerOpen,
    QueueAnswerClose,
    QueueAnswerDraft,
    QueueAnswerSubmit,
    QueueAnswerOption,
  };
}
