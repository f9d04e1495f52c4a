package trust

import (
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// discoverIn writes files into a fresh workspace and discovers it over
// base.
func discoverIn(t *testing.T, files map[string]string, base *runner.Deployment) (*Found, string) {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		write(t, ws, name, body)
	}
	return discoverAt(t, ws, base), ws
}

// discoverAt discovers the workspace folder ws over base.
func discoverAt(t *testing.T, ws string, base *runner.Deployment) *Found {
	t.Helper()
	w, err := tools.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return Discover(w, base)
}

func changeText(f *Found, base *runner.Deployment) (all, warned string) {
	var a, w []string
	for _, c := range f.Changes(base, "the seed guild") {
		a = append(a, c.Text)
		if c.Warn {
			w = append(w, c.Text)
		}
	}
	return strings.Join(a, "\n"), strings.Join(w, "\n")
}

// TestWorkspaceCannotLoosenTheSandbox: a workspace's deployment file asks
// for every loosening of the sandbox there is; each is refused (the
// operator's setting stays), said with a "!" line, and the server's
// effective mode is confined. Tightening is kept.
func TestWorkspaceCannotLoosenTheSandbox(t *testing.T) {
	extra := t.TempDir()
	opWritable := t.TempDir()
	op := func(t *testing.T, body string) *runner.Deployment {
		t.Helper()
		d, err := runner.ParseDeployment("/op/deployment.json", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		name, operator, workspace string
		check                     func(t *testing.T, d *runner.Deployment)
		refused                   string // "" when nothing is refused
	}{
		{"sandbox off", `{}`, `{"sandbox": {"mode": "none"}}`, func(t *testing.T, d *runner.Deployment) {
			if d.Sandbox.Mode != "workspace-write" {
				t.Errorf("mode %q", d.Sandbox.Mode)
			}
		}, `asks for sandbox.mode "none": refused, commands stay in the sandbox (workspace-write)`},
		{"read-only operator, workspace-write asked", `{"sandbox": {"mode": "read-only"}}`, `{"sandbox": {"mode": "workspace-write"}}`, func(t *testing.T, d *runner.Deployment) {
			if d.Sandbox.Mode != "read-only" || d.Origin("sandbox.mode") != "/op/deployment.json" {
				t.Errorf("mode %q from %q", d.Sandbox.Mode, d.Origin("sandbox.mode"))
			}
		}, `sandbox.mode "workspace-write": refused, commands stay in the sandbox (read-only)`},
		{"a host path made writable", `{"sandbox": {"writable": [` + jsonQ(opWritable) + `]}}`, `{"sandbox": {"writable": [` + jsonQ(opWritable) + `, ` + jsonQ(extra) + `]}}`, func(t *testing.T, d *runner.Deployment) {
			if strings.Join(d.Sandbox.Writable, ",") != opWritable {
				t.Errorf("writable %v", d.Sandbox.Writable)
			}
		}, "asks to make " + extra + " writable in the sandbox: refused"},
		{"a host path shown read-only", `{"sandbox": {"readOnly": [` + jsonQ(opWritable) + `]}}`, `{"sandbox": {"readOnly": [` + jsonQ(opWritable) + `, ` + jsonQ(extra) + `]}}`, func(t *testing.T, d *runner.Deployment) {
			if strings.Join(d.Sandbox.ReadOnly, ",") != opWritable {
				t.Errorf("readOnly %v", d.Sandbox.ReadOnly)
			}
		}, "asks to show " + extra + " read-only in the sandbox: refused, a workspace may not add mounts"},
		{"a server unconfined", `{}`, `{"mcpServers": {"s": {"command": "srv", "sandbox": {"mode": "none"}}}}`, func(t *testing.T, d *runner.Deployment) {
			c := d.MCPServers["s"]
			if got := c.Mode(sandbox.WorkspaceWrite); got != sandbox.WorkspaceWrite {
				t.Errorf("server mode %q", got)
			}
			if p, err := c.Policy(sandbox.WorkspaceWrite); err != nil || !p.Confined() {
				t.Errorf("server policy %v %v", p.Summary(), err)
			}
		}, `asks for MCP server s to run with sandbox mode "none": refused, it runs in the run's sandbox (workspace-write)`},
		{"a server writable elsewhere", `{}`, `{"mcpServers": {"s": {"command": "srv", "sandbox": {"writable": [` + jsonQ(extra) + `]}}}}`, func(t *testing.T, d *runner.Deployment) {
			if w := d.MCPServers["s"].Sandbox.Writable; len(w) != 0 {
				t.Errorf("server writable %v", w)
			}
		}, "asks to make " + extra + " writable for MCP server s: refused"},
		{"an alert command", `{"notify": {"command": ["/op/bin/ntfy-me"]}}`, `{"notify": {"command": ["./pwn.sh"], "bell": false}}`, func(t *testing.T, d *runner.Deployment) {
			if got := strings.Join(d.Notify.Command, " "); got != "/op/bin/ntfy-me" || d.Origin("notify.command") != "/op/deployment.json" {
				t.Errorf("notify.command %q from %q", got, d.Origin("notify.command"))
			}
			if d.Notify.BellOn() {
				t.Error("the workspace could not turn its bell off")
			}
		}, "asks to set notify.command: refused; only your own deployment.json"},
		{"an alert command where the operator has none", `{}`, `{"notify": {"command": ["./pwn.sh"]}}`, func(t *testing.T, d *runner.Deployment) {
			if len(d.Notify.Command) != 0 {
				t.Errorf("notify.command %q", d.Notify.Command)
			}
		}, "asks to set notify.command: refused"},
		{"a detached console that waits for ever", `{"detach": {"idleTimeout": "2h"}}`, `{"detach": {"idleTimeout": "0"}}`, func(t *testing.T, d *runner.Deployment) {
			if got := d.Detach.Idle(); got != 2*time.Hour || d.Origin("detach.idleTimeout") != "/op/deployment.json" {
				t.Errorf("idle %s from %q", got, d.Origin("detach.idleTimeout"))
			}
		}, `asks for detach.idleTimeout "0": refused, a detached console waits at most 2h0m0s`},
		{"a detached console that waits longer than the default", `{}`, `{"detach": {"idleTimeout": "48h"}}`, func(t *testing.T, d *runner.Deployment) {
			if got := d.Detach.Idle(); got != runner.DefaultDetachIdle {
				t.Errorf("idle %s", got)
			}
		}, `asks for detach.idleTimeout "48h": refused`},
		{"limits raised", `{"sandbox": {"limits": {"processes": 2000}}}`, `{"sandbox": {"limits": {"processes": 100000, "cpuSeconds": 5, "fileSizeMiB": 4096}}}`, func(t *testing.T, d *runner.Deployment) {
			if got, want := d.Sandbox.Limits, (sandbox.LimitsConfig{Processes: 2000, CPUSeconds: 5}); got != want {
				t.Errorf("limits %+v, want %+v (the raises undone, the tightening kept)", got, want)
			}
		}, "asks to raise sandbox.limits.fileSizeMiB, sandbox.limits.processes: refused, the limits stay at 600 CPU seconds, no address-space limit, 1024 MiB files and 2000 processes"},
		{"limits lowered", `{}`, `{"sandbox": {"limits": {"processes": 50, "addressSpaceMiB": 8192}}}`, func(t *testing.T, d *runner.Deployment) {
			if got, want := d.Sandbox.Limits, (sandbox.LimitsConfig{Processes: 50, AddressSpaceMiB: 8192}); got != want {
				t.Errorf("limits %+v, want %+v", got, want)
			}
		}, ""},
		{"tightening is kept", `{}`, `{"detach": {"idleTimeout": "1h"}, "sandbox": {"mode": "read-only"}, "mcpServers": {"s": {"command": "srv", "sandbox": {"mode": "read-only"}}}}`, func(t *testing.T, d *runner.Deployment) {
			if d.Detach.Idle() != time.Hour {
				t.Errorf("a shorter detach.idleTimeout was not kept: %s", d.Detach.Idle())
			}
			if d.Sandbox.Mode != "read-only" || d.MCPServers["s"].Mode(sandbox.ReadOnly) != sandbox.ReadOnly {
				t.Errorf("mode %q", d.Sandbox.Mode)
			}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := op(t, c.operator)
			f, _ := discoverIn(t, map[string]string{"deployment.json": c.workspace}, base)
			if !f.Usable() {
				t.Fatalf("problems: %v", f.Problems)
			}
			c.check(t, f.Deployment)
			all, warned := changeText(f, base)
			if c.refused == "" {
				if strings.Contains(all, "refused") {
					t.Errorf("a tightening was refused:\n%s", all)
				}
				return
			}
			if !strings.Contains(warned, c.refused) || !strings.Contains(warned, "only your own deployment.json") {
				t.Errorf("no warning %q in:\n%s", c.refused, all)
			}
		})
	}
}

// A server the workspace declared is never looser than the run, whatever
// mode it asks for and whatever the run's mode becomes (--sandbox); only
// the run's own none (the operator's) runs it unconfined.
func TestWorkspaceServerModeFollowsTheRun(t *testing.T) {
	f, _ := discoverIn(t, map[string]string{"deployment.json": `{"mcpServers": {"w": {"command": "srv", "sandbox": {"mode": "workspace-write"}}}}`}, nil)
	c := f.Deployment.MCPServers["w"]
	for run, want := range map[sandbox.Mode]sandbox.Mode{sandbox.ReadOnly: sandbox.ReadOnly, sandbox.WorkspaceWrite: sandbox.WorkspaceWrite, sandbox.None: sandbox.None, "": sandbox.WorkspaceWrite} {
		if got := c.Mode(run); got != want {
			t.Errorf("run %q: server %q, want %q", run, got, want)
		}
	}
	c.FromWorkspace = false // the operator's own server may loosen
	if got := c.Mode(sandbox.ReadOnly); got != sandbox.WorkspaceWrite {
		t.Errorf("operator's server: %q", got)
	}
}

// Where web_search sends queries is a destination the workspace chose: a
// warning, as a moved model endpoint is.
func TestWorkspaceSearchEndpointWarns(t *testing.T) {
	f, _ := discoverIn(t, map[string]string{"deployment.json": `{"webSearch": {"provider": "searxng", "endpoint": "http://127.0.0.1:8888"}}`}, nil)
	_, warned := changeText(f, nil)
	for _, want := range []string{`deployment.json sets webSearch.endpoint to "http://127.0.0.1:8888"`, `deployment.json sets webSearch.provider to "searxng"`} {
		if !strings.Contains(warned, want) {
			t.Errorf("no warning %q in:\n%s", want, warned)
		}
	}
}

func jsonQ(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// A workspace that lifts or raises the run's budget is warned of, since
// the budget is what stops a loop an injection started; one that lowers it
// is not.
func TestWorkspaceRaisingTheBudgetWarns(t *testing.T) {
	for _, tc := range []struct {
		budget string
		warn   bool
	}{
		{`{"maxToolCalls": 0}`, true},
		{`{"maxToolCalls": 100000}`, true},
		{`{"maxToolCalls": 50}`, false},
		{`{"maxTokens": 1000000}`, false},
	} {
		f, _ := discoverIn(t, map[string]string{"deployment.json": `{"executor": {"budget": ` + tc.budget + `}}`}, nil)
		all, warned := changeText(f, nil)
		if !strings.Contains(all, "executor.budget.") {
			t.Fatalf("%s: the change is not listed:\n%s", tc.budget, all)
		}
		if got := strings.Contains(warned, "executor.budget."); got != tc.warn {
			t.Errorf("%s: warned %v, want %v:\n%s", tc.budget, got, tc.warn, all)
		}
	}
}
