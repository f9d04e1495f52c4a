// The InteractionModel as the flow endpoint serves it (render.ModelState),
// and the client's merge of its entity-diff envelope (render.Merge is the
// reference: upsert by id, scalars replaced).

export interface Metrics {
  tokens: number;
  cachedPromptTokens: number;
  elapsedSeconds: number;
}

export type ParticipantKind = "human" | "interrupt" | "role" | "tool";

export interface Participant {
  id: string;
  role: string;
  kind: ParticipantKind;
  roleId?: string;
  invocations: number;
  turns?: number;
  metrics: Metrics;
}

export interface Operation {
  id: string;
  kind: "call" | "return" | "observe" | "terminate";
  stack: string;
  source: string;
  destination: string;
  depth: number;
  startedAt: string;
  settledAt: string | null;
  lifecycle: "in_flight" | "settled";
  open?: boolean;
  closedBy?: string;
  outcome?: string;
  /** A tool return's outcome in a few words ("exit 1", "2 failed"). */
  outcomeDetail?: string;
  errorKind?: string;
  role?: string;
  tool?: string;
  callId?: string;
  questionId?: string;
  metrics: Metrics;
  hasDetails?: boolean;
  details?: string;
}

export interface Stack {
  id: string;
  root: string;
  parentStack?: string;
  paused: boolean;
  resolved?: boolean;
  trigger?: string;
  handler?: string;
  target?: string;
  action?: string;
  handlerStatus?: string;
  pushedAt: string;
  resolvedAt: string | null;
}

export interface Totals {
  tokens: number;
  cachedPromptTokens: number;
  modelCalls: number;
  toolCalls: number;
  providerFailures?: number;
  latestElapsedSeconds: number;
}

export interface ModelState {
  version: number;
  runId?: string;
  status: string;
  participants: Participant[];
  operations: Operation[];
  stacks: Stack[];
  activeStack?: string;
  activeOperation?: string;
  totals: Totals;
  resumes?: number;
  skipped?: number;
}

export interface Envelope {
  kind: "snapshot" | "delta";
  from?: number;
  version: number;
  model?: ModelState;
  participants?: Participant[];
  operations?: Operation[];
  stacks?: Stack[];
  runId?: string;
  status?: string;
  activeStack?: string;
  activeOperation?: string;
  totals?: Totals;
  resumes?: number;
  skipped?: number;
}

export function emptyModel(): ModelState {
  return {
    version: 0, status: "", participants: [], operations: [], stacks: [],
    totals: { tokens: 0, cachedPromptTokens: 0, modelCalls: 0, toolCalls: 0, latestElapsedSeconds: 0 },
  };
}

function upsert<T extends { id: string }>(base: readonly T[], changed: readonly T[] | undefined): T[] {
  const out = base.slice();
  if (changed === undefined || changed.length === 0) {
    return out;
  }
  const at = new Map<string, number>();
  out.forEach((v, i) => at.set(v.id, i));
  for (const v of changed) {
    const i = at.get(v.id);
    if (i !== undefined) {
      out[i] = v;
    } else {
      at.set(v.id, out.length);
      out.push(v);
    }
  }
  return out;
}

// Operations are "op-N" at index N-1, so their upsert needs no map.
function upsertOps(base: readonly Operation[], changed: readonly Operation[] | undefined): Operation[] {
  const out = base.slice();
  for (const op of changed ?? []) {
    const i = Number.parseInt(op.id.slice(3), 10) - 1;
    if (op.id.startsWith("op-") && i >= 0 && i < out.length && out[i].id === op.id) {
      out[i] = op;
    } else if (op.id.startsWith("op-") && i === out.length) {
      out.push(op);
    } else {
      return upsert(base, changed); // not the usual shape: the general merge
    }
  }
  return out;
}

/** merge applies an envelope to the model the client holds. */
export function merge(s: ModelState, env: Envelope): ModelState {
  if (env.kind === "snapshot" && env.model !== undefined) {
    // A model with nothing in it may arrive with null lists (Go's nil
    // slices); the views iterate them.
    const m = env.model;
    return { ...m, participants: m.participants ?? [], operations: m.operations ?? [], stacks: m.stacks ?? [] };
  }
  return {
    ...s,
    participants: upsert(s.participants, env.participants),
    operations: upsertOps(s.operations, env.operations),
    stacks: upsert(s.stacks, env.stacks),
    version: env.version,
    runId: env.runId,
    status: env.status ?? "",
    activeStack: env.activeStack,
    activeOperation: env.activeOperation,
    totals: env.totals ?? s.totals,
    resumes: env.resumes,
    skipped: env.skipped,
  };
}

/** participantById finds a participant (participants are few). */
export function participantById(m: ModelState, id: string): Participant | undefined {
  return m.participants.find((p) => p.id === id);
}

/** operationById finds an operation by its "op-N" id in O(1). */
export function operationById(m: ModelState, id: string): Operation | undefined {
  const i = Number.parseInt(id.slice(3), 10) - 1;
  const op = id.startsWith("op-") && i >= 0 ? m.operations[i] : undefined;
  return op !== undefined && op.id === id ? op : m.operations.find((o) => o.id === id);
}

export function stackById(m: ModelState, id: string): Stack | undefined {
  return m.stacks.find((s) => s.id === id);
}

/** isAnimated: in flight on an unpaused stack; observe/terminate never. */
export function isAnimated(m: ModelState, op: Operation): boolean {
  if (op.lifecycle !== "in_flight" || op.kind === "observe" || op.kind === "terminate") {
    return false;
  }
  const s = stackById(m, op.stack);
  return s !== undefined && !s.paused;
}

export function terminalStatus(status: string): boolean {
  return status === "success" || status === "error" || status === "needs_clarification" || status === "interrupted";
}
