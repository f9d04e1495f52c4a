// The flow graph's structure and layout, as the terminal draws it
// (tui/flow.go): a lane per stack, each the stack's call tree laid out left
// to right. Column 0 is the stack's root (the human, or an interrupt); each
// node's callees sit in the next column, the first on the node's own row and
// the rest below it, so every edge starts at the caller that made the call.
// Among siblings the one on the open call chain comes first, so the chain
// runs along the top of its subtree; the others follow newest first.
//
// A role instance or a human answerer is one node of its lane; a tool is a
// node under each caller that used it, counting that caller's calls. The
// index is built incrementally (each operation is taken in once), so a
// frame of a 10,000-operation run does not rescan the run.
//
// Pure data: no DOM. index.ts draws it.

import type { ModelState, Operation, Participant } from "../model.js";

/** One node of a lane's call tree. */
export interface TreeNode {
  /** The participant id, or for a tool "callerId\u0000toolId". */
  key: string;
  pid: string;
  parent: number; // index in the lane's nodes; -1 for the root
  children: number[]; // in order of first call
  /** Calls from the parent into this node, and the first and latest one's operation index. */
  calls: number;
  first: number;
  last: number;
  /** For tool nodes: the operation index of every call from this caller. */
  callOps: number[];
}

export interface Lane {
  stack: string;
  nodes: TreeNode[];
  byKey: Map<string, number>;
}

/** FlowIndex is the incremental index of a model: lanes, and per-participant facts. */
export interface FlowIndex {
  runId: string;
  firstOp: string;
  applied: number;
  lanes: Map<string, Lane>;
  laneOrder: string[];
  /** participant id → its index in model.participants (stable under upsert). */
  pIndex: Map<string, number>;
  pSeen: number;
  /** participant id → operation index of its latest incoming call. */
  lastCall: Map<string, number>;
  /** role participant id → tool calls it made. */
  toolCalls: Map<string, number>;
  layout: FlowLayout | null;
  layoutKey: string;
}

export function newFlowIndex(): FlowIndex {
  return {
    runId: "", firstOp: "", applied: 0, lanes: new Map(), laneOrder: [], pIndex: new Map(), pSeen: 0,
    lastCall: new Map(), toolCalls: new Map(), layout: null, layoutKey: "",
  };
}

/** participant finds a participant in O(1) through the index. */
export function participant(ix: FlowIndex, m: ModelState, id: string): Participant | undefined {
  const i = ix.pIndex.get(id);
  const p = i !== undefined ? m.participants[i] : undefined;
  return p !== undefined && p.id === id ? p : m.participants.find((q) => q.id === id);
}

/** toolNodeAt is the tool node under a caller that stack and key name in the index, if any. */
export function toolNodeAt(ix: FlowIndex, stack?: string, key?: string): TreeNode | undefined {
  if (stack === undefined || key === undefined || !key.includes("\u0000")) {
    return undefined;
  }
  const lane = ix.lanes.get(stack);
  const i = lane?.byKey.get(key);
  return i !== undefined ? lane?.nodes[i] : undefined;
}

/** nodeKey is the node key of a call's destination (tools: one node per caller). */
export function nodeKey(ix: FlowIndex, m: ModelState, source: string, dest: string): string {
  const p = participant(ix, m, dest);
  return p !== undefined && p.kind === "tool" ? source + "\u0000" + dest : dest;
}

function laneNode(l: Lane, key: string, pid: string, parent: number): number {
  const have = l.byKey.get(key);
  if (have !== undefined) {
    return have;
  }
  const i = l.nodes.length;
  l.nodes.push({ key, pid, parent, children: [], calls: 0, first: -1, last: -1, callOps: [] });
  l.byKey.set(key, i);
  if (parent >= 0) {
    l.nodes[parent].children.push(i);
  }
  return i;
}

/**
 * syncFlowIndex takes in what changed in m since the last call: new
 * participants and new operations. A model of another run, or one that was
 * replaced by a shorter snapshot, starts the index afresh.
 */
export function syncFlowIndex(ix: FlowIndex, m: ModelState): void {
  const runId = m.runId ?? "";
  const first = m.operations.length > 0 ? m.operations[0].id : "";
  if (ix.runId !== runId || m.operations.length < ix.applied || (ix.applied > 0 && first !== ix.firstOp) ||
      m.participants.length < ix.pSeen) {
    Object.assign(ix, newFlowIndex());
    ix.runId = runId;
  }
  ix.firstOp = first;
  for (; ix.pSeen < m.participants.length; ix.pSeen++) {
    ix.pIndex.set(m.participants[ix.pSeen].id, ix.pSeen);
  }
  for (; ix.applied < m.operations.length; ix.applied++) {
    const op = m.operations[ix.applied];
    if (op.kind !== "call") {
      continue;
    }
    take(ix, m, op, ix.applied);
  }
}

