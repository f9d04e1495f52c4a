package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/web/webtest"
)

// TestBrowserShowsSetupAndEgress opens the console on a run whose sandbox
// proxy allows one host and denies another: the header shows the sandbox
// policy and the trust decision, the denied egress appears, with the role
// that tried, as text (a hostile host name stays text), and so does an MCP
// server that failed.
func TestBrowserShowsSetupAndEgress(t *testing.T) {
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	ctx, url := serveFake(t, sess, "egress", WithSetup("sandbox: workspace-write, network allowlist (1 host)", "workspace config ignored (not trusted yet)"))
	id, err := sess.Submit(ctx, runner.Submission{Task: "Fetch the modules"})
	if err != nil {
		t.Fatal(err)
	}
	sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "Fetch the modules", Effort: "standard", EntryRole: "orchestrator"})
	sess.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Fetch the modules"})

	page := webtest.OpenPage(t, browser, time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the setup line", `document.querySelector(".top-bar .setup") !== null`)
	if got := page.Eval(`document.querySelector(".top-bar .setup").textContent`); !strings.Contains(got, "network allowlist (1 host)") || !strings.Contains(got, "not trusted yet") {
		t.Errorf("setup line %q", got)
	}
	page.Poll("the run", `document.querySelector(".run-label") !== null && document.querySelector(".run-label").textContent !== "No run yet"`)
	sess.Emit(t, event.Egress, event.EgressPayload{Host: "proxy.golang.org", Port: 443, Allowed: true, Rule: "proxy.golang.org", Via: "proxy", Role: "coder", RoleID: "coder-1-2"})
	sess.Emit(t, event.Egress, event.EgressPayload{Host: "evil.example<img src=x onerror=alert(1)>", Port: 443, Allowed: false, Via: "proxy",
		Reason: "not on the sandbox's network allowlist", Role: "coder", RoleID: "coder-1-2"})
	page.Poll("the denied egress", `document.querySelector(".egress-line--denied") !== null`)
	got := page.Eval(`document.querySelector(".egress-line").textContent`)
	for _, want := range []string{"Egress denied", "evil.example<img src=x onerror=alert(1)>:443", "coder-1-2 via proxy", "not on the sandbox's network allowlist", "1 denied in this run"} {
		if !strings.Contains(got, want) {
			t.Errorf("egress line %q lacks %q", got, want)
		}
	}
	if n := page.Eval(`String(document.querySelectorAll(".egress-line img").length)`); n != "0" {
		t.Errorf("the host name became markup: %s img elements", n)
	}
	// An MCP server that fails says so, beside the egress line.
	sess.Emit(t, event.MCPServer, event.MCPServerPayload{Server: "github", State: "ready", Tools: 12})
	sess.Emit(t, event.MCPServer, event.MCPServerPayload{Server: "files", State: "failed", Message: "the server exited at start <b>status 1</b>"})
	page.Poll("the failed MCP server", `document.querySelector(".mcp-line") !== null`)
	if got := page.Eval(`document.querySelector(".mcp-line").textContent`); got != "MCP server files failed: the server exited at start <b>status 1</b>" {
		t.Errorf("mcp line %q", got)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}
