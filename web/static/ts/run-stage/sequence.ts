// The sequence diagram drawn as SVG: a column per role (the human first,
// tools last), one row per operation, and every message labelled inline
// with its trusted operation label, as the terminal's sequence view does
// (tui/sequence.go). Only the rows in the scroll window are drawn, so a
// frame of a 10,000-operation run costs what a frame of a short one does.
// Every string is a machine field or a guild label placed as <text>/<title>
// content; details never reach the SVG.

import { h, type VNode } from "../hyperapp.js";
import { failed, opVerdict, outcomeVerdict, verdictText } from "../outcome.js";
import type { ModelState, Operation, Participant } from "../model.js";
import { isAnimated, terminalStatus } from "../model.js";
import type { LabelResolver } from "../labels.js";
import { participant, syncFlowIndex, type FlowIndex } from "./flow-layout.js";

export const SEQ_ROW_H = 34;
export const SEQ_HEAD_H = 38;
const SEQ_PAD = 12;
/** Rows drawn above and below the window, so a short scroll needs no redraw gap. */
const OVERSCAN = 8;
/** Approximate advance of a 12px label character, for placing labels inside the diagram. */
const CHAR_W = 6.7;

/** The column of a participant: a role name, "human", "interrupt" or "tools". */
export function sequenceColumn(p: Participant): string {
  switch (p.kind) {
    case "tool":
      return "tools";
    case "role":
      return "role:" + p.role;
    default:
      return p.kind;
  }
}

export interface Column {
  key: string;
  label: string;
  kind: string;
  role: string;
}

/** sequenceColumns lists the columns in order of first appearance, tools last. */
export function sequenceColumns(m: ModelState, r: LabelResolver): Column[] {
  const out: Column[] = [];
  const seen = new Set<string>();
  let tools: Column | null = null;
  for (const p of m.participants) {
    const key = sequenceColumn(p);
    if (seen.has(key)) {
      continue;
    }
    seen.add(key);
    const label = key === "tools" ? r.pseudoLabel("tools") : p.kind === "human" ? r.pseudoLabel("human")
      : p.kind === "interrupt" ? r.pseudoLabel("interrupt") : r.participantLabel(p);
    const col = { key, label, kind: p.kind, role: p.role };
    if (key === "tools") {
      tools = col;
    } else {
      out.push(col);
    }
  }
  if (tools !== null) {
    out.push(tools);
  }
  return out;
}

export interface SequenceView {
  /** The scroll container's scroll position and client size, in CSS pixels. */
  scrollTop: number;
  height: number;
  scrollLeft: number;
  width: number;
  /** Column width: narrower on small screens. */
  columnWidth: number;
  /** The selected operation's index, or -1. */
  selected: number;
}

/** sequenceHeight is the body's full height: every row, plus the run's end node. */
export function sequenceHeight(m: ModelState): number {
  return SEQ_PAD + (m.operations.length + (terminalStatus(m.status) ? 1 : 0)) * SEQ_ROW_H + SEQ_PAD;
}

/** rowTop is where row i starts in the body. */
export function rowTop(i: number): number {
  return SEQ_PAD + i * SEQ_ROW_H;
}

/** windowRows is the range of rows [first, last) a scroll position shows, with overscan. */
export function windowRows(total: number, v: Pick<SequenceView, "scrollTop" | "height">): [number, number] {
  const first = Math.max(0, Math.floor((v.scrollTop - SEQ_PAD) / SEQ_ROW_H) - OVERSCAN);
  const last = Math.min(total, Math.ceil((v.scrollTop + v.height) / SEQ_ROW_H) + OVERSCAN);
  return [first, Math.max(first, last)];
}

function messageClass(m: ModelState, op: Operation): string {
  const c = ["seq-message", "seq-message--" + op.kind];
  if (isAnimated(m, op)) {
    c.push(op.kind === "return" ? "seq-message--returning" : "seq-message--flowing");
  }
  const v = opVerdict(op);
  if (failed(v)) {
    c.push("seq-message--error");
  } else if (v.glyph === "■") {
    c.push("seq-message--stopped");
  }
  return c.join(" ");
}

function outcomeMark(op: Operation): string {
  if (op.kind !== "return" && op.kind !== "terminate") {
    return "";
  }
  const v = opVerdict(op);
  if (v.glyph === "") {
    return "";
  }
  return v.word === "success" ? " ✓" + (v.detail !== "" ? " " + v.detail : "") : " " + verdictText(v);
}

/** messageText is a row's inline label: its number, the operation label and its outcome. */
export function messageText(m: ModelState, r: LabelResolver, ix: FlowIndex, op: Operation, i: number): string {
  const src = participant(ix, m, op.source);
  const dst = participant(ix, m, op.destination);
  const label = src !== undefined && dst !== undefined ? r.operationLabel(op, src, dst) : op.kind;
  const flight = op.lifecycle === "in_flight" && op.kind !== "observe" && op.kind !== "terminate" ? "…" : "";
  return (i + 1) + "  " + label + flight + outcomeMark(op);
}