function take(ix: FlowIndex, m: ModelState, op: Operation, at: number): void {
  ix.lastCall.set(op.destination, at);
  const dest = participant(ix, m, op.destination);
  if (dest !== undefined && dest.kind === "tool") {
    ix.toolCalls.set(op.source, (ix.toolCalls.get(op.source) ?? 0) + 1);
  }
  let l = ix.lanes.get(op.stack);
  if (l === undefined) {
    l = { stack: op.stack, nodes: [], byKey: new Map() };
    ix.lanes.set(op.stack, l);
    ix.laneOrder.push(op.stack);
  }
  const stack = m.stacks.find((s) => s.id === op.stack);
  const root = stack !== undefined ? stack.root : op.source;
  const r = laneNode(l, root, root, -1);
  const parent = l.byKey.get(op.source) ?? r;
  const c = laneNode(l, nodeKey(ix, m, op.source, op.destination), op.destination, parent);
  const n = l.nodes[c];
  n.calls++;
  if (n.first < 0) {
    n.first = at;
  }
  n.last = at;
  if (dest !== undefined && dest.kind === "tool") {
    n.callOps.push(at);
  }
}

// ---- layout ----

export const NODE_W = 212;
export const NODE_H = 66;
export const COL_GAP = 52;
export const ROW_H = 84;
export const LANE_HEAD = 30;
export const LANE_GAP = 18;
export const PAD = 16;

/** Where an edge into a node comes from, as the terminal's connectors say. */
export type Gap = "none" | "straight" | "tee" | "branch" | "last";

/** A node placed on the canvas, in graph coordinates. */
export interface Placed {
  key: string;
  pid: string;
  lane: number;
  node: number; // index in the lane's nodes
  row: number;
  depth: number;
  x: number;
  y: number;
  parent: number; // index in FlowLayout.placed; -1 for a lane's root
  gap: Gap;
}

export interface LaneBox {
  stack: string;
  y: number; // top of the lane's head
  rows: number;
}

/** Looks a placed node up by its placedKey; built without a string per node. */
export interface PlacedLookup {
  get(pk: string): number | undefined;
}

export interface FlowLayout {
  lanes: LaneBox[];
  placed: Placed[];
  byKey: PlacedLookup; // placedKey → placed index
  width: number;
  height: number;
}

// lookup finds placed nodes through the lanes' own key maps: a layout is
// rebuilt on every change, so it keeps one small array per lane rather than
// a map with a key string per node.
function lookup(ix: FlowIndex, perLane: Map<string, Int32Array>): PlacedLookup {
  return {
    get(pk: string): number | undefined {
      const cut = pk.indexOf("\u0000");
      if (cut < 0) {
        return undefined;
      }
      const stack = pk.slice(0, cut);
      const node = ix.lanes.get(stack)?.byKey.get(pk.slice(cut + 1));
      const at = node !== undefined ? perLane.get(stack)?.[node] : undefined;
      return at !== undefined && at >= 0 ? at : undefined;
    },
  };
}

/** placedKey names a placed node: a key is unique within its lane. */
export function placedKey(stack: string, key: string): string {
  return stack + "\u0000" + key;
}

// orderChildren puts the open chain's child first, then the rest newest
// first (by their latest call).
function orderChildren(l: Lane, kids: readonly number[], onChain: ReadonlySet<string>): number[] {
  const chain = kids.filter((k) => onChain.has(l.nodes[k].key)).reverse();
  const rest = kids.filter((k) => !onChain.has(l.nodes[k].key));
  rest.sort((a, b) => l.nodes[b].last - l.nodes[a].last);
  return chain.concat(rest);
}

/**
 * openChain is the keys of a stack's open call chain (the nodes of the
 * calls still open on it) plus the active call's destination.
 */
function openChain(ix: FlowIndex, m: ModelState, stack: string): Set<string> {
  const out = new Set<string>();
  const l = ix.lanes.get(stack);
  if (l === undefined) {
    return out;
  }
  // Walk down from the root along children whose latest call is open.
  let at = 0;
  for (let guard = 0; guard < l.nodes.length; guard++) {
    let next = -1;
    for (const c of l.nodes[at].children) {
      const n = l.nodes[c];
      const op = n.last >= 0 ? m.operations[n.last] : undefined;
      if (op !== undefined && op.open === true && (next < 0 || n.last > l.nodes[next].last)) {
        next = c;
      }
    }
    if (next < 0) {
      break;
    }
    out.add(l.nodes[next].key);
    at = next;
  }
  return out;
}

/**
 * layoutFlow places every lane's tree: depth first, a node's first child on
 * its own row, each later child below the previous child's subtree. It is
 * cached on the index until the model's version changes.
 */
