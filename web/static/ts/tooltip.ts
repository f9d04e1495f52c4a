// The run-view inspector: pure derivations of a hovered target into
// {title, sections}, and the card that renders them.
//
// Sections are rendered by kind: "json" as pretty-printed <pre> text,
// "markdown" (agent prose: details, summaries, questions) through the shared
// sanitized pipeline with a Copy Markdown button that copies the source
// verbatim, and "text" (scalars: status words, counts, times) as text. No
// section reaches the DOM as markup any other way.

import { h, type Child, type VNode } from "./hyperapp.js";
import { renderMarkdown } from "./markdown-render.js";
import type { ModelState } from "./model.js";
import { operationById, participantById, stackById } from "./model.js";
import { compactCount, formatSeconds, type LabelResolver } from "./labels.js";
import { failed, opVerdict, verdictText } from "./outcome.js";

export type SectionKind = "json" | "markdown" | "text";

export interface TooltipSection {
  label: string;
  kind: SectionKind;
  /** For json: the pretty-printed JSON; for markdown: the source; else the text. */
  content: string;
}

export interface TooltipContent {
  title: string;
  sections: TooltipSection[];
}

/**
 * formatTooltipContent turns one value into a section: an object or array
 * (or a string that JSON.parse turns into one, as the executor stores tool
 * arguments) becomes pretty-printed JSON; other strings are prose when
 * prose is true, else text; numbers and booleans are text.
 */
export function formatTooltipContent(label: string, value: unknown, prose: boolean): TooltipSection {
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(trimmed);
        if (parsed !== null && typeof parsed === "object") {
          return { label, kind: "json", content: JSON.stringify(parsed, null, 2) };
        }
      } catch {
        // not JSON: prose or text below
      }
    }
    return { label, kind: prose ? "markdown" : "text", content: value };
  }
  if (value !== null && typeof value === "object") {
    return { label, kind: "json", content: JSON.stringify(value, null, 2) };
  }
  return { label, kind: "text", content: String(value) };
}

