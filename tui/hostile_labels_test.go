package tui

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/tools"
)

// injected wraps word in what a guild from the workspace can put in any
// label: OSC 52 clipboard writes, OSC 0 and 2 title sets, a hyperlink,
// screen and scrollback clears, a full reset, 8-bit CSI and OSC, a cursor
// home, and a bidi override. The word survives; nothing else of it may.
func injected(word string) string {
	half := len(word) / 2
	return "\x1b]52;c;SE9TVElMRQ==\x07" + word[:half] +
		"\x1b]0;pwned\x07\x1b]2;pwned\x1b\\\x1b]52;p;SE9TVElMRQ==\x1b\\\x1b[2J\x1b[3J\x1bc\u009b2J\u009d2;pwned\u009c\x1b[H" +
		"\x1b]8;;http://evil.example/\x1b\\" + word[half:] + "\x1b]8;;\x1b\\\u202e"
}

// injectedTiers gives a field a distinct word per tier: word+"D" detailed,
// "F" friendly, "W" whimsical. Templates keep their placeholders.
func injectedTiers(word, placeholders string) *tools.Tiered {
	return &tools.Tiered{
		Detailed:  []string{injected(word+"D") + placeholders},
		Friendly:  []string{injected(word+"F") + placeholders},
		Whimsical: []string{injected(word+"W") + placeholders},
	}
}

// hostileGuild is the seed guild with every display field of every role
// and tool, and its visualization section, replaced by hostile ones. Role
// labels read "Ro<role>" and tool labels "To<tool>" (letters only, cut to
// fit the graph's nodes).
func hostileGuild(t *testing.T) *runner.Guild {
	t.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range g.Roles {
		w := roleWord(name)
		r.Label = injectedTiers(w, "")
		r.Description = injectedTiers("About"+w, "")
		r.WorkingLabel = injectedTiers("Busy"+w, " {participant} {participantRole}")
	}
	for name, m := range g.Manifests {
		w := toolWord(name)
		m.HumanLabel = injectedTiers(w, "")
		m.HumanDescription = injectedTiers("About"+w, "")
		m.HumanCallLabel = injectedTiers("Call"+w, " {source} {destination}")
		m.HumanWorkingLabel = injectedTiers("Run"+w, " {participant}")
		g.Manifests[name] = m
	}
	tier := func(word string) map[string]string {
		return map[string]string{"detailed": injected(word + "D"), "friendly": injected(word + "F"), "whimsical": injected(word + "W")}
	}
	vis, err := json.Marshal(map[string]any{
		"pseudoRoleLabels":          map[string]any{"human": tier("Patron"), "interrupt": tier("Tapper"), "tools": tier("Toolbox")},
		"genericOperationTemplates": map[string]any{"call": tier("Sends"), "return": tier("Brings")},
		"workingTemplates":          map[string]any{"human": tier("Awaits")},
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Visualization = vis
	return g
}

func roleWord(name string) string { return "Ro" + letters(name, 6) }
func toolWord(name string) string { return "To" + letters(name, 6) }

func letters(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' && b.Len() < n {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// tape keeps every byte the program wrote, for the final check.
type tape struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (tp *tape) text() string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return ansi.Strip(tp.buf.String())
}

func (tp *tape) wait(t *testing.T, tm *teatest.TestModel, subs ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		tp.buf.Write(b)
		s := ansi.Strip(tp.buf.String())
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestConsoleShowsHostileGuildLabelsSafely runs the real program on the
// scripted demo with a guild whose every label carries terminal attacks,
// through the question modal, the result, the flow graph in all three
// tiers, the sequence view and the inspector. None of the attacks may
// reach the terminal; every label's words must.
func TestConsoleShowsHostileGuildLabelsSafely(t *testing.T) {
	g := hostileGuild(t)
	dir := t.TempDir()
	if err := seed.CopyDemoWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	script, err := provider.ParseScript(seed.DemoScript())
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, runner.SessionConfig{Workspace: dir, Guild: g, Deployment: scriptedDeployment(g, "scripted-demo"), Provider: provider.NewScripted(script, 0)})
	m := New(s, Options{Labels: guildLabels(t, g), Task: seed.DemoTask(), NoAnimation: true, MarkdownStyle: "dark", Output: io.Discard})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	var tp tape

	orch, planner, coder, reader := roleWord("orchestrator"), roleWord("planner"), roleWord("coder"), toolWord("read_file")
	// The question names the asking role by its friendly label.
	tp.wait(t, tm, "Question", orch+"F", "asks")
	tm.Type("Only the failing tests, please")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tp.wait(t, tm, "Result · run-", "Status: ✓ success")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	// The flow graph and its type bar, in each tier.
	tp.wait(t, tm, "Main run", orch+"F", planner+"F", coder+"F", reader+"F")
	for _, tier := range []string{"D", "W", "F"} {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("L")})
		tp.wait(t, tm, orch+tier, planner+tier, coder+tier, reader+tier)
	}
	// The inspector on the selected node shows its description.
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tp.wait(t, tm, "Invocations", "About")
	if seen := tp.text(); !strings.Contains(seen, "AboutRo") && !strings.Contains(seen, "AboutTo") {
		t.Errorf("the inspector shows no description")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	// The sequence view: column labels, and operation labels from the
	// tools' call labels and the guild's templates. (Working labels only
	// flash by in the caption; render's tests check them.)
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tp.wait(t, tm, "✓ success", "PatronF", "ToolboxF", "CallTo", "SendsF", "BringsF")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	out := append(tp.buf.Bytes(), readAll(t, tm.FinalOutput(t))...)

	for _, bad := range []string{
		"\x1b]52", "\x1b]0;", "\x1b]2;", "\x1b]8;", "\x1bc", "\x1b[3J", "pwned", "SE9TVElMRQ", "evil.example",
	} {
		if i := bytes.Index(out, []byte(bad)); i >= 0 {
			t.Errorf("the terminal received %q: %q", bad, out[max(0, i-40):min(len(out), i+60)])
		}
	}
	// Screen clears may only be the program's own: as many as a run with
	// the seed guild's labels makes, which is none.
	if n := bytes.Count(out, []byte("\x1b[2J")); n > 0 {
		t.Errorf("the terminal received %d screen clears", n)
	}
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		if r >= 0x80 && r <= 0x9f || r == '\u202e' {
			t.Fatalf("the terminal received %U: %q", r, out[max(0, i-40):min(len(out), i+40)])
		}
		i += n
	}
	if !bytes.Contains(out, []byte("⟪U+202E⟫")) {
		t.Errorf("the bidi override was not shown as a visible placeholder")
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
