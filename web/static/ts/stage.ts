// The run stage: the flow graph and the sequence diagram, what they draw
// (flowStage, sequenceStage), and what the operator does on them — walking,
// panning and zooming the graph, scrolling and selecting in the sequence
// view, and the inspector card (hover, pin, its content) over both. It
// keeps the graph's incremental index and the gestures in progress.

import { h, type VNode } from "./hyperapp.js";
import { LabelResolver } from "./labels.js";
import {
  COL_GAP, DETAIL_ZOOM, NODE_W, PAD, SEQ_HEAD_H, SEQ_ROW_H, activeNodeKey, clampZoom, describeNode, fitCamera, layoutFlow, messageText, newFlowIndex,
  placedKey, renderFlow, renderSequenceBody, renderSequenceHeader, rowTop, sequenceColumns, sequenceHeight, showNode, step, syncFlowIndex,
  toolNodeAt, zoomAt, typeSlots, type Camera, type Direction, type FlowLayout, type Placed, type TreeNode,
} from "./run-stage/index.js";
import { deriveOperationTooltip, deriveParticipantTooltip, deriveRoleTooltip, type TooltipContent } from "./tooltip.js";
import { initialState, type Action, type State, type Target, type Tip } from "./state.js";
import type { Client } from "./client.js";

/** Stage is the table makeStage builds. */
export type Stage = ReturnType<typeof makeStage>;

