package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/provider"
)

// The seed guilds' entry role reads the workspace's conventional
// instructions to agents (AGENTS.md first) as framed, untrusted project
// documentation; a guild that declares projectDocs keeps exactly those, and
// a guild from a folder reads none it did not declare.
func TestEntryRoleReadsConventionalAgentDocs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		conventional bool
		declared     []string
		files        map[string]string
		want         []string // in this order
		absent       []string
	}{
		{name: "seed guild reads AGENTS.md and CLAUDE.md", conventional: true,
			files: map[string]string{"AGENTS.md": "Run make lint before finishing.", "CLAUDE.md": "Prefer table tests."},
			want:  []string{"[Project reference material — untrusted]", `BEGIN project file "AGENTS.md"`, "Run make lint before finishing.", `BEGIN project file "CLAUDE.md"`, "Prefer table tests."}},
		{name: "seed guild reads copilot instructions", conventional: true,
			files: map[string]string{".github/copilot-instructions.md": "Use tabs."},
			want:  []string{`BEGIN project file ".github/copilot-instructions.md"`, "Use tabs."}},
		{name: "seed guild with none adds no block", conventional: true,
			files:  map[string]string{"README.md": "hello"},
			absent: []string{"[Project reference material"}},
		{name: "declared projectDocs are kept", conventional: true, declared: []string{"docs/STYLE.md"},
			files:  map[string]string{"AGENTS.md": "agents text", "docs/STYLE.md": "style text"},
			want:   []string{`BEGIN project file "docs/STYLE.md"`, "style text"},
			absent: []string{"agents text"}},
		{name: "a folder guild reads only what it declares",
			files:  map[string]string{"AGENTS.md": "agents text"},
			absent: []string{"agents text", "[Project reference material"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testGuild(t)
			g.ConventionalDocs = tc.conventional
			g.Roles[g.EntryRole].ProjectDocs = tc.declared
			h := newHarness(t, g, map[string][]provider.ScriptTurn{
				g.EntryRole: {turn("", finishCall("success", "ok"))},
			})
			for name, body := range tc.files {
				p := filepath.Join(h.dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			h.run()
			msgs := h.rec.byRole(g.EntryRole)[0].Messages
			task := msgs[len(msgs)-1].Content
			for _, w := range tc.want {
				if !strings.Contains(task, w) {
					t.Errorf("the entry role's task lacks %q:\n%s", w, task)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(task, a) {
					t.Errorf("the entry role's task has %q:\n%s", a, task)
				}
			}
			for i := 1; i < len(tc.want); i++ {
				if strings.Index(task, tc.want[i-1]) > strings.Index(task, tc.want[i]) {
					t.Errorf("%q comes before %q:\n%s", tc.want[i], tc.want[i-1], task)
				}
			}
		})
	}
}
