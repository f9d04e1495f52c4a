// The run stage: the InteractionModel drawn as SVG, as a flow graph
// (flow.ts over flow-layout.ts) or a sequence diagram (sequence.ts). Only
// machine fields and trusted guild labels appear, always as <text>/<title>
// text content; agent prose never reaches the SVG. Animation is CSS-only,
// driven by class hooks on the same <path>/<g>/<rect> elements
// (graph-edge--active, graph-node--active, seq-message--flowing…). Hover
// and click targets carry data-operation / data-participant / data-role,
// which the app resolves against the live model for the inspector.

export {
  newFlowIndex, syncFlowIndex, layoutFlow, fitCamera, zoomAt, showNode, step, clampZoom, placedKey, participant, toolNodeAt,
  NODE_W, NODE_H, ROW_H, PAD, COL_GAP,
  type FlowIndex, type FlowLayout, type Camera, type Placed, type Direction, type TreeNode,
} from "./flow-layout.js";
export {
  renderFlow, typeSlots, describeNode, activeNodeKey, nodeState, laneTitle, callVerdict, failedCalls, DETAIL_ZOOM,
  type FlowView, type FlowDrawing, type TypeSlot, type NodeState,
} from "./flow.js";
export {
  renderSequenceHeader, renderSequenceBody, sequenceColumns, sequenceColumn, sequenceHeight, messageText, rowTop, windowRows,
  SEQ_ROW_H, SEQ_HEAD_H,
  type Column, type SequenceView,
} from "./sequence.js";