/** renderSequenceHeader is the sticky strip of column headings. */
export function renderSequenceHeader(cols: readonly Column[], colW: number): VNode {
  const width = SEQ_PAD * 2 + Math.max(cols.length, 1) * colW;
  return h("svg", { class: "seq-head", xmlns: "http://www.w3.org/2000/svg", width, height: SEQ_HEAD_H, viewBox: `0 0 ${width} ${SEQ_HEAD_H}` },
    cols.map((c, i) => {
      const cx = SEQ_PAD + i * colW + colW / 2;
      const attrs: Record<string, unknown> = { key: c.key, class: "seq-column seq-column--" + c.kind };
      if (c.kind === "role") {
        attrs["data-role"] = c.role;
        attrs["data-kind"] = "role";
      }
      const max = Math.floor((colW - 16) / CHAR_W);
      return h("g", attrs, [
        h("rect", { class: "seq-header", x: cx - colW / 2 + 4, y: 6, width: colW - 8, height: 26, rx: 6 }),
        h("text", { class: "seq-header-label", x: cx, y: 24, "text-anchor": "middle" }, c.label.length > max ? c.label.slice(0, max - 1) + "…" : c.label),
      ]);
    }));
}

/** renderSequenceBody draws the rows of the window, each labelled inline. */
export function renderSequenceBody(m: ModelState, r: LabelResolver, ix: FlowIndex, cols: readonly Column[], v: SequenceView): VNode {
  syncFlowIndex(ix, m);
  const colW = v.columnWidth;
  const colOf = new Map(cols.map((c, i) => [c.key, i] as const));
  const width = SEQ_PAD * 2 + Math.max(cols.length, 1) * colW;
  const height = sequenceHeight(m);
  const total = m.operations.length + (terminalStatus(m.status) ? 1 : 0);
  const [first, last] = windowRows(total, v);
  const cx = (i: number) => SEQ_PAD + i * colW + colW / 2;
  const kids: VNode[] = [];
  const top = rowTop(first);
  const bottom = rowTop(last);
  cols.forEach((c, i) => {
    kids.push(h("line", { key: "life:" + c.key, class: "seq-lifeline", x1: cx(i), y1: top, x2: cx(i), y2: bottom }));
  });
  for (let i = first; i < last; i++) {
    const y = rowTop(i);
    if (i === m.operations.length) {
      // The run's end node, after the last operation.
      const x = cx(0);
      kids.push(h("g", { key: "end", class: "seq-row seq-row--end" }, [
        h("rect", { class: "seq-node seq-node--end seq-node--" + m.status, x: x - 6, y: y + 12, width: 12, height: 12, rx: 2 }),
        h("text", { class: "seq-label", x: x + 14, y: y + 22 }, (outcomeVerdict(m.status).glyph || "■") + " run " + m.status.replaceAll("_", " ")),
      ]));
      continue;
    }
    const op = m.operations[i];
    const src = participant(ix, m, op.source);
    const dst = participant(ix, m, op.destination);
    if (src === undefined || dst === undefined) {
      continue;
    }
    const a = colOf.get(sequenceColumn(src)) ?? 0;
    const b = colOf.get(sequenceColumn(dst)) ?? 0;
    const text = messageText(m, r, ix, op, i);
    const ly = y + 24; // the message line
    let d: string;
    let head: string;
    let tx: number;
    const anchor = "start";
    if (a === b) {
      const x = cx(a);
      d = `M${x},${ly - 6} C${x + 36},${ly - 6} ${x + 36},${ly + 6} ${x + 6},${ly + 6}`;
      head = `M${x + 12},${ly + 2} L${x + 6},${ly + 6} L${x + 12},${ly + 10} Z`;
      tx = x + 42;
    } else {
      const x1 = cx(a);
      const x2 = cx(b);
      const dir = x2 > x1 ? 1 : -1;
      d = `M${x1},${ly} L${x2 - dir * 2},${ly}`;
      head = `M${x2 - dir * 8},${ly - 4} L${x2},${ly} L${x2 - dir * 8},${ly + 4} Z`;
      tx = Math.min(x1, x2) + 8;
    }
    // Keep the label on screen: it starts at the arrow's near end, moved
    // into the part of the diagram the scroll window shows, and is cut only
    // when even that whole width cannot hold it.
    const left = Math.max(0, v.scrollLeft) + 6;
    const right = Math.min(width, Math.max(0, v.scrollLeft) + (v.width > 0 ? v.width : width)) - 6;
    let shown = text;
    const room = Math.max(8 * CHAR_W, right - left);
    if (shown.length * CHAR_W > room) {
      const max = Math.max(8, Math.floor(room / CHAR_W));
      shown = shown.slice(0, max - 1) + "…";
    }
    const need = shown.length * CHAR_W;
    tx = Math.max(left, Math.min(tx, right - need));
    const cls = messageClass(m, op);
    const rowCls = "seq-row" + (i === v.selected ? " seq-row--selected" : "") + (op.id === m.activeOperation ? " seq-row--active" : "");
    kids.push(h("g", { key: op.id, class: rowCls, "data-operation": op.id, "data-index": String(i) }, [
      h("rect", { class: "seq-hit", x: 0, y, width, height: SEQ_ROW_H }),
      h("path", { class: cls, d }),
      h("path", { class: cls.replaceAll("seq-message", "seq-arrow") + " seq-arrow", d: head }),
      h("text", { class: "seq-label", x: tx, y: y + 15, "text-anchor": anchor }, shown),
      h("title", {}, text),
    ]));
  }
  return h("svg", {
    class: "sequence-diagram", xmlns: "http://www.w3.org/2000/svg", width, height, viewBox: `0 0 ${width} ${height}`,
    "data-rows": String(total),
  }, kids);
}