function formatTime(iso: string | null | undefined): string {
  if (!iso) {
    return "";
  }
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

function metricsText(m: { tokens: number; cachedPromptTokens: number; elapsedSeconds: number }): string {
  const parts = [compactCount(m.tokens) + " tokens"];
  if (m.cachedPromptTokens > 0) {
    parts.push(compactCount(m.cachedPromptTokens) + " cached");
  }
  parts.push(formatSeconds(m.elapsedSeconds));
  return parts.join(" · ");
}

/**
 * deriveOperationTooltip describes an operation: its resolved label, kind,
 * status, times and counters as text, and its details (fetched separately
 * with ?operation=ID) as Markdown. Null when the id is unknown.
 */
export function deriveOperationTooltip(m: ModelState, r: LabelResolver, opId: string, details?: string): TooltipContent | null {
  const op = operationById(m, opId);
  if (op === undefined) {
    return null;
  }
  const src = participantById(m, op.source);
  const dst = participantById(m, op.destination);
  const title = src !== undefined && dst !== undefined ? r.operationLabel(op, src, dst) : op.kind;
  const sections: TooltipSection[] = [];
  let status: string = op.lifecycle === "in_flight" ? "in flight" : "settled";
  const v = opVerdict(op);
  if (v.glyph !== "") {
    status += " · " + verdictText(v);
  }
  if (op.errorKind && op.errorKind !== v.detail) {
    status += " (" + op.errorKind + ")";
  }
  sections.push({ label: "Status", kind: "text", content: status });
  if (src !== undefined && dst !== undefined) {
    sections.push({ label: "From → to", kind: "text", content: r.participantLabel(src) + " → " + r.participantLabel(dst) });
  }
  const when = formatTime(op.startedAt) + (op.settledAt ? " → " + formatTime(op.settledAt) : "");
  sections.push({ label: "Time", kind: "text", content: when });
  if (op.kind === "call" && (op.metrics.tokens > 0 || op.metrics.elapsedSeconds > 0)) {
    sections.push({ label: "Usage", kind: "text", content: metricsText(op.metrics) });
  }
  const stack = stackById(m, op.stack);
  if (stack !== undefined && stack.id !== "main") {
    sections.push({ label: "Stack", kind: "text", content: stack.id + (stack.trigger ? " (" + stack.trigger + ")" : "") });
  }
  if (details !== undefined && details !== "") {
    sections.push(formatTooltipContent("Details", details, true));
  } else if (op.hasDetails) {
    sections.push({ label: "Details", kind: "text", content: "Loading…" });
  }
  return { title, sections };
}

/**
 * A tool node of the flow graph: the calls its caller made (operation
 * indices, oldest first) and the details of the latest one's result, once
 * loaded. A tool has a node under each role that called it, and its
 * inspector is about that role's calls only.
 */
export interface ToolNodeCalls {
  caller: string;
  callOps: readonly number[];
  latestResult?: string;
}

/** toolCallsSections lists a tool node's calls, newest first, each with its outcome by the one rule. */
function toolCallsSections(m: ModelState, r: LabelResolver, node: ToolNodeCalls): TooltipSection[] {
  const caller = participantById(m, node.caller);
  const who = caller !== undefined ? r.participantLabel(caller) : node.caller;
  let bad = 0;
  const lines: string[] = [];
  for (let k = node.callOps.length - 1; k >= 0; k--) {
    const call = m.operations[node.callOps[k]];
    if (call === undefined) {
      continue;
    }
    const ret = call.closedBy !== undefined ? operationById(m, call.closedBy) : undefined;
    const v = call.open === true ? null : ret !== undefined ? opVerdict(ret) : opVerdict(call);
    if (v !== null && failed(v)) {
      bad++;
    }
    if (lines.length < 8) {
      lines.push("#" + (k + 1) + " " + (v === null ? "… running" : verdictText(v)) + " · " + formatSeconds(call.metrics.elapsedSeconds));
    }
  }
  const head = "Calls by " + who + ": " + node.callOps.length + (bad > 0 ? " (" + bad + " failed)" : "");
  const out: TooltipSection[] = [{ label: head, kind: "text", content: lines.join("\n") }];
  if (node.latestResult !== undefined && node.latestResult !== "") {
    out.push({ label: "Latest call's output", kind: "markdown", content: node.latestResult });
  }
  return out;
}

/** deriveParticipantTooltip describes one lifeline: a role instance, a tool, the human; a tool node also lists its caller's calls. */
export function deriveParticipantTooltip(m: ModelState, r: LabelResolver, participantId: string, node?: ToolNodeCalls): TooltipContent | null {
  const p = participantById(m, participantId);
  if (p === undefined) {
    return null;
  }
  const sections: TooltipSection[] = [{ label: "Kind", kind: "text", content: p.kind }];
  if (p.kind === "role" || p.kind === "tool") {
    sections.push({ label: p.kind === "role" ? "Role" : "Tool", kind: "text", content: p.role });
  }
  if (p.roleId) {
    sections.push({ label: "Instance", kind: "text", content: p.roleId });
  }
  const desc = r.participantDescription(p);
  if (desc !== "") {
    sections.push({ label: "About", kind: "text", content: desc });
  }
  sections.push({ label: "Invocations", kind: "text", content: String(p.invocations) });
  if (p.turns !== undefined && p.turns > 0) {
    sections.push({ label: "Model turns", kind: "text", content: String(p.turns) });
  }
  sections.push({ label: "Total", kind: "text", content: metricsText(p.metrics) });
  if (p.kind === "tool" && node !== undefined && node.callOps.length > 0) {
    sections.push(...toolCallsSections(m, r, node));
  }
  return { title: r.participantLabel(p), sections };
}

/** deriveRoleTooltip describes a role or tool type across its instances (the top bar). */
export function deriveRoleTooltip(m: ModelState, r: LabelResolver, kind: "role" | "tool", role: string): TooltipContent | null {
  const ps = m.participants.filter((p) => p.kind === kind && p.role === role);
  if (ps.length === 0) {
    return null;
  }
  const total = { tokens: 0, cachedPromptTokens: 0, elapsedSeconds: 0 };
  let invocations = 0;
  for (const p of ps) {
    total.tokens += p.metrics.tokens;
    total.cachedPromptTokens += p.metrics.cachedPromptTokens;
    total.elapsedSeconds += p.metrics.elapsedSeconds;
    invocations += p.invocations;
  }
  const sections: TooltipSection[] = [{ label: kind === "role" ? "Role" : "Tool", kind: "text", content: role }];
  const desc = r.participantDescription({ kind, role });
  if (desc !== "") {
    sections.push({ label: "About", kind: "text", content: desc });
  }
  if (kind === "role") {
    sections.push({ label: "Instances", kind: "text", content: String(ps.length) });
  }
  sections.push({ label: "Invocations", kind: "text", content: String(invocations) });
  sections.push({ label: "Total", kind: "text", content: metricsText(total) });
  return { title: r.roleLabel(kind, role), sections };
}

/** Where the card floats and what it shows. */
export interface TooltipCard {
  content: TooltipContent;
  x: number;
  y: number;
  /**
   * A pinned card was opened by a click or Enter: it stays until closed
   * (Esc or its Close button) and sits at the side of the page (a bottom
   * sheet on a narrow screen) instead of following the pointer.
   */
  pinned?: boolean;
}

export interface TooltipHandlers {
  onEnter: unknown;
  onLeave: unknown;
  onCopy: (source: string) => unknown;
  /** Closes a pinned card. */
  onClose?: unknown;
}

function sectionBody(s: TooltipSection, on: TooltipHandlers): Child[] {
  switch (s.kind) {
    case "json":
      return [h("pre", { class: "tooltip-json" }, s.content)];
    case "markdown":
      return [
        h("div", { class: "md" }, renderMarkdown(s.content)),
        h("button", { type: "button", class: "copy-md", onclick: on.onCopy(s.content) }, "Copy Markdown"),
      ];
    default:
      return [h("span", { class: "tooltip-text" }, s.content)];
  }
}

/** renderTooltip is the card: a fixed overlay the pointer may enter. */
export function renderTooltip(card: TooltipCard, on: TooltipHandlers): VNode {
  const width = Math.min(420, window.innerWidth - 16);
  const left = Math.max(8, Math.min(card.x + 14, window.innerWidth - width - 8));
  const top = Math.max(8, Math.min(card.y + 14, window.innerHeight - 120));
  const pinned = card.pinned === true;
  return h("div", {
    class: "tooltip-card" + (pinned ? " tooltip-card--pinned" : ""), role: "dialog", "aria-label": card.content.title,
    style: pinned ? {} : { left: left + "px", top: top + "px", width: width + "px" },
    onmouseenter: on.onEnter, onmouseleave: on.onLeave,
  }, [
    pinned && on.onClose !== undefined
      ? h("div", { class: "tooltip-head" }, [
        h("h2", { class: "tooltip-title", id: "inspector-title" }, card.content.title),
        h("button", { type: "button", class: "inspector-close", onclick: on.onClose, "aria-label": "Close the inspector", "data-esc": "" }, "Close"),
      ])
      : h("div", { class: "tooltip-title" }, card.content.title),
    ...card.content.sections.map((s) => h("section", { class: "tooltip-section tooltip-section--" + s.kind }, [
      h("div", { class: "tooltip-label" }, s.label),
      ...sectionBody(s, on),
    ])),
  ]);
}
