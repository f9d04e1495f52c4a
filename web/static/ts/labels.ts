// The trusted label registry: display prose resolved from the guild's
// tiered labels served by /api/config, never from the model. It mirrors
// render/labels.go (tiers, fallbacks, placeholders, and whimsical rotation
// by the 32-bit FNV-1a hash of the operation id) so the browser and the
// terminal name things alike. Every string it returns is placed as text.

import type { ModelState, Operation, Participant, Totals } from "./model.js";
import { operationById, participantById, stackById, terminalStatus } from "./model.js";

export type Tier = "whimsical" | "friendly" | "detailed";
export const TIERS: readonly Tier[] = ["whimsical", "friendly", "detailed"];

export interface Tiered {
  detailed?: string[];
  friendly?: string[];
  whimsical?: string[];
}

export interface RoleLabels {
  label?: Tiered;
  description?: Tiered;
  workingLabel?: Tiered;
}

export interface ToolLabels {
  humanLabel?: Tiered;
  humanDescription?: Tiered;
  humanCallLabel?: Tiered;
  humanWorkingLabel?: Tiered;
}

export interface Visualization {
  pseudoRoleLabels?: Record<string, Tiered>;
  operationTemplates?: Record<string, Record<string, Tiered>>;
  genericOperationTemplates?: Record<string, Tiered>;
  workingTemplates?: Record<string, Tiered>;
}

export interface LabelSet {
  roles?: Record<string, RoleLabels>;
  tools?: Record<string, ToolLabels>;
  visualization: Visualization;
}

function fallbackOrder(t: Tier): Tier[] {
  switch (t) {
    case "whimsical":
      return ["whimsical", "friendly", "detailed"];
    case "friendly":
      return ["friendly", "whimsical", "detailed"];
    default:
      return ["detailed", "friendly", "whimsical"];
  }
}

/** pick: the first non-empty variant list along the tier's fallback walk. */
export function pick(t: Tiered | undefined, tier: Tier): string[] | null {
  if (t === undefined || t === null) {
    return null;
  }
  for (const y of fallbackOrder(tier)) {
    const l = (t[y] ?? []).filter((s) => s !== "");
    if (l.length > 0) {
      return l;
    }
  }
  return null;
}

/** fnv1a32 is the 32-bit FNV-1a hash of s's UTF-8 bytes (render.Seed). */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function rotate(list: string[] | null, seed: string): string {
  if (list === null || list.length === 0) {
    return "";
  }
  return list[fnv1a32(seed) % list.length];
}

/** titleCase: "read_file" → "Read File". */
export function titleCase(s: string): string {
  return s.split(/[_\- ]+/).filter((w) => w !== "")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(" ");
}

/** fill replaces {name} placeholders; an unknown one stays visible. */
export function fill(tmpl: string, value: (name: string) => string | undefined): string {
  return tmpl.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const v = value(name);
    return v === undefined ? whole : v;
  });
}

/** The built-in visualization (render.DefaultVisualization). */
export function defaultVisualization(): Visualization {
  const one = (d: string, f: string, ...w: string[]): Tiered => ({ detailed: [d], friendly: [f], whimsical: w });
  return {
    pseudoRoleLabels: {
      human: one("Operator", "The human", "The Patron"),
      interrupt: one("Interrupt", "Check-in", "The Tap on the Shoulder"),
      tools: one("Tools", "Tools", "The Toolbox"),
    },
    operationTemplates: {
      call: {
        "role->tool": one("{source} calls tool {destinationRole}", "{source} uses {destination}", "{source} reaches for {destination}", "{source} rummages for {destination}"),
        "role->human": one("{source} asks the operator a question", "{source} has a question for you", "{source} sends you a paper airplane"),
        "interrupt->role": one("Interrupt hands control to {destination}", "{destination} is called in", "{destination} is summoned mid-stride"),
        "human->role": one("Task handed to {destination}", "{destination} takes on your task", "{destination} receives a wish"),
      },
      return: {
        "tool->role": one("{sourceRole} returns {outcome} to {destination}", "{source} finished for {destination}", "{source} clatters back to {destination}"),
        "human->role": one("The operator answers {destination}", "You answered {destination}", "A reply flutters down to {destination}"),
      },
    },
    genericOperationTemplates: {
      call: one("{source} calls {destination}", "{source} hands work to {destination}", "{source} summons {destination}", "{source} sends a raven to {destination}", "{source} rings the bell for {destination}"),
      return: one("{source} returns {outcome} to {destination}", "{source} reports back to {destination}", "{source} scampers back to {destination}", "{source} drops a scroll on {destination}'s desk"),
      observe: one("{source} observes {destination}", "{source} looks over {destination}'s work", "{source} peers through {destination}'s keyhole"),
      terminate: one("{source} terminates {destination}", "{source} stops {destination}", "{source} blows out {destination}'s candle"),
    },
    workingTemplates: {
      role: one("{participant} ({participantRole}) is working", "{participant} is working", "{participant} is lost in thought", "{participant} hums over the workbench"),
      tool: one("{participant} is running", "{participant} is busy", "{participant} whirs and clicks"),
      human: one("Waiting for the operator", "Waiting for your answer", "The quill awaits your hand"),
      interrupt: one("Interrupt in progress", "Checking in", "A tap on the shoulder"),
    },
  };
}

