// The run stage: the InteractionModel drawn as SVG, as a flow graph or a
// sequence diagram. Only machine fields and trusted guild labels appear,
// always as <text>/<title> text content; agent prose never reaches the SVG.
// Animation is CSS-only, driven by class hooks on the same <path>/<g>/<rect>
// elements (graph-edge--active, graph-node--active, seq-message--flowing…).
// Hover targets carry data-operation / data-participant / data-role, which
// the app resolves against the live model for the inspector.

import { h, type VNode } from "../hyperapp.js";
import type { ModelState, Operation, Participant } from "../model.js";
import { isAnimated, participantById } from "../model.js";
import { compactCount, formatSeconds, type LabelResolver } from "../labels.js";

const NODE_W = 168;
const NODE_H = 58;
const COL_GAP = 64;
const ROW_GAP = 34;
const PAD = 16;
const TOP_BAR_H = 34;

export interface FlowNode {
  participant: Participant;
  depth: number;
  /** The call that brought the participant onto the row; absent for the root. */
  call?: Operation;
  departed: boolean;
  active: boolean;
}

export interface FlowRow {
  stack: string;
  paused: boolean;
  resolved: boolean;
  nodes: FlowNode[];
}

/**
 * flowRows lays out each stack as its latest call path: a call at depth d
 * replaces whatever sat at depth d and drops everything deeper; a node whose
 * call is closed stays on the row as departed until replaced.
 */
export function flowRows(m: ModelState): FlowRow[] {
  const chains = new Map<string, Operation[]>();
  for (const op of m.operations) {
    if (op.kind !== "call") {
      continue;
    }
    let chain = chains.get(op.stack);
    if (chain === undefined) {
      chain = [];
      chains.set(op.stack, chain);
    }
    chain.length = Math.min(chain.length, Math.max(op.depth - 1, 0));
    chain.push(op);
  }
  const activeOp = m.activeOperation;
  const activeDest = activeOp !== undefined ? m.operations.find((o) => o.id === activeOp)?.destination : undefined;
  const rows: FlowRow[] = [];
  for (const s of m.stacks) {
    const root = participantById(m, s.root);
    if (root === undefined) {
      continue;
    }
    const nodes: FlowNode[] = [{ participant: root, depth: 0, departed: false, active: s.id === m.activeStack && activeDest === root.id }];
    for (const call of chains.get(s.id) ?? []) {
      const p = participantById(m, call.destination);
      if (p === undefined) {
        continue;
      }
      nodes.push({ participant: p, depth: call.depth, call, departed: call.open !== true,
        active: s.id === m.activeStack && activeDest === p.id && call.open === true });
    }
    rows.push({ stack: s.id, paused: s.paused, resolved: s.resolved === true, nodes });
  }
  return rows;
}

/** A role or tool slot of the top bar: kind, name and counts. */
interface Slot {
  kind: "role" | "tool";
  role: string;
  instances: number;
  invocations: number;
}

function topBar(m: ModelState): Slot[] {
  const out: Slot[] = [];
  const at = new Map<string, number>();
  for (const p of m.participants) {
    if (p.kind !== "role" && p.kind !== "tool") {
      continue;
    }
    const key = p.kind + "\u0000" + p.role;
    let i = at.get(key);
    if (i === undefined) {
      i = out.length;
      at.set(key, i);
      out.push({ kind: p.kind, role: p.role, instances: 0, invocations: 0 });
    }
    out[i].instances++;
    out[i].invocations += p.invocations;
  }
  return out;
}

function edgePath(x1: number, y1: number, x2: number, y2: number): string {
  const dx = Math.max(24, (x2 - x1) / 2);
  return `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`;
}

