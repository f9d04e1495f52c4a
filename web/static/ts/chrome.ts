// The page's chrome: the top bar (the run's label, the screens' tabs, the
// preferences), the banners above every screen (access lost, provider
// health, MCP servers, egress) and the tab's title and icon. Every string
// here is a text node: the run's label is plain text (title.ts).

import { h, type VNode } from "./hyperapp.js";
import { TIERS } from "./labels.js";
import { serverURL } from "./api.js";
import { HEALTH_COPY, runLabel, type Screen, type State } from "./state.js";
import type { Client } from "./client.js";

/** makeChrome builds the chrome's views over c. */
export function makeChrome(c: Client) {
  const { SetScreen, ToggleSound, SetTier } = c.act;

  function updateChrome(s: State): void {
    const status = s.run?.status ?? "";
    const asking = s.questions.some((q) => q.runId === s.runId);
    const label = runLabel(s.run);
    const mark = asking ? "? " : status === "running" ? "▶ " : status === "success" ? "✓ " : status === "error" ? "✗ " : "";
    const title = mark + (label !== "" ? label + " — " : "") + "Guildhall";
    if (document.title !== title) {
      document.title = title;
    }
    const icon = asking ? "question" : status === "running" ? "running" : status === "success" ? "done"
      : status === "" ? "idle" : status === "paused" || status === "suspended" ? "question" : "error";
    const link = document.getElementById("favicon");
    const href = serverURL("/static/css/favicon-" + icon + ".svg");
    if (link instanceof HTMLLinkElement && link.getAttribute("href") !== href) {
      link.setAttribute("href", href);
    }
  }

  function authBanner(s: State): VNode | null {
    if (!s.authLost) {
      return null;
    }
    return h("div", { class: "auth-banner", role: "alert" },
      "This page has lost its access to Guildhall. Open the URL that Guildhall printed when it started.");
  }

  function healthBanner(s: State): VNode | null {
    const hv = s.health;
    if (hv === null || hv.state === "ok") {
      return null;
    }
    const base = HEALTH_COPY[hv.category ?? ""] ?? "The model provider is having trouble.";
    const tail = hv.state === "suspended" ? " The run is suspended until the provider recovers." : " Guildhall is retrying.";
    return h("div", { class: "health-banner health-banner--" + hv.state, role: "status" }, base + tail);
  }

  // egressLine shows the run's latest egress decision, and how many were
  // denied: machine fields and the program's own words, as text.
  // mcpLine shows an MCP server that failed, exited or stopped answering:
  // the server's name and the program's words, as text.
  function mcpLine(s: State): VNode | null {
    const n = s.mcp;
    if (n === null || n.runId !== s.runId || n.state === "ready") {
      return null;
    }
    const text = "MCP server " + n.server + " " + n.state + (n.message ? ": " + n.message : "");
    return h("div", { class: "egress-line egress-line--denied mcp-line", role: "alert" }, text);
  }

  function egressLine(s: State): VNode | null {
    const e = s.egress;
    if (e === null || e.last.runId !== s.runId) {
      return null;
    }
    const n = e.last;
    const who = n.roleId ? " (" + n.roleId + " via " + n.via + ")" : " (via " + n.via + ")";
    const text = (n.allowed ? "Egress allowed: " : "Egress denied: ") + n.host + ":" + n.port + who +
      (!n.allowed && n.reason ? ": " + n.reason : "") + (e.denied > 0 ? " · " + e.denied + " denied in this run" : "");
    return h("div", { class: "egress-line egress-line--" + (n.allowed ? "allowed" : "denied"), role: "status" }, text);
  }


  function topBar(s: State): VNode {
    const tab = (screen: Screen, label: string) =>
      h("button", {
        type: "button", class: { tab: true, "is-active": s.screen === screen }, onclick: [SetScreen, screen],
        "aria-current": s.screen === screen ? "page" : undefined,
      }, label);
    const label = s.run !== null ? runLabel(s.run) : "No run yet";
    return h("div", { class: "top-bar" }, [
      h("h1", { class: "brand" }, "Guildhall"),
      h("div", { class: "run-identity" }, [
        h("span", { class: "run-label", title: label }, label),
        s.run !== null ? h("span", { class: "status status--" + s.run.status }, s.run.status) : null,
        s.run !== null ? h("span", { class: "effort" }, "effort " + s.run.effort) : null,
      ]),
      h("nav", { class: "tabs", "aria-label": "Screens" }, [tab("watch", "Watch"), tab("history", "History"), tab("compose", "Compose"),
        s.config?.queue ? tab("queue", queueTabLabel(s)) : null]),
      h("div", { class: "prefs" }, [
        h("label", {}, ["Labels ", h("select", { onchange: SetTier, value: s.tier },
          TIERS.map((t) => h("option", { value: t, selected: s.tier === t }, t)))]),
        h("button", { type: "button", class: "sound", "aria-pressed": String(s.sound), onclick: ToggleSound }, s.sound ? "Sound on" : "Sound off"),
      ]),
      s.config !== null && s.config.setup.length > 0
        ? h("div", { class: "setup", title: s.config.setup.join("\n") }, s.config.setup.join(" · "))
        : null,
    ]);
  }

  function queueTabLabel(s: State): string {
    const parked = s.queue.filter((it) => it.status === "needs_input").length;
    const waiting = s.queue.filter((it) => it.status === "waiting").length;
    // Counts in words: a bare "?" for a task waiting on an answer read as
    // an unknown count.
    const parts = [waiting > 0 ? waiting + " waiting" : "", parked > 0 ? parked + " to answer" : ""].filter((p) => p !== "");
    return "Queue" + (parts.length > 0 ? " (" + parts.join(", ") + ")" : "");
  }

  return { updateChrome, authBanner, healthBanner, mcpLine, egressLine, topBar, queueTabLabel };
}