/** LabelResolver resolves display labels at one tier (render.LabelResolver). */
export class LabelResolver {
  readonly tier: Tier;
  private readonly set: LabelSet;
  private readonly defaults: Visualization;

  constructor(set: LabelSet | null | undefined, tier: Tier = "friendly") {
    this.set = set ?? { visualization: {} };
    this.tier = TIERS.includes(tier) ? tier : "friendly";
    this.defaults = defaultVisualization();
  }

  withTier(t: Tier): LabelResolver {
    return new LabelResolver(this.set, t);
  }

  private pseudo(key: string): string[] | null {
    return pick(this.set.visualization?.pseudoRoleLabels?.[key], this.tier)
      ?? pick(this.defaults.pseudoRoleLabels?.[key], this.tier);
  }

  /** pseudoLabel labels "human", "interrupt" or "tools". */
  pseudoLabel(key: string): string {
    const l = this.pseudo(key);
    return l !== null && l.length > 0 ? l[0] : titleCase(key);
  }

  participantLabel(p: Participant): string {
    let l: string[] | null;
    switch (p.kind) {
      case "role":
        l = pick(this.set.roles?.[p.role]?.label, this.tier);
        break;
      case "tool":
        l = pick(this.set.tools?.[p.role]?.humanLabel, this.tier);
        break;
      default:
        l = this.pseudo(p.role);
    }
    return l !== null && l.length > 0 ? l[0] : titleCase(p.role);
  }

  /** roleLabel labels a role or tool by name (top bar slots). */
  roleLabel(kind: "role" | "tool", role: string): string {
    return this.participantLabel({ id: role, role, kind, invocations: 0, metrics: { tokens: 0, cachedPromptTokens: 0, elapsedSeconds: 0 } });
  }

  participantDescription(p: Pick<Participant, "kind" | "role">): string {
    let l: string[] | null = null;
    if (p.kind === "role") {
      l = pick(this.set.roles?.[p.role]?.description, this.tier);
    } else if (p.kind === "tool") {
      l = pick(this.set.tools?.[p.role]?.humanDescription, this.tier);
    }
    return l !== null && l.length > 0 ? l[0] : "";
  }

  operationLabel(op: Operation, source: Participant, destination: Participant): string {
    const kind = op.kind;
    let l: string[] | null = null;
    if (op.kind === "call" && destination.kind === "tool") {
      l = pick(this.set.tools?.[destination.role]?.humanCallLabel, this.tier);
    }
    const disc = source.kind + "->" + destination.kind;
    const v = this.set.visualization ?? {};
    l = l ?? pick(v.operationTemplates?.[kind]?.[disc], this.tier);
    l = l ?? pick(v.genericOperationTemplates?.[kind], this.tier);
    l = l ?? pick(this.defaults.operationTemplates?.[kind]?.[disc], this.tier);
    l = l ?? pick(this.defaults.genericOperationTemplates?.[kind], this.tier);
    let tmpl = rotate(l, op.id);
    if (tmpl === "") {
      tmpl = "{source} → {destination}";
    }
    return fill(tmpl, (name) => {
      switch (name) {
        case "source": return this.participantLabel(source);
        case "destination": return this.participantLabel(destination);
        case "sourceRole": return source.role;
        case "destinationRole": return destination.role;
        case "sourceKind": return source.kind;
        case "destinationKind": return destination.kind;
        case "stack": return op.stack;
        case "outcome": return op.outcome ?? "";
      }
      return undefined;
    });
  }

