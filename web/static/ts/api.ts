// The console's HTTP API as the client sees it: the JSON shapes its routes
// answer (docs/api.md) and the one function that calls them. Every URL the
// client asks the server for is made by serverURL, so a change of where the
// console is served from (a path prefix) is one edit here.

import type { LabelSet } from "./labels.js";
import type { RunError, RunResult } from "./result-modal.js";

// ---- API shapes (see docs/api.md) ----

export interface Config {
  version: string;
  entryRole: string;
  labels: LabelSet;
  efforts: string[];
  logLevels: string[];
  queue: boolean;
  setup: string[];
}

// A change of an MCP server's state (mcp_server events).
export interface McpNote {
  runId: string;
  server: string;
  state: string;
  message?: string;
  tools?: number;
  roleId?: string;
}

// An egress decision of the run's sandbox proxy or web tools.
export interface EgressNote {
  runId: string;
  host: string;
  port: number;
  allowed: boolean;
  via: string;
  reason?: string;
  roleId?: string;
}

export interface HealthView {
  state: string;
  category?: string;
  consecutiveFailures: number;
  nextProbeAt?: string;
  suspendedRunId?: string;
}

export interface RunSummary {
  runId: string;
  task: string;
  effort: string;
  status: string;
  startedAt: string;
  endedAt?: string;
  continuesFrom?: string;
  summary: string | null;
  result?: RunResult | null;
  error?: RunError | null;
  active: boolean;
}

export interface QuestionRecord {
  id: string;
  question: string;
  answered: boolean;
  answer?: string;
  askedAt: string;
}

export interface InterruptRecord {
  trigger: string;
  message?: string;
  at: string;
  resolved: boolean;
  action?: string;
  answer?: string;
  dropped?: string;
}

export interface RoleView {
  id: string;
  role: string;
  status: string;
  invocations: number;
}

export interface RunView extends RunSummary {
  suspension?: { category: string; suspendedAt: string };
  roles: RoleView[];
  currentActivity: string;
  questions: QuestionRecord[];
  interrupts: InterruptRecord[];
  planModifications: { message: string; targetRole: string; at: string }[];
  interruptPending: boolean;
  /** The model answered without any tool call in the whole run. */
  noAction?: boolean;
  /** What the run told the operator about its setup (tool calls written as text), the program's words. */
  notes?: string[];
  /** The model's name and the context its latest caller fills (tui/meters.go). */
  meters?: Meters | null;
}

/** The run view's model meters: machine fields, shown as text. */
export interface Meters {
  model?: string;
  roleId?: string;
  /** Tokens of the latest caller's conversation; 0 before its first reply. */
  context: number;
  /** The context window; 0 when neither the deployment nor a compaction said. */
  window: number;
}

export interface TranscriptMessage {
  kind: string;
  role: string;
  content: string;
  truncated?: boolean;
  toolCalls?: { id: string; name: string; arguments: string }[];
  tool?: string;
  resultKind?: string;
}

export interface Transcript {
  runId: string;
  roleId: string;
  role: string;
  messages: TranscriptMessage[];
  omitted: number;
}

/**
 * serverURL is the URL of a server path ("/api/runs", "/static/css/x.svg")
 * for this page. Every request, the event stream and every asset the
 * client names go through it. The console is served under a prefix drawn
 * per server start (/s/RANDOM/, the access cookie's path, so no other
 * server on the host receives the cookie): the URL is relative to the
 * page, so it stays under whatever prefix the page was served from.
 */
export function serverURL(path: string): string {
  return path.replace(/^\/+/, "");
}

export function enc(s: string): string {
  return encodeURIComponent(s);
}

export interface Reply<T> {
  ok: boolean;
  status: number;
  body: T;
}

/**
 * request calls the API. The server's access cookie (HttpOnly, set on the
 * first visit of the printed URL) rides along on every same-origin request,
 * so the client never sees, stores or sends the token itself.
 */
export async function request<T>(path: string, init?: { method?: string; body?: unknown }): Promise<Reply<T>> {
  const opts: RequestInit = { method: init?.method ?? "GET", credentials: "same-origin", headers: {} };
  if (init?.body !== undefined) {
    opts.headers = { "Content-Type": "application/json" };
    opts.body = JSON.stringify(init.body);
  }
  try {
    const res = await fetch(serverURL(path), opts);
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { ok: res.ok, status: res.status, body: body as T };
  } catch {
    return { ok: false, status: 0, body: null as T };
  }
}
