package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// TestHostileStyleGuides plants, in a trusted workspace's guild in the
// original's format, style guides that would put a file from outside the
// workspace (or Guildhall's own records) into every prompt of a role. Each
// is refused with a message naming the role and the path; no request
// reaches the model.
func TestHostileStyleGuides(t *testing.T) {
	h := newHostile(t)
	secret := filepath.Join(h.outside, "notes.txt") // "outside notes"
	cases := []struct {
		name, styleGuide, want string
		plant                  func(ws string)
	}{
		{"a path out of the workspace", "../../../outside/notes.txt", "leads outside the workspace", nil},
		{"an absolute path", secret, "does not exist", nil}, // the leading "/" is dropped, as the original drops it
		{"a workspace file linked out", "../STYLE.md", "outside the workspace", func(ws string) {
			if err := os.Symlink(secret, filepath.Join(ws, "STYLE.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"Guildhall's records", "../.orchestration/runs/run-20250101-000000/meta.json", ".orchestration", func(ws string) {
			h.write(filepath.Join(ws, ".orchestration", "runs", "run-20250101-000000", "meta.json"), `{"runId":"run-20250101-000000"}`, 0o644)
		}},
		{"a FIFO", "../STYLE.md", "STYLE.md", func(ws string) {
			if err := syscall.Mkfifo(filepath.Join(ws, "STYLE.md"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}},
		{"a huge file", "../STYLE.md", "more than the 65536 a style guide may hold", func(ws string) {
			h.write(filepath.Join(ws, "STYLE.md"), strings.Repeat("style ", 40_000), 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			ws := h.workspace(strings.ReplaceAll(c.name, " ", "-"))
			if err := os.CopyFS(ws, os.DirFS(originalFormat)); err != nil {
				t.Fatal(err)
			}
			guild := filepath.Join(ws, "guild", "guild.json")
			b, err := os.ReadFile(guild)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(ws, "STYLE.md"))
			h.write(guild, strings.Replace(string(b), `"styleGuide": "../STYLE.md"`, `"styleGuide": "`+c.styleGuide+`"`, 1), 0o644)
			if c.plant != nil {
				c.plant(ws)
			}
			model := fakellm.New()
			t.Cleanup(model.Close)
			res := h.run(ws, 0, "run", "--trust-workspace", "--base-url", model.BaseURL(), "--no-input", "Do the task")
			if res.code != exitUsage || !strings.Contains(res.stderr, `role "style_reviewer": cannot read style guide`) || !strings.Contains(res.stderr, c.want) {
				t.Errorf("not refused clearly (want %q):\n%s", c.want, res)
			}
			for _, r := range model.Requests() {
				if strings.Contains(string(r.Raw), "outside notes") {
					t.Fatal("a file from outside the workspace reached the model")
				}
			}
			h.assertSafe()
		})
	}
}

// TestOriginalKeyStaysOutOfTools gives the operator's key only as the
// original's ORCHESTRATOR_API_KEY: it reaches the operator's endpoint and
// no workspace command, and it is not sent to an endpoint the workspace's
// deployment/deployment.json chose.
func TestOriginalKeyStaysOutOfTools(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("orchestrator-key")
	model := lookAroundModel(t, "env > env.txt; cat /proc/$PPID/environ > parent-environ.txt 2>&1; true")
	env := []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "ORCHESTRATOR_API_KEY=" + hostileKey, "ORCHESTRATOR_API_BASE=" + model.BaseURL()}
	res := h.runEnv(ws, 0, env, "run", "--guild", absGuild(t), "--no-input", "Look around")
	if res.code != 0 {
		t.Fatalf("run:\n%s", res)
	}
	if !keySent(model) {
		t.Fatal("ORCHESTRATOR_API_KEY did not reach the endpoint ORCHESTRATOR_API_BASE named")
	}
	for _, f := range []string{"env.txt", "parent-environ.txt"} {
		b, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil {
			t.Fatalf("the command did not write %s: %v\n%s", f, err, res)
		}
		if strings.Contains(string(b), hostileKey) || strings.Contains(string(b), "ORCHESTRATOR_API_KEY") {
			t.Errorf("%s holds the key or its name", f)
		}
	}

	// The workspace's deployment/deployment.json, trusted, moves the
	// endpoint: the key is not sent there.
	h.write(filepath.Join(ws, "deployment", "deployment.json"), `{"model": {"apiBase": "`+h.keyServer.BaseURL()+`"}}`, 0o644)
	res = h.runEnv(ws, 0, []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "ORCHESTRATOR_API_KEY=" + hostileKey}, "run", "--trust-workspace", "--guild", absGuild(t), "--no-input", "Look around")
	if len(h.keyServer.requests()) == 0 || !strings.Contains(res.stderr, "the API key is not sent to "+h.keyServer.URL) {
		t.Errorf("the workspace's endpoint was not used keyless:\n%s", res)
	}
	h.assertSafe()
}
