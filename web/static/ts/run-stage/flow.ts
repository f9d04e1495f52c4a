// The flow graph drawn as SVG: the lanes and call trees of flow-layout.ts,
// through a camera (pan and zoom). Only what the camera shows is drawn, so
// a frame's cost follows the screen, not the run. Every string is a machine
// field or a trusted guild label placed as <text> content.
//
// A node's state reads by glyph, word and outline, not by colour alone:
// ● working (thick outline), ✓ done (plain), ✗ error (dashed), ■ stopped
// otherwise (dotted), ⏸ paused, ⚙ a tool with its calls, ◇ the human or an
// interrupt. Finished nodes are drawn at full strength.

import { h, type VNode } from "../hyperapp.js";
import type { ModelState, Operation, Participant, Stack } from "../model.js";
import { isAnimated, operationById, stackById, terminalStatus } from "../model.js";
import { compactCount, formatSeconds, type LabelResolver } from "../labels.js";
import { failed, opVerdict, outcomeVerdict, verdictText, type Verdict } from "../outcome.js";
import {
  LANE_HEAD, NODE_H, NODE_W, COL_GAP, ROW_H, layoutFlow, syncFlowIndex, nodeKey, participant, placedKey,
  type Camera, type FlowIndex, type FlowLayout, type Placed,
} from "./flow-layout.js";

/** Below this zoom, nodes are drawn as plain shapes without text. */
export const DETAIL_ZOOM = 0.45;

/** A node's state, as glyph, word and CSS class. */
export interface NodeState {
  glyph: string;
  word: string;
  cls: "working" | "done" | "error" | "stopped" | "paused" | "waiting" | "root" | "tool";
}

/** callVerdict is how a call ended: its return's outcome, or its own when it was closed without one. */
export function callVerdict(m: ModelState, call: Operation): Verdict {
  if (call.outcome !== undefined && call.outcome !== "") {
    return opVerdict(call);
  }
  const ret = call.closedBy !== undefined ? operationById(m, call.closedBy) : undefined;
  return ret !== undefined ? opVerdict(ret) : outcomeVerdict();
}

/** failedCalls counts the calls (operation indices) that failed: a tool node's ✗N. */
export function failedCalls(m: ModelState, callOps: readonly number[]): number {
  let n = 0;
  for (const i of callOps) {
    const call = m.operations[i];
    if (call !== undefined && call.open !== true && failed(callVerdict(m, call))) {
      n++;
    }
  }
  return n;
}

/** nodeState says what a placed node is doing, from its participant and latest call. */
export function nodeState(m: ModelState, p: Participant, lastOp: Operation | undefined, paused: boolean): NodeState {
  if (p.kind === "tool") {
    if (lastOp !== undefined && lastOp.open === true) {
      return { glyph: "⚙", word: paused ? "paused" : "running", cls: paused ? "paused" : "working" };
    }
    const v = lastOp !== undefined ? callVerdict(m, lastOp) : outcomeVerdict();
    return v.glyph === "" || v.word === "success"
      ? { glyph: "⚙", word: "tool", cls: "tool" }
      : { glyph: "⚙", word: "last call: " + verdictText(v).slice(2), cls: failed(v) ? "error" : "stopped" };
  }
  if (p.kind === "human" && p.id !== "human" && lastOp !== undefined) {
    return lastOp.open === true ? { glyph: "◇", word: "waiting for an answer", cls: "waiting" } : { glyph: "◇", word: "answered", cls: "done" };
  }
  if (p.kind !== "role") {
    return { glyph: "◇", word: p.kind === "interrupt" ? "interrupt" : "operator", cls: "root" };
  }
  if (lastOp === undefined || lastOp.open === true) {
    return paused ? { glyph: "⏸", word: "paused", cls: "paused" } : { glyph: "●", word: "working", cls: "working" };
  }
  const v = callVerdict(m, lastOp);
  switch (v.glyph) {
    case "✓":
      return { glyph: "✓", word: "done", cls: "done" };
    case "✗":
      return { glyph: "✗", word: v.detail !== "" ? "error · " + v.detail.replaceAll("_", " ") : "error", cls: "error" };
    default:
      return { glyph: "■", word: v.word === "" ? "stopped" : v.word, cls: "stopped" };
  }
}