export function layoutFlow(ix: FlowIndex, m: ModelState): FlowLayout {
  const cacheKey = (m.runId ?? "") + ":" + m.version + ":" + ix.applied;
  if (ix.layout !== null && ix.layoutKey === cacheKey) {
    return ix.layout;
  }
  const perLane = new Map<string, Int32Array>();
  const out: FlowLayout = { lanes: [], placed: [], byKey: lookup(ix, perLane), width: 0, height: 0 };
  let top = PAD;
  let maxDepth = 0;
  for (const s of m.stacks) {
    const l = ix.lanes.get(s.id);
    if (l === undefined || l.nodes.length === 0) {
      continue;
    }
    const li = out.lanes.length;
    const onChain = openChain(ix, m, s.id);
    const at = new Int32Array(l.nodes.length).fill(-1);
    perLane.set(s.id, at);
    const rowsTop = top + LANE_HEAD;
    let nextRow = 1;
    const place = (node: number, row: number, depth: number, parent: number, gap: Gap): void => {
      const n = l.nodes[node];
      const pi = out.placed.length;
      out.placed.push({
        key: n.key, pid: n.pid, lane: li, node, row, depth,
        x: PAD + depth * (NODE_W + COL_GAP), y: rowsTop + row * ROW_H, parent, gap,
      });
      at[node] = pi;
      maxDepth = Math.max(maxDepth, depth);
      const kids = orderChildren(l, n.children, onChain);
      kids.forEach((c, k) => {
        const r = k === 0 ? row : nextRow++;
        const g: Gap = kids.length === 1 ? "straight" : k === 0 ? "tee" : k === kids.length - 1 ? "last" : "branch";
        place(c, r, depth + 1, pi, g);
      });
    };
    // Iterative in spirit: the recursion depth is the call depth, not the node count.
    place(0, 0, 0, -1, "none");
    out.lanes.push({ stack: s.id, y: top, rows: nextRow });
    top = rowsTop + nextRow * ROW_H + LANE_GAP;
  }
  out.width = PAD * 2 + (maxDepth + 1) * NODE_W + maxDepth * COL_GAP;
  out.height = Math.max(top, PAD * 2);
  ix.layout = out;
  ix.layoutKey = cacheKey;
  return out;
}

// ---- camera ----

/** The part of the graph on screen: its top-left in graph units, and the scale. */
export interface Camera {
  x: number;
  y: number;
  k: number;
}

export const MIN_ZOOM = 0.001;
export const MAX_ZOOM = 2;

export function clampZoom(k: number): number {
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));
}

/** fitCamera shows the whole graph in a w × h viewport (never enlarged past 1). */
export function fitCamera(layout: FlowLayout, w: number, h: number): Camera {
  const k = clampZoom(Math.min(1, w / Math.max(layout.width, 1), h / Math.max(layout.height, 1)));
  return { x: (layout.width - w / k) / 2, y: 0, k };
}

/** zoomAt scales the camera by factor around the viewport point (px, py). */
export function zoomAt(cam: Camera, factor: number, px: number, py: number): Camera {
  const k = clampZoom(cam.k * factor);
  const gx = cam.x + px / cam.k;
  const gy = cam.y + py / cam.k;
  return { x: gx - px / k, y: gy - py / k, k };
}

/**
 * showNode moves the camera as little as it can so that the placed node is
 * in view with a margin; a camera that already shows it is returned as is.
 */
export function showNode(cam: Camera, p: Placed, w: number, h: number): Camera {
  const m = 12 / cam.k;
  const vw = w / cam.k;
  const vh = h / cam.k;
  let { x, y } = cam;
  if (p.x - m < x) {
    x = p.x - m;
  } else if (p.x + NODE_W + m > x + vw) {
    x = Math.min(p.x - m, p.x + NODE_W + m - vw);
  }
  if (p.y - LANE_HEAD - m < y) {
    y = p.y - LANE_HEAD - m;
  } else if (p.y + NODE_H + m > y + vh) {
    y = Math.min(p.y - m, p.y + NODE_H + m - vh);
  }
  return x === cam.x && y === cam.y ? cam : { x, y, k: cam.k };
}

// ---- keyboard walk, as the terminal's ↑ ↓ ← → ----

export type Direction = "up" | "down" | "left" | "right" | "first" | "last";

/** step moves a selection (a placed index) through the layout. */
export function step(layout: FlowLayout, at: number, dir: Direction): number {
  const n = layout.placed.length;
  if (n === 0) {
    return -1;
  }
  if (at < 0 || at >= n) {
    return 0;
  }
  const cur = layout.placed[at];
  switch (dir) {
    case "first":
      return 0;
    case "last":
      return n - 1;
    case "left":
      return cur.parent >= 0 ? cur.parent : at;
    case "right": {
      for (let i = at + 1; i < n; i++) {
        if (layout.placed[i].parent === at) {
          return i;
        }
      }
      return at;
    }
    case "up":
    case "down": {
      // The nearest node on the next row up or down (lanes in order), by depth.
      const rowOf = (p: Placed) => p.lane * 1e6 + p.row;
      const want = rowOf(cur);
      let best = at;
      let bestRow = dir === "down" ? Infinity : -Infinity;
      let bestDepth = Infinity;
      for (let i = 0; i < n; i++) {
        const p = layout.placed[i];
        const r = rowOf(p);
        const better = dir === "down" ? r > want && (r < bestRow || (r === bestRow && Math.abs(p.depth - cur.depth) < bestDepth))
          : r < want && (r > bestRow || (r === bestRow && Math.abs(p.depth - cur.depth) < bestDepth));
        if (better) {
          best = i;
          bestRow = r;
          bestDepth = Math.abs(p.depth - cur.depth);
        }
      }
      return best;
    }
  }
}
