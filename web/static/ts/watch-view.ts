// The Watch screen: the run's task, its pause card, the now caption and the
// controls, the stage (stage.ts) and the side panel (roles, plan,
// questions, interrupts, the streamed reply), the transcript, the task
// history drawer, and the page overlays over it (question, result,
// interrupt). Agent prose goes through prose() (the sanitized Markdown
// pipeline); every machine field is a text node.

import { h, type VNode, type Child } from "./hyperapp.js";
import { prose } from "./prose.js";
import { terminalStatus } from "./model.js";
import { LabelResolver, deriveCostStrip, deriveNowCaption } from "./labels.js";
import { plainLine } from "./title.js";
import { renderTooltip } from "./tooltip.js";
import { renderQuestionModal, type PendingQuestion } from "./question-modal.js";
import { renderResultModal } from "./result-modal.js";
import { renderTaskIdentity, renderThreadBody } from "./thread-view.js";
import type { Meters, Transcript } from "./api.js";
import { PAUSE_COPY, ROLE_LIST_MAX, compactTokens, formatTime, prettyJSON, runLabel, type State } from "./state.js";
import type { Client } from "./client.js";

/** makeWatchView builds the Watch screen's views over c. */
export function makeWatchView(c: Client) {
  const { Patch, DeferQuestion, ShowQuestion, CopyText, CopyRaw, AnswerDraft, AnswerSubmit, AnswerOption, CloseResult, control, OpenInterrupt, CloseInterrupt, InterruptKind, InterruptDraft, InterruptSubmit, TogglePlan, OpenTranscript, ComposeFrom, ToggleChange, ToggleTask } = c.act;
  const { StageOver, ClosePin, StageLeave, CardEnter, CardLeave, flowStage, sequenceStage, tooltipContent } = c.stage;

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

  // meters are the model's name and the context its latest caller fills,
  // as the terminal's footer and pane header show them: machine fields as
  // text, the bar in the terminal's glyphs.
  function meters(m: Meters | null | undefined): VNode | null {
    if (m === null || m === undefined || (!m.model && m.context <= 0)) {
      return null;
    }
    const parts: VNode[] = [];
    if (m.model) {
      parts.push(h("span", { class: "model-name", title: "The model this run uses" }, m.model));
    }
    if (m.context > 0 && m.window > 0) {
      const frac = Math.min(1, m.context / m.window);
      const cells = Math.max(1, Math.min(10, Math.round(frac * 10)));
      parts.push(h("span", {
        class: "context-meter context-meter--" + (frac >= 0.9 ? "full" : frac >= 0.7 ? "high" : "ok"), role: "meter",
        "aria-label": "Context window used" + (m.roleId ? " by " + m.roleId : ""),
        "aria-valuemin": "0", "aria-valuemax": String(m.window), "aria-valuenow": String(m.context),
        "aria-valuetext": compactTokens(m.context) + " of " + compactTokens(m.window) + " tokens",
      }, "context " + "▰".repeat(cells) + "▱".repeat(10 - cells) + " " + compactTokens(m.context) + " of " + compactTokens(m.window)));
    }
    return h("span", { class: "meters" }, parts);
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
      thread !== null ? renderTaskIdentity(thread, title, {
        task: run !== null && thread.lineage.length <= 1 ? run.task : thread.identity.firstTask, open: s.taskOpen, onToggle: ToggleTask,
      }) : null,
      pauseCard(s),
      h("div", { class: "watch-bar" }, [
        h("div", { class: "now" }, [
          h("span", { class: "now-caption" }, deriveNowCaption(s.flow, r)),
          h("span", { class: "cost-strip" }, deriveCostStrip(s.flow.totals).map((part) => h("span", { class: "cost" }, part))),
          meters(run?.meters),
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
        changes: s.changes !== null && s.changes.runId === run.runId ? {
          changes: s.changes, open: s.changeOpen, later: s.runs.length > 0 && s.runs[0].runId !== run.runId,
          onToggle: (path: string) => [ToggleChange, path],
        } : undefined,
      }));
    }
    if (s.interruptOpen) {
      out.push(interruptModal(s));
    }
    return out;
  }

  return { pauseCard, interruptModal, sidePanel, transcriptView, drawer, pendingQuestion, watchScreen, watchModals };
}