function clipLabel(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function nodeCost(n: FlowNode): string {
  const m = n.call?.metrics ?? n.participant.metrics;
  const parts: string[] = [];
  if (m.tokens > 0) {
    parts.push(compactCount(m.tokens) + " tok");
  }
  if (m.elapsedSeconds > 0) {
    parts.push(formatSeconds(m.elapsedSeconds));
  }
  return parts.join(" · ");
}

function edgeClass(m: ModelState, call: Operation): string {
  const classes = ["graph-edge"];
  if (isAnimated(m, call)) {
    classes.push("graph-edge--active");
  }
  if (call.closedBy !== undefined) {
    const ret = m.operations.find((o) => o.id === call.closedBy);
    if (ret !== undefined && isAnimated(m, ret)) {
      classes.push("graph-edge--returning");
    }
    if (ret !== undefined && ret.outcome !== undefined && ret.outcome !== "success") {
      classes.push("graph-edge--error");
    }
  }
  if (call.outcome === "interrupted" || call.outcome === "terminated") {
    classes.push("graph-edge--error");
  }
  return classes.join(" ");
}

/** renderFlow draws the flow graph: a top bar of role/tool counts, then a row per stack. */
export function renderFlow(m: ModelState, r: LabelResolver): VNode {
  const rows = flowRows(m);
  const slots = topBar(m);
  const maxDepth = rows.reduce((d, row) => Math.max(d, ...row.nodes.map((n) => n.depth)), 0);
  const width = Math.max(PAD * 2 + (maxDepth + 1) * (NODE_W + COL_GAP), 320);
  const height = PAD * 2 + TOP_BAR_H + rows.length * (NODE_H + ROW_GAP);
  const children: VNode[] = [];

  let x = PAD;
  const bar: VNode[] = [];
  for (const s of slots) {
    const label = r.roleLabel(s.kind, s.role) + " " + (s.kind === "role" && s.instances > 1 ? s.instances + "/" : "") + "×" + s.invocations;
    const w = Math.max(60, label.length * 7 + 16);
    bar.push(h("g", { class: "graph-slot graph-slot--" + s.kind, "data-role": s.role, "data-kind": s.kind, key: s.kind + ":" + s.role }, [
      h("rect", { x, y: PAD, width: w, height: 24, rx: 12 }),
      h("text", { x: x + 8, y: PAD + 16 }, label),
    ]));
    x += w + 8;
  }
  children.push(h("g", { class: "graph-topbar" }, bar));

  rows.forEach((row, ri) => {
    const y = PAD + TOP_BAR_H + ri * (NODE_H + ROW_GAP);
    const rowKids: VNode[] = [];
    const pos = (depth: number) => PAD + depth * (NODE_W + COL_GAP);
    // Edges first, so nodes sit on top of them.
    row.nodes.forEach((n, i) => {
      if (i === 0 || n.call === undefined) {
        return;
      }
      const prev = row.nodes[i - 1];
      rowKids.push(h("path", {
        key: "e:" + n.call.id, class: edgeClass(m, n.call), "data-operation": n.call.id,
        d: edgePath(pos(prev.depth) + NODE_W, y + NODE_H / 2, pos(n.depth), y + NODE_H / 2),
      }));
    });
    for (const n of row.nodes) {
      const nx = pos(n.depth);
      const p = n.participant;
      const classes = ["graph-node", "graph-node--" + p.kind];
      if (n.active) {
        classes.push("graph-node--active");
      }
      if (n.departed) {
        classes.push("graph-node--departed");
      } else {
        classes.push("graph-node--present");
      }
      if (row.paused) {
        classes.push("graph-node--paused");
      }
      const sub = p.kind === "role" ? p.role : p.kind === "tool" ? "tool" : p.kind;
      rowKids.push(h("g", { key: "n:" + p.id, class: classes.join(" "), "data-participant": p.id, transform: `translate(${nx},${y})` }, [
        h("rect", { width: NODE_W, height: NODE_H, rx: 8 }),
        h("text", { class: "graph-node-label", x: 10, y: 20 }, clipLabel(r.participantLabel(p), 22)),
        h("text", { class: "graph-node-sublabel", x: 10, y: 36 }, clipLabel(sub, 24)),
        h("text", { class: "graph-node-counter", x: NODE_W - 10, y: 20, "text-anchor": "end" }, "×" + p.invocations),
        h("text", { class: "graph-node-cost", x: 10, y: 51 }, nodeCost(n)),
      ]));
    }
    const rowClass = "graph-row" + (row.paused ? " graph-row--paused" : "") + (row.resolved ? " graph-row--resolved" : "");
    children.push(h("g", { class: rowClass, key: "row:" + row.stack, "data-stack": row.stack }, rowKids));
  });

  return h("svg", {
    class: "flow-graph", xmlns: "http://www.w3.org/2000/svg", role: "img", "aria-label": "Flow graph",
    viewBox: `0 0 ${width} ${height}`, width, height,
  }, children);
}

/** The columns of the sequence view: a role name, "human", "interrupt" or "tools". */
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

const SEQ_COL_W = 150;
const SEQ_ROW_H = 26;
const SEQ_HEAD_H = 40;

/** The sequence view shows the newest operations; older rows are counted, not drawn. */
export const SEQUENCE_WINDOW = 200;

function seqMessageClass(m: ModelState, op: Operation): string {
  const c = ["seq-message", "seq-message--" + op.kind];
  if (isAnimated(m, op)) {
    c.push(op.kind === "return" ? "seq-message--returning" : "seq-message--flowing");
  }
  if ((op.kind === "return" && op.outcome !== undefined && op.outcome !== "success") ||
      op.outcome === "interrupted" || op.outcome === "terminated") {
    c.push("seq-message--error");
  }
  return c.join(" ");
}

function seqNodeClass(m: ModelState, op: Operation): string {
  const c = ["seq-node"];
  if (op.id === m.activeOperation && op.lifecycle === "in_flight") {
    c.push("seq-node--active");
  } else if (op.outcome === "success") {
    c.push("seq-node--success");
  } else if (op.outcome !== undefined && op.outcome !== "") {
    c.push("seq-node--error");
  }
  return c.join(" ");
}

/** renderSequence draws the sequence diagram of the newest SEQUENCE_WINDOW operations. */
export function renderSequence(m: ModelState, r: LabelResolver): VNode {
  const columns: string[] = [];
  const colOf = new Map<string, number>();
  const headers: { key: string; label: string; kind: string; role: string }[] = [];
  const addColumn = (p: Participant) => {
    const key = sequenceColumn(p);
    if (!colOf.has(key)) {
      colOf.set(key, columns.length);
      columns.push(key);
      const label = key === "tools" ? r.pseudoLabel("tools") : p.kind === "human" ? r.pseudoLabel("human")
        : p.kind === "interrupt" ? r.pseudoLabel("interrupt") : r.participantLabel(p);
      headers.push({ key, label, kind: p.kind, role: p.role });
    }
  };
  for (const p of m.participants) {
    addColumn(p);
  }
  const start = Math.max(0, m.operations.length - SEQUENCE_WINDOW);
  const ops = m.operations.slice(start);
  const width = PAD * 2 + Math.max(columns.length, 1) * SEQ_COL_W;
  const height = SEQ_HEAD_H + PAD * 2 + (ops.length + 1) * SEQ_ROW_H;
  const cx = (i: number) => PAD + i * SEQ_COL_W + SEQ_COL_W / 2;
  const kids: VNode[] = [];

  headers.forEach((hd, i) => {
    const attrs: Record<string, unknown> = { class: "seq-column seq-column--" + hd.kind, key: "col:" + hd.key };
    if (hd.kind === "role") {
      attrs["data-role"] = hd.role;
      attrs["data-kind"] = "role";
    }
    kids.push(h("g", attrs, [
      h("line", { class: "seq-lifeline", x1: cx(i), y1: SEQ_HEAD_H, x2: cx(i), y2: height - PAD }),
      h("rect", { class: "seq-header", x: cx(i) - SEQ_COL_W / 2 + 6, y: 6, width: SEQ_COL_W - 12, height: 26, rx: 6 }),
      h("text", { class: "seq-header-label", x: cx(i), y: 24, "text-anchor": "middle" }, clipLabel(hd.label, 20)),
    ]));
  });

  if (start > 0) {
    kids.push(h("text", { class: "seq-window-note", x: PAD, y: SEQ_HEAD_H + 14 }, `${start} earlier operations not shown`));
  }

  ops.forEach((op, i) => {
    const src = participantById(m, op.source);
    const dst = participantById(m, op.destination);
    if (src === undefined || dst === undefined) {
      return;
    }
    const a = colOf.get(sequenceColumn(src)) ?? 0;
    const b = colOf.get(sequenceColumn(dst)) ?? 0;
    const y = SEQ_HEAD_H + PAD + (i + 1) * SEQ_ROW_H;
    const label = r.operationLabel(op, src, dst);
    let d: string;
    let tx: number;
    if (a === b) {
      const x = cx(a);
      d = `M${x},${y - 8} C${x + 44},${y - 8} ${x + 44},${y + 4} ${x + 6},${y + 4}`;
      tx = x + 6;
    } else {
      d = `M${cx(a)},${y} L${cx(b)},${y}`;
      tx = cx(b) + (b > a ? -7 : 0);
    }
    kids.push(h("g", { key: op.id, class: "seq-row" }, [
      h("path", { class: seqMessageClass(m, op), d, "data-operation": op.id }, [h("title", {}, label)]),
      h("rect", { class: seqNodeClass(m, op), x: tx, y: y - 4, width: 8, height: 8, rx: 2, "data-operation": op.id },
        [h("title", {}, op.id + " · " + op.kind + (op.outcome ? " · " + op.outcome : ""))]),
    ]));
  });

  return h("svg", {
    class: "sequence-diagram", xmlns: "http://www.w3.org/2000/svg", role: "img", "aria-label": "Sequence diagram",
    viewBox: `0 0 ${width} ${height}`, width, height,
  }, kids);
}