  /** workingLabel: the caption while p works, or null when nothing applies. */
  workingLabel(p: Participant, seed: string): string | null {
    let l: string[] | null = null;
    if (p.kind === "role") {
      l = pick(this.set.roles?.[p.role]?.workingLabel, this.tier);
    } else if (p.kind === "tool") {
      l = pick(this.set.tools?.[p.role]?.humanWorkingLabel, this.tier);
    }
    l = l ?? pick(this.set.visualization?.workingTemplates?.[p.kind], this.tier);
    l = l ?? pick(this.defaults.workingTemplates?.[p.kind], this.tier);
    if (l === null) {
      return null;
    }
    return fill(rotate(l, seed), (name) => {
      switch (name) {
        case "participant": return this.participantLabel(p);
        case "participantRole": return p.role;
        case "participantKind": return p.kind;
        case "participantId": return p.id;
      }
      return undefined;
    });
  }

  hasToolWorkingLabel(tool: string): boolean {
    return pick(this.set.tools?.[tool]?.humanWorkingLabel, this.tier) !== null;
  }
}

/** deriveNowCaption is render.NowCaption: one line of what the run is doing. */
export function deriveNowCaption(m: ModelState, r: LabelResolver): string {
  if (terminalStatus(m.status)) {
    return "";
  }
  const op = m.activeOperation ? operationById(m, m.activeOperation) : undefined;
  if (op === undefined) {
    const s = m.activeStack ? stackById(m, m.activeStack) : undefined;
    if (s === undefined || m.activeStack === "main") {
      return "";
    }
    const p = participantById(m, s.root);
    const w = p !== undefined ? r.workingLabel(p, m.activeStack ?? "") : null;
    return w !== null ? w + "…" : "";
  }
  const src = participantById(m, op.source);
  const dst = participantById(m, op.destination);
  if (src === undefined || dst === undefined) {
    return "";
  }
  if (op.kind === "call" && dst.kind === "tool" && op.lifecycle === "in_flight") {
    if (r.hasToolWorkingLabel(dst.role)) {
      return (r.workingLabel(dst, op.id) ?? "") + "…";
    }
    return r.operationLabel(op, src, dst) + "…";
  }
  if (op.lifecycle === "settled" && dst.kind !== "human") {
    const w = r.workingLabel(dst, op.id);
    if (w !== null) {
      return w + "…";
    }
  }
  return r.operationLabel(op, src, dst) + "…";
}

/** compactCount formats a count: 999, 12.3k, 4.56M. */
export function compactCount(n: number): string {
  const trim = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return trim((n / 1000).toFixed(1)) + "k";
  }
  return trim((n / 1_000_000).toFixed(2)) + "M";
}

/** formatSeconds: 0.4s, 3.2s, 2m05s, 1h02m. */
export function formatSeconds(sec: number): string {
  const pad = (n: number) => (n < 10 ? "0" + n : String(n));
  if (sec < 60) {
    return sec.toFixed(1) + "s";
  }
  const s = Math.floor(sec);
  if (sec < 3600) {
    return Math.floor(s / 60) + "m" + pad(s % 60) + "s";
  }
  return Math.floor(s / 3600) + "h" + pad(Math.floor((s % 3600) / 60)) + "m";
}

/** deriveCostStrip is the ambient cost strip's spans (render.CostStrip). */
export function deriveCostStrip(t: Totals): string[] {
  const parts = [compactCount(t.tokens) + " tokens"];
  if (t.cachedPromptTokens > 0) {
    parts.push(compactCount(t.cachedPromptTokens) + " cached");
  }
  if (t.latestElapsedSeconds > 0) {
    parts.push("last " + formatSeconds(t.latestElapsedSeconds));
  }
  if ((t.providerFailures ?? 0) > 0) {
    parts.push(String(t.providerFailures) + " provider failures");
  }
  return parts;
}