/** laneTitle names a lane: the main run or an interrupt, and whether it waits or is over. */
export function laneTitle(s: Stack): string {
  let t = s.id === "main" ? "Main run" : "Interrupt";
  if (s.id !== "main" && s.trigger) {
    t += " · " + s.trigger.replaceAll("_", " ");
  }
  if (s.resolved) {
    t += " · resolved" + (s.action ? " (" + s.action.replaceAll("_", " ") + ")" : "");
  } else if (s.paused) {
    t += " · paused while an interrupt runs";
  }
  return t;
}

function metricsLine(p: Participant, toolCalls: number): string {
  const parts: string[] = [];
  parts.push(compactCount(p.metrics.tokens) + " tok");
  parts.push(formatSeconds(p.metrics.elapsedSeconds));
  if (p.kind === "role") {
    parts.push(toolCalls + (toolCalls === 1 ? " tool call" : " tool calls"));
  }
  return parts.join(" · ");
}

function toolLine(m: ModelState, callOps: readonly number[]): string {
  let secs = 0;
  for (const i of callOps) {
    secs += m.operations[i]?.metrics.elapsedSeconds ?? 0;
  }
  return (callOps.length === 1 ? "1 call" : callOps.length + " calls") + " · " + formatSeconds(secs);
}

function clip(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function edgeClass(m: ModelState, call: Operation | undefined): string {
  const c = ["graph-edge"];
  if (call === undefined) {
    return c.join(" ");
  }
  if (isAnimated(m, call)) {
    c.push("graph-edge--active");
  }
  if (call.closedBy !== undefined) {
    const ret = operationById(m, call.closedBy);
    if (ret !== undefined && isAnimated(m, ret)) {
      c.push("graph-edge--returning");
    }
    if (ret !== undefined && ret.outcome !== undefined && ret.outcome !== "success") {
      c.push(failed(opVerdict(ret)) ? "graph-edge--error" : "graph-edge--stopped");
    }
  }
  if (call.outcome === "interrupted" || call.outcome === "terminated") {
    c.push("graph-edge--stopped");
  }
  return c.join(" ");
}

function edgePath(from: Placed, to: Placed): string {
  const x1 = from.x + NODE_W;
  const y1 = from.y + NODE_H / 2;
  const x2 = to.x - 6;
  const y2 = to.y + NODE_H / 2;
  if (y1 === y2) {
    return `M${x1},${y1} H${x2}`;
  }
  const mx = x1 + COL_GAP / 2;
  const r = Math.min(10, Math.abs(y2 - y1) / 2);
  return `M${x1},${y1} H${mx - r} Q${mx},${y1} ${mx},${y1 + r} V${y2 - r} Q${mx},${y2} ${mx + r},${y2} H${x2}`;
}

function arrowHead(to: Placed): string {
  const x = to.x;
  const y = to.y + NODE_H / 2;
  return `M${x - 7},${y - 4} L${x},${y} L${x - 7},${y + 4} Z`;
}

/** The key of the node that acts now: the active operation's destination (tui/flow.go). */
export function activeNodeKey(ix: FlowIndex, m: ModelState): { stack: string; key: string } | null {
  if (terminalStatus(m.status) || m.activeOperation === undefined) {
    return null;
  }
  const op = operationById(m, m.activeOperation);
  if (op === undefined) {
    return null;
  }
  return { stack: op.stack, key: nodeKey(ix, m, op.source, op.destination) };
}

export interface FlowView {
  camera: Camera;
  /** The viewport in CSS pixels. */
  width: number;
  height: number;
  /** The selected node (placedKey), or "". */
  selected: string;
}

export interface FlowDrawing {
  svg: VNode;
  layout: FlowLayout;
  /** How many nodes the camera shows (drawn). */
  drawn: number;
}

/** renderFlow draws the lanes the camera shows. */
export function renderFlow(m: ModelState, r: LabelResolver, ix: FlowIndex, v: FlowView): FlowDrawing {
  syncFlowIndex(ix, m);
  const layout = layoutFlow(ix, m);
  const { camera: cam, width, height } = v;
  const x0 = cam.x;
  const y0 = cam.y;
  const x1 = cam.x + width / cam.k;
  const y1 = cam.y + height / cam.k;
  const detail = cam.k >= DETAIL_ZOOM;
  const active = activeNodeKey(ix, m);
  const activeKey = active !== null ? placedKey(active.stack, active.key) : "";
  const kids: VNode[] = [];
  const edges: VNode[] = [];
  const nodes: VNode[] = [];
  const stacks = new Map(m.stacks.map((s) => [s.id, s] as const));

  for (const lane of layout.lanes) {
    const s = stacks.get(lane.stack);
    if (s === undefined || lane.y > y1 || lane.y + LANE_HEAD + lane.rows * ROW_H < y0) {
      continue;
    }
    // Zoomed out, the title keeps its size on screen, so the lanes stay named.
    const size = detail ? 12 : 12 / cam.k;
    const ty = Math.max(lane.y + 18, y0 + size * 1.3);
    if (ty < lane.y + LANE_HEAD + lane.rows * ROW_H) {
      kids.push(h("text", {
        key: "lane:" + lane.stack, class: "graph-lane-title", x: Math.max(x0 + 8 / cam.k, 16), y: ty,
        style: detail ? {} : { "font-size": size + "px" },
      }, laneTitle(s)));
    }
  }

  let drawn = 0;
  const lanesById = layout.lanes;
  for (let i = 0; i < layout.placed.length; i++) {
    const p = layout.placed[i];
    const inView = p.x <= x1 && p.x + NODE_W >= x0 && p.y <= y1 && p.y + NODE_H >= y0;
    const parent = p.parent >= 0 ? layout.placed[p.parent] : undefined;
    const stackId = lanesById[p.lane].stack;
    const lane = ix.lanes.get(stackId);
    const tn = lane?.nodes[p.node];
    if (tn === undefined) {
      continue;
    }
    const lastOp = tn.last >= 0 ? m.operations[tn.last] : undefined;
    if (parent !== undefined) {
      const ex0 = parent.x + NODE_W;
      const ey0 = Math.min(parent.y, p.y);
      const ey1 = Math.max(parent.y, p.y) + NODE_H;
      if (ex0 <= x1 && p.x >= x0 && ey0 <= y1 && ey1 >= y0) {
        const cls = edgeClass(m, lastOp);
        const ek = placedKey(stackId, p.key);
        edges.push(h("path", { key: "e:" + ek, class: cls, "data-operation": lastOp?.id, d: edgePath(parent, p) }));
        edges.push(h("path", { key: "a:" + ek, class: "graph-arrow " + cls.replaceAll("graph-edge", "graph-arrow"), d: arrowHead(p) }));
      }
    }
    if (!inView) {
      continue;
    }
    drawn++;
    const part = participant(ix, m, p.pid);
    if (part === undefined) {
      continue;
    }
    const stack = stacks.get(stackId);
    const st = nodeState(m, part, p.parent >= 0 ? lastOp : undefined, stack?.paused === true && stack.resolved !== true);
    const pk = placedKey(stackId, p.key);
    const classes = ["graph-node", "graph-node--" + part.kind, "graph-node--" + st.cls];
    if (pk === activeKey) {
      classes.push("graph-node--active");
    }
    if (pk === v.selected) {
      classes.push("graph-node--selected");
    }
    // Only a node that just joined the run fades in, not one the camera
    // brings into view.
    if (tn.first >= m.operations.length - 2) {
      classes.push("graph-node--entering");
    }
    const label = r.participantLabel(part);
    const attrs: Record<string, unknown> = {
      key: "n:" + pk, class: classes.join(" "), "data-participant": part.id, "data-node": pk, "data-caller": parent?.pid,
      transform: `translate(${p.x},${p.y})`,
    };
    if (!detail) {
      nodes.push(h("g", attrs, [h("rect", { class: "graph-node-box", width: NODE_W, height: NODE_H, rx: 8 })]));
      continue;
    }
    const bad = part.kind === "tool" ? failedCalls(m, tn.callOps) : 0;
    const head = st.glyph + " " + label + (part.kind === "tool" ? " ×" + tn.calls + (bad > 0 ? " ✗" + bad : "") : "");
    const second = part.kind === "tool" ? toolLine(m, tn.callOps)
      : st.word + (part.roleId ? " · " + part.roleId : part.kind === "human" || part.kind === "interrupt" ? "" : "");
    const third = part.kind === "tool" ? (part.role) : part.kind === "role" ? metricsLine(part, ix.toolCalls.get(part.id) ?? 0)
      : part.kind === "interrupt" && stack !== undefined ? clip(laneTitle(stack), 34) : "";
    nodes.push(h("g", attrs, [
      h("rect", { class: "graph-node-box", width: NODE_W, height: NODE_H, rx: 8 }),
      h("text", { class: "graph-node-label", x: 10, y: 20 }, clip(head, 26)),
      part.kind === "role" && part.invocations > 1
        ? h("text", { class: "graph-node-counter", x: NODE_W - 10, y: 20, "text-anchor": "end" }, "#" + part.invocations) : null,
      h("text", { class: "graph-node-state", x: 10, y: 38 }, clip(second, 32)),
      third !== "" ? h("text", { class: "graph-node-cost", x: 10, y: 56 }, clip(third, 34)) : null,
    ].filter((c): c is VNode => c !== null)));
  }
  kids.push(h("g", { key: "edges", class: "graph-edges" }, edges));
  kids.push(h("g", { key: "nodes", class: "graph-nodes" }, nodes));
  const svg = h("svg", {
    class: "flow-graph" + (detail ? "" : " flow-graph--overview"), xmlns: "http://www.w3.org/2000/svg",
    width, height, viewBox: `${x0} ${y0} ${width / cam.k} ${height / cam.k}`, "data-nodes": String(layout.placed.length),
  }, kids);
  return { svg, layout, drawn };
}

/** typeSlots is the strip above the graph: each role and tool that has run, with counts. */
export interface TypeSlot {
  kind: "role" | "tool";
  role: string;
  instances: number;
  invocations: number;
}

export function typeSlots(m: ModelState): TypeSlot[] {
  const out: TypeSlot[] = [];
  const at = { role: new Map<string, number>(), tool: new Map<string, number>() };
  for (const p of m.participants) {
    if (p.kind !== "role" && p.kind !== "tool") {
      continue;
    }
    let i = at[p.kind].get(p.role);
    if (i === undefined) {
      i = out.length;
      at[p.kind].set(p.role, i);
      out.push({ kind: p.kind, role: p.role, instances: 0, invocations: 0 });
    }
    out[i].instances++;
    out[i].invocations += p.invocations;
  }
  return out;
}

/** describeNode is the one-line text a screen reader hears for the selected node. */
export function describeNode(m: ModelState, r: LabelResolver, ix: FlowIndex, layout: FlowLayout, at: number): string {
  const p = layout.placed[at];
  if (p === undefined) {
    return "";
  }
  const part = participant(ix, m, p.pid);
  const stackId = layout.lanes[p.lane].stack;
  const tn = ix.lanes.get(stackId)?.nodes[p.node];
  if (part === undefined || tn === undefined) {
    return "";
  }
  const stack = stackById(m, stackId);
  const lastOp = tn.last >= 0 && p.parent >= 0 ? m.operations[tn.last] : undefined;
  const st = nodeState(m, part, lastOp, stack?.paused === true && stack.resolved !== true);
  const where = stack !== undefined ? laneTitle(stack) : stackId;
  const what = part.kind === "tool" ? toolLine(m, tn.callOps) : part.kind === "role" ? metricsLine(part, ix.toolCalls.get(part.id) ?? 0) : "";
  return [r.participantLabel(part), st.word, part.roleId ?? "", what, where].filter((s) => s !== "").join(", ");
}