/** makeStage builds the run stage over c. */
export function makeStage(c: Client) {
  const { send, effect } = c;
  let tipSeq = 0;
  // The flow graph's incremental index of the viewed model (run-stage), and
  // the camera the last frame drew (the follow camera is derived per frame).
  const flowIndex = newFlowIndex();
  let lastCam: Camera = initialState.flowCam;
  // Pointer gestures on the flow graph: the pointers down, and the camera
  // and positions a drag or pinch started from.
  const pointers = new Map<number, { x: number; y: number }>();
  let gesture: { cam: Camera; x: number; y: number; dist: number; moved: boolean } | null = null;
  let dragged = false;
  // Where the sequence view must scroll to after the next frame (a
  // selection moved off screen), or null.
  let seqScrollTo: number | null = null;
  /** takeSeqScroll is the sequence view's pending scroll position, once. */
  const takeSeqScroll = (): number | null => {
    const to = seqScrollTo;
    seqScrollTo = null;
    return to;
  };

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
    if (s.tip === null || s.tip.hideToken !== 0 || s.tip.pinned) {
      return s;
    }
    const token = ++tipSeq;
    return [{ ...s, tip: { ...s.tip, hideToken: token } }, effect(() => {
      window.setTimeout(() => send(HideIf, token), 300);
    })];
  };
  const StageOver: Action<MouseEvent> = (s, ev) => {
    if (s.tip?.pinned === true || gesture !== null) {
      return s; // a pinned inspector stays until closed; a drag is not a hover
    }
    const target = targetOf(ev);
    if (target === null) {
      return scheduleHide(s);
    }
    if (s.tip !== null && sameTarget(s.tip.target, target)) {
      return s.tip.hideToken === 0 ? s : { ...s, tip: { ...s.tip, hideToken: 0 } };
    }
    const tip: Tip = { target, x: ev.clientX, y: ev.clientY, hideToken: 0, pinned: false };
    if (target.kind === "operation") {
      const runId = s.runId;
      return [{ ...s, tip, details: null }, effect(() => void c.fetch.loadDetails(runId, target.id))];
    }
    return { ...s, tip };
  };
  // pin opens the inspector on a target until it is closed (click or Enter).
  const pin = (s: State, target: Target): State | [State, unknown] => {
    const tip: Tip = { target, x: 0, y: 0, hideToken: 0, pinned: true };
    const opId = target.kind === "operation" ? target.id : latestResultOf(s, target);
    if (opId !== undefined) {
      const runId = s.runId;
      tip.detailsOp = target.kind === "operation" ? undefined : opId;
      const keep = s.details !== null && s.details.opId === opId ? s.details : null;
      return [{ ...s, tip, details: keep }, keep !== null ? null : effect(() => void c.fetch.loadDetails(runId, opId))];
    }
    return { ...s, tip };
  };
  const toolNode = (t: Target): TreeNode | undefined =>
    (t.kind === "participant" ? toolNodeAt(flowIndex, t.stack, t.node) : undefined);
  // latestResultOf is the return of a tool node's latest call.
  const latestResultOf = (s: State, t: Target): string | undefined => {
    const n = toolNode(t);
    const call = n !== undefined && n.last >= 0 ? s.flow.operations[n.last] : undefined;
    return call?.closedBy;
  };
  // nodeTarget is the inspector's target for placed node p.
  const nodeTarget = (layout: FlowLayout, p: Placed): Target =>
    ({ kind: "participant", id: p.pid, stack: layout.lanes[p.lane].stack, node: p.key });
  const Pin: Action<Target> = (s, target) => pin(s, target);
  const ClosePin: Action<unknown> = (s) => ({ ...s, tip: null });
  // A click on a role or tool chip above the graph inspects that type.
  const ChipClick: Action<MouseEvent> = (s, ev) => {
    const t = targetOf(ev);
    return t !== null ? pin(s, t) : s;
  };
  const StageLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const CardEnter: Action<MouseEvent> = (s) => (s.tip === null ? s : { ...s, tip: { ...s.tip, hideToken: 0 } });
  const CardLeave: Action<MouseEvent> = (s) => scheduleHide(s);
  const DetailsLoaded: Action<{ opId: string; text: string }> = (s, d) =>
    (s.tip !== null && (s.tip.target.kind === "operation" && s.tip.target.id === d.opId || s.tip.detailsOp === d.opId) ? { ...s, details: d } : s);

  // ---- the flow graph: selection, pan and zoom ----

  const canvas = (s: State) => ({ w: s.stage.w > 0 ? s.stage.w : 800, h: s.stage.h > 0 ? s.stage.h : 480 });
  const flowLayoutOf = (s: State): FlowLayout => {
    syncFlowIndex(flowIndex, s.flow);
    return layoutFlow(flowIndex, s.flow);
  };
  // select moves the flow selection to placed node i, brings it into view
  // and says what it is in the live region.
  const selectNode = (s: State, layout: FlowLayout, i: number): State => {
    const p = layout.placed[i];
    if (p === undefined) {
      return s;
    }
    const { w, h: hgt } = canvas(s);
    const cam = showNode(lastCam, p, w, hgt);
    const r = new LabelResolver(s.config?.labels, s.tier);
    return {
      ...s, flowSel: placedKey(layout.lanes[p.lane].stack, p.key), flowCam: cam, flowFollow: false,
      announce: describeNode(s.flow, r, flowIndex, layout, i),
    };
  };
  const FLOW_KEYS: Record<string, Direction> = {
    ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right", Home: "first", End: "last",
  };
  const FlowKey: Action<KeyboardEvent> = (s, ev) => {
    const layout = flowLayoutOf(s);
    const { w, h: hgt } = canvas(s);
    const at = s.flowSel !== "" ? layout.byKey.get(s.flowSel) ?? -1 : -1;
    const dir = FLOW_KEYS[ev.key];
    if (dir !== undefined && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      if (at < 0) {
        const active = activeNodeKey(flowIndex, s.flow);
        const start = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) ?? 0 : 0;
        return selectNode(s, layout, start);
      }
      return selectNode(s, layout, step(layout, at, dir));
    }
    switch (ev.key) {
      case "Enter":
      case " ": {
        ev.preventDefault();
        const p = at >= 0 ? layout.placed[at] : undefined;
        return p !== undefined ? pin(s, nodeTarget(layout, p)) : s;
      }
      case "+":
      case "=":
        ev.preventDefault();
        return { ...s, flowCam: zoomAt(lastCam, 1.25, w / 2, hgt / 2), flowFollow: false };
      case "-":
      case "_":
        ev.preventDefault();
        return { ...s, flowCam: zoomAt(lastCam, 0.8, w / 2, hgt / 2), flowFollow: false };
      case "0":
        ev.preventDefault();
        return { ...s, flowCam: fitCamera(layout, w, hgt), flowFollow: false };
      case "f":
        return { ...s, flowFollow: true };
      case "PageDown":
      case "PageUp": {
        ev.preventDefault();
        const dy = (ev.key === "PageDown" ? 0.9 : -0.9) * hgt / lastCam.k;
        return { ...s, flowCam: { ...lastCam, y: lastCam.y + dy }, flowFollow: false };
      }
    }
    return s;
  };
  const Zoom: Action<number> = (s, factor) => {
    const { w, h: hgt } = canvas(s);
    return { ...s, flowCam: zoomAt(lastCam, factor, w / 2, hgt / 2), flowFollow: false };
  };
  const Fit: Action<unknown> = (s) => {
    const { w, h: hgt } = canvas(s);
    return { ...s, flowCam: fitCamera(flowLayoutOf(s), w, hgt), flowFollow: false };
  };
  // Follow goes back to the run: readable again if zoomed out, with the
  // node that acts now (else the main lane's root) at the top left.
  const Follow: Action<unknown> = (s) => {
    const layout = flowLayoutOf(s);
    const k = lastCam.k < DETAIL_ZOOM ? 1 : lastCam.k;
    const active = activeNodeKey(flowIndex, s.flow);
    const at = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) ?? 0 : 0;
    const p = layout.placed[at];
    const cam = p !== undefined ? { x: Math.max(0, p.x - NODE_W - COL_GAP - PAD), y: Math.max(0, p.y - 2 * PAD - 30), k } : { x: 0, y: 0, k };
    return { ...s, flowFollow: true, flowCam: cam };
  };
  const FlowWheel: Action<WheelEvent> = (s, ev) => {
    ev.preventDefault();
    const rect = (ev.currentTarget as Element).getBoundingClientRect();
    const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? rect.height : 1;
    if (ev.ctrlKey || ev.metaKey) {
      // A pinch on a touchpad arrives as a wheel with ctrlKey.
      const factor = Math.exp(-ev.deltaY * unit * 0.002);
      return { ...s, flowCam: zoomAt(lastCam, factor, ev.clientX - rect.left, ev.clientY - rect.top), flowFollow: false };
    }
    const dx = (ev.shiftKey ? ev.deltaY : ev.deltaX) * unit / lastCam.k;
    const dy = (ev.shiftKey ? 0 : ev.deltaY) * unit / lastCam.k;
    return { ...s, flowCam: { ...lastCam, x: lastCam.x + dx, y: lastCam.y + dy }, flowFollow: false };
  };
  const pinchDistance = () => {
    const ps = Array.from(pointers.values());
    return ps.length >= 2 ? Math.hypot(ps[0].x - ps[1].x, ps[0].y - ps[1].y) : 0;
  };
  const FlowPointerDown: Action<PointerEvent> = (s, ev) => {
    if (ev.button !== 0 && ev.pointerType === "mouse") {
      return s;
    }
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    (ev.currentTarget as Element).setPointerCapture?.(ev.pointerId);
    const ps = Array.from(pointers.values());
    const cx = ps.reduce((a, p) => a + p.x, 0) / ps.length;
    const cy = ps.reduce((a, p) => a + p.y, 0) / ps.length;
    gesture = { cam: lastCam, x: cx, y: cy, dist: pinchDistance(), moved: gesture?.moved ?? false };
    dragged = false;
    return s;
  };
  const FlowPointerMove: Action<PointerEvent> = (s, ev) => {
    if (gesture === null || !pointers.has(ev.pointerId)) {
      return s;
    }
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    const ps = Array.from(pointers.values());
    const cx = ps.reduce((a, p) => a + p.x, 0) / ps.length;
    const cy = ps.reduce((a, p) => a + p.y, 0) / ps.length;
    const dx = cx - gesture.x;
    const dy = cy - gesture.y;
    if (!gesture.moved && Math.hypot(dx, dy) < 4 && ps.length < 2) {
      return s; // a click, not yet a drag
    }
    gesture.moved = true;
    dragged = true;
    let cam = { ...gesture.cam, x: gesture.cam.x - dx / gesture.cam.k, y: gesture.cam.y - dy / gesture.cam.k };
    if (ps.length >= 2 && gesture.dist > 0) {
      const rect = (ev.currentTarget as Element).getBoundingClientRect();
      cam = zoomAt(cam, pinchDistance() / gesture.dist, cx - rect.left, cy - rect.top);
    }
    return { ...s, flowCam: { ...cam, k: clampZoom(cam.k) }, flowFollow: false, tip: s.tip?.pinned ? s.tip : null };
  };
  const FlowPointerUp: Action<PointerEvent> = (s, ev) => {
    pointers.delete(ev.pointerId);
    if (pointers.size === 0) {
      gesture = null;
    } else if (gesture !== null) {
      // One finger of a pinch lifted: carry on as a drag from here.
      const [p] = Array.from(pointers.values());
      gesture = { cam: lastCam, x: p.x, y: p.y, dist: 0, moved: true };
    }
    return s;
  };
  const FlowClick: Action<MouseEvent> = (s, ev) => {
    if (dragged) {
      dragged = false;
      return s;
    }
    const el = ev.target instanceof Element ? ev.target.closest("[data-node]") : null;
    if (el === null) {
      return s.tip?.pinned ? { ...s, tip: null } : s;
    }
    const layout = flowLayoutOf(s);
    const i = layout.byKey.get(el.getAttribute("data-node") ?? "") ?? -1;
    const next = selectNode(s, layout, i);
    const p = layout.placed[i];
    return p !== undefined ? pin(next, nodeTarget(layout, p)) : next;
  };

  // ---- the sequence view: scroll window, selection ----

  const SeqScroll: Action<Event> = (s, ev) => {
    const el = ev.currentTarget as HTMLElement;
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - SEQ_ROW_H;
    if (el.scrollTop === s.seqTop && el.scrollLeft === s.seqLeft && atEnd === s.seqFollow) {
      return s;
    }
    return { ...s, seqTop: el.scrollTop, seqLeft: el.scrollLeft, seqFollow: atEnd };
  };
  const selectRow = (s: State, i: number, r: LabelResolver): State => {
    const n = s.flow.operations.length;
    if (n === 0) {
      return s;
    }
    const at = Math.max(0, Math.min(n - 1, i));
    const { h: hgt } = canvas(s);
    const top = rowTop(at);
    const view = hgt - 40; // below the sticky column headings
    if (top < s.seqTop) {
      seqScrollTo = Math.max(0, top - SEQ_ROW_H);
    } else if (top + SEQ_ROW_H > s.seqTop + view) {
      seqScrollTo = top + 2 * SEQ_ROW_H - view;
    }
    syncFlowIndex(flowIndex, s.flow);
    return { ...s, seqSel: at, seqFollow: false, announce: messageText(s.flow, r, flowIndex, s.flow.operations[at], at) };
  };
  const SeqKey: Action<KeyboardEvent> = (s, ev) => {
    const r = new LabelResolver(s.config?.labels, s.tier);
    const n = s.flow.operations.length;
    const page = Math.max(1, Math.floor(canvas(s).h / SEQ_ROW_H) - 2);
    const at = s.seqSel >= 0 ? s.seqSel : Math.min(n - 1, Math.floor(s.seqTop / SEQ_ROW_H));
    const moves: Record<string, number> = { ArrowUp: -1, ArrowDown: 1, PageUp: -page, PageDown: page, Home: -n, End: n };
    const d = moves[ev.key];
    if (d !== undefined && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      return selectRow(s, s.seqSel < 0 && d > 0 && d < n ? at : at + d, r);
    }
    if ((ev.key === "Enter" || ev.key === " ") && s.seqSel >= 0 && s.seqSel < n) {
      ev.preventDefault();
      return pin(s, { kind: "operation", id: s.flow.operations[s.seqSel].id });
    }
    if (ev.key === "f") {
      return { ...s, seqFollow: true, seqSel: -1 };
    }
    return s;
  };
  const SeqClick: Action<MouseEvent> = (s, ev) => {
    const el = ev.target instanceof Element ? ev.target.closest("[data-index]") : null;
    if (el === null) {
      return s;
    }
    const i = Number.parseInt(el.getAttribute("data-index") ?? "", 10);
    const op = s.flow.operations[i];
    if (op === undefined) {
      return s;
    }
    const next = selectRow(s, i, new LabelResolver(s.config?.labels, s.tier));
    seqScrollTo = null; // it is on screen: it was clicked
    return pin(next, { kind: "operation", id: op.id });
  };
  const SeqFollow: Action<unknown> = (s) => ({ ...s, seqFollow: true, seqSel: -1 });

  function tooltipContent(s: State, r: LabelResolver): TooltipContent | null {
    const t = s.tip?.target;
    if (t === undefined) {
      return null;
    }
    switch (t.kind) {
      case "operation":
        return deriveOperationTooltip(s.flow, r, t.id, s.details?.opId === t.id ? s.details.text : undefined);
      case "participant": {
        const n = toolNode(t);
        const caller = t.node !== undefined ? t.node.slice(0, t.node.indexOf("\u0000")) : "";
        const latest = s.tip?.detailsOp !== undefined && s.details?.opId === s.tip.detailsOp ? s.details.text : undefined;
        return deriveParticipantTooltip(s.flow, r, t.id, n !== undefined ? { caller, callOps: n.callOps, latestResult: latest } : undefined);
      }
      case "role":
        return deriveRoleTooltip(s.flow, r, t.roleKind, t.id);
    }
  }

  // flowStage is the flow graph with its strip of role and tool counts and
  // its pan and zoom controls. The camera follows the active node until the
  // operator pans, zooms or walks the graph.
  function flowStage(s: State, r: LabelResolver): VNode[] {
    syncFlowIndex(flowIndex, s.flow);
    const layout = layoutFlow(flowIndex, s.flow);
    const { w, h: hgt } = canvas(s);
    let cam = s.flowCam;
    if (s.flowFollow) {
      const active = activeNodeKey(flowIndex, s.flow);
      const at = active !== null ? layout.byKey.get(placedKey(active.stack, active.key)) : undefined;
      if (at !== undefined) {
        cam = showNode(cam, layout.placed[at], w, hgt);
      }
    }
    lastCam = cam;
    const drawing = renderFlow(s.flow, r, flowIndex, { camera: cam, width: w, height: hgt, selected: s.flowSel });
    const slots = typeSlots(s.flow);
    return [
      h("div", { class: "stage-toolbar" }, [
        h("div", { class: "type-chips", role: "group", "aria-label": "Roles and tools that ran" }, slots.map((t) =>
          h("button", {
            type: "button", class: "type-chip type-chip--" + t.kind, key: t.kind + ":" + t.role, "data-role": t.role, "data-kind": t.kind,
            onclick: ChipClick,
          }, [
            h("span", { class: "type-chip-label" }, (t.kind === "tool" ? "⚙ " : "") + r.roleLabel(t.kind, t.role)),
            h("span", { class: "type-chip-count" }, t.kind === "role" ? (t.instances > 1 ? t.instances + " instances" : "1 instance") : "×" + t.invocations),
          ]))),
        h("div", { class: "zoom-controls", role: "group", "aria-label": "Pan and zoom" }, [
          h("button", { type: "button", onclick: [Zoom, 0.8], "aria-label": "Zoom out" }, "−"),
          h("span", { class: "zoom-level", "aria-live": "off" }, Math.round(cam.k * 100) + "%"),
          h("button", { type: "button", onclick: [Zoom, 1.25], "aria-label": "Zoom in" }, "+"),
          h("button", { type: "button", onclick: Fit }, "Fit"),
          h("button", { type: "button", onclick: Follow, "aria-pressed": String(s.flowFollow) }, "Follow"),
        ]),
      ]),
      h("div", {
        class: "stage-canvas flow-canvas", tabindex: "0", role: "application",
        "aria-label": "Flow graph, " + layout.placed.length + " nodes. Arrow keys walk the graph, Enter inspects, plus and minus zoom, 0 fits, f follows the run.",
        "aria-describedby": "stage-announce",
        onkeydown: FlowKey, onwheel: FlowWheel, onpointerdown: FlowPointerDown, onpointermove: FlowPointerMove,
        onpointerup: FlowPointerUp, onpointercancel: FlowPointerUp, onclick: FlowClick,
      }, [s.flow.operations.length === 0 ? h("p", { class: "empty" }, "Nothing has happened yet.") : drawing.svg]),
    ];
  }

  // sequenceStage is the sequence diagram in its scroll window.
  function sequenceStage(s: State, r: LabelResolver): VNode[] {
    syncFlowIndex(flowIndex, s.flow);
    const { w, h: hgt } = canvas(s);
    const cols = sequenceColumns(s.flow, r);
    // Columns share the width when they can; below 96 px each the diagram scrolls sideways.
    const colW = Math.max(96, Math.min(170, Math.floor((w - 26) / Math.max(cols.length, 1))));
    const n = s.flow.operations.length;
    return [
      h("div", { class: "stage-toolbar" }, [
        h("span", { class: "muted seq-count" }, n + (n === 1 ? " operation" : " operations")),
        h("div", { class: "zoom-controls" }, [
          h("button", { type: "button", onclick: SeqFollow, "aria-pressed": String(s.seqFollow) }, "Follow newest"),
        ]),
      ]),
      h("div", {
        class: "stage-canvas seq-scroll", tabindex: "0", role: "application",
        "aria-label": "Sequence diagram, " + n + " operations. Up and down select a message, Enter inspects it, f follows the newest.",
        "aria-describedby": "stage-announce",
        onscroll: SeqScroll, onkeydown: SeqKey, onclick: SeqClick,
      }, [
        h("div", { class: "seq-sticky" }, [renderSequenceHeader(cols, colW)]),
        n === 0 ? h("p", { class: "empty" }, "Nothing has happened yet.")
          : renderSequenceBody(s.flow, r, flowIndex, cols, {
            // Following, the window is the newest rows, whatever the scroll
            // position was: the scroll catches up after the frame.
            scrollTop: s.seqFollow ? Math.max(0, sequenceHeight(s.flow) + SEQ_HEAD_H - hgt) : s.seqTop,
            height: Math.max(hgt, 200), scrollLeft: s.seqLeft, width: w, columnWidth: colW, selected: s.seqSel,
          }),
      ]),
    ];
  }

  return {
    HideIf,
    StageOver,
    Pin,
    ClosePin,
    ChipClick,
    StageLeave,
    CardEnter,
    CardLeave,
    DetailsLoaded,
    FlowKey,
    Zoom,
    Fit,
    Follow,
    FlowWheel,
    FlowPointerDown,
    FlowPointerMove,
    FlowPointerUp,
    FlowClick,
    SeqScroll,
    SeqKey,
    SeqClick,
    SeqFollow,
    flowStage,
    sequenceStage,
    tooltipContent,
    takeSeqScroll,
  };
}
