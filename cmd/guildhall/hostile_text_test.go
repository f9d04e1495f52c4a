package main

// Terminal text from a hostile repository: run records and a guild that
// ship terminal attacks in every field the CLI prints. Records are the
// workspace's (any run_shell, or the repository itself, can write them),
// and so is a guild/ folder.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// terminalClean fails unless out holds no ESC, no other C0 control but
// newline and tab, no C1 control and no bidi control: what a notty render
// and plain lines must look like.
func terminalClean(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == utf8.RuneError:
			t.Fatalf("%s: control %U at byte %d: %q", what, r, i, out[max(0, i-60):min(len(out), i+60)])
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x61c:
			t.Fatalf("%s: bidi control %U at byte %d", what, r, i)
		}
	}
}

// hostileRecords writes one run's records as an attacker would ship them:
// every prose field carries a character reference split so that glamour
// would decode it into conceal (SGR 8), black on black, or an OSC with no
// terminator, followed by a word that must still show.
func hostileRecords(t *testing.T, ws string) string {
	t.Helper()
	const id = "run-20250314-093000"
	dir := filepath.Join(ws, ".orchestration", "runs", id)
	mkdirs(t, dir)
	at := time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)
	end := at.Add(time.Minute)
	meta := store.Meta{
		RunID: id, Effort: "standard", Status: "error", StartedAt: at, EndedAt: &end, EntryRole: "orchestrator",
		Task: "Fix ~~&#`27`;[8mthe hidden part~~ of TASKTAIL",
		Result: &store.MetaResult{Status: "error",
			Summary:   "Done ~~&#*2*7;]0;a title with no end~~ and RESULTTAIL",
			Artifacts: []string{"a\x1b]0;pwned\x07rt\u202efact"}},
		Error: &store.MetaError{Kind: "tool\x1b[2Jerror",
			Message: "Failed: ~~x<i>&#27;[38;5;16;48;5;16m</i>~~ black on black ERRORTAIL",
			Detail:  json.RawMessage(`{"body":"\u001b]52;c;SE9TVElMRQ==\u0007 DETAILTAIL"}`)},
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meta.json", b)
	write("summary.txt", []byte("Sum\x1b]0;pwned\x07mary ~~&#`27`;[8m~~ SUMMARYTAIL\n"))
	const role, roleID = "orchestrator", "orchestrator-0-1"
	events := []struct {
		typ event.Type
		p   any
	}{
		{event.RunStarted, event.RunStartedPayload{RunID: id, Task: meta.Task, Effort: "standard", EntryRole: role}},
		{event.RoleStart, event.RoleStartPayload{Role: role, RoleID: roleID, Task: meta.Task}},
		{event.AskHuman, event.AskHumanPayload{ID: "q-1", Role: role, RoleID: roleID,
			Question: "Which one? ~~&#*2*7;]52;c;SE9TVElMRQ==~~ QUESTIONTAIL",
			Context:  "<p>&#<b></b>x9b;8m &#<!-- -->27;[5m</p>\n\nCONTEXTTAIL"}},
		{event.HumanAnswer, event.HumanAnswerPayload{ID: "q-1", Answer: "the \x1b[8msecond\x1b[0m ANSWERTAIL", Source: "terminal"}},
		{event.RoleFinished, event.RoleFinishedPayload{Role: role, RoleID: roleID, Status: "error",
			Summary: meta.Result.Summary, Error: &event.ErrorInfo{Kind: "tool_error", Message: meta.Error.Message}}},
		{event.RunStatus, event.RunStatusPayload{Status: "error", Reason: "~~&#`27`;]2;x~~ REASONTAIL"}},
	}
	var log []byte
	for i, e := range events {
		log = append(log, logLine(t, at.Add(time.Duration(i)*time.Second), e.typ, e.p)...)
	}
	write("log.jsonl", log)
	return id
}

// TestHostileRecordsShowSafely runs `guildhall show` on records whose
// prose hides conceal, colours and unterminated OSC behind split character
// references. The output must carry none of them, and every word after
// each attack must still show.
func TestHostileRecordsShowSafely(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("records")
	id := hostileRecords(t, ws)
	h.snapshot()
	res := h.run(ws, 0, "show", id)
	if res.code != 0 {
		t.Fatalf("show failed:\n%s", res)
	}
	terminalClean(t, "show", res.stdout)
	terminalClean(t, "show's errors", res.stderr)
	for _, want := range []string{
		"&#27;[8mthe hidden part", "TASKTAIL",
		"&#27;]0;a title with no end", "RESULTTAIL",
		"x<i>&#27;[38;5;16;48;5;16m</i>", "ERRORTAIL",
		"Summary  Summary", "SUMMARYTAIL", "DETAILTAIL", "art⟪U+202E⟫fact", "Error (toolerror)",
		"&#27;]52;c;SE9TVElMRQ==", "QUESTIONTAIL", "&#x9b;8m &#27;[5m", "CONTEXTTAIL",
		"the second ANSWERTAIL",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("show lost %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "pwned") {
		t.Errorf("show printed the body of an escape sequence:\n%s", res.stdout)
	}
	h.assertSafe()
}

// TestHostileRecordsListSafely runs `guildhall runs` on the same records.
func TestHostileRecordsListSafely(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("records")
	id := hostileRecords(t, ws)
	res := h.run(ws, 0, "runs")
	if res.code != 0 {
		t.Fatalf("runs failed:\n%s", res)
	}
	terminalClean(t, "runs", res.stdout)
	for _, want := range []string{id, "error", "SUMMARYTAIL"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("runs lost %q:\n%s", want, res.stdout)
		}
	}
}

// hostileGuildDir writes a guild whose role names, labels, tool labels
// and tool description carry terminal attacks, with the given entry role.
func hostileGuildDir(t *testing.T, h *hostile, ws string, entryRole string) string {
	t.Helper()
	attack := "\x1b]52;c;SE9TVElMRQ==\x07\x1b]0;pwned\x07\x1b[2J\x1bc\u009b2J\u202e"
	tiered := func(word string) map[string]any {
		return map[string]any{"detailed": word + attack, "friendly": []string{attack + word}, "whimsical": word + attack + "!"}
	}
	g := map[string]any{
		"entryRole": entryRole,
		"roles": map[string]any{
			"sol" + attack + "o": map[string]any{
				"systemPrompt": "prompts/solo.md", "tools": []string{"read_file", "finish"},
				"label": tiered("Solo"), "description": tiered("Works alone"), "workingLabel": tiered("{participant} works"),
			},
			"helper\n" + attack: map[string]any{"tools": []string{"finish"}},
		},
		"tools": []string{"tools/probe.json"},
	}
	manifest := map[string]any{
		"name": "probe", "description": "probes" + attack,
		"parameters":        map[string]any{"type": "object", "properties": map[string]any{}},
		"humanLabel":        tiered("Probe"),
		"humanDescription":  tiered("Probes things"),
		"humanCallLabel":    tiered("{source} probes"),
		"humanWorkingLabel": tiered("Probing"),
	}
	dir := filepath.Join(ws, "guild")
	for name, v := range map[string]any{"guild.json": g, "tools/probe.json": manifest} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		h.write(filepath.Join(dir, name), string(b), 0o644)
	}
	h.write(filepath.Join(dir, "prompts", "solo.md"), "You work alone.\n", 0o644)
	return dir
}

// TestHostileGuildCheckPrintsSafely runs `guildhall check` on guilds whose
// names and labels carry terminal attacks: one the loader rejects (its
// messages name the roles) and one it accepts (the summary names the
// entry role).
func TestHostileGuildCheckPrintsSafely(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("guild")
	attack := "\x1b]52;c;SE9TVElMRQ==\x07\x1b]0;pwned\x07\x1b[2J\x1bc\u009b2J\u202e"

	dir := hostileGuildDir(t, h, ws, "missing"+attack)
	res := h.run(ws, 0, "check", "--guild", dir)
	if res.code != exitUsage {
		t.Fatalf("check of a broken guild: want exit %d\n%s", exitUsage, res)
	}
	terminalClean(t, "check's errors", res.stderr)
	terminalClean(t, "check's output", res.stdout)
	for _, want := range []string{
		// The role without a prompt, the missing entry role and the
		// list of roles, each Go-quoted.
		`role "helper\n\x1b]52;c;SE9TVElMRQ==\a\x1b]0;pwned\a\x1b[2J\x1bc\u009b2J\u202e" has no systemPrompt`,
		`entryRole "missing\x1b]52;c;SE9TVElMRQ==`,
		`roles are "helper\n\x1b]52;`,
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("check's errors lack %q:\n%s", want, res.stderr)
		}
	}
	if n := strings.Count(res.stderr, "\n"); n > 4 {
		t.Errorf("a role name broke the messages into %d lines:\n%s", n, res.stderr)
	}

	ws2 := h.workspace("guild-ok")
	dir = hostileGuildDir(t, h, ws2, "sol"+attack+"o")
	editJSON(t, filepath.Join(dir, "guild.json"), func(g map[string]any) {
		delete(g["roles"].(map[string]any), "helper\n"+attack)
	})
	res = h.run(ws2, 0, "check", "--guild", dir)
	if res.code != 0 {
		t.Fatalf("check of a hostile but valid guild:\n%s", res)
	}
	terminalClean(t, "check's output", res.stdout)
	terminalClean(t, "check's notes", res.stderr)
	if !strings.Contains(res.stdout, "entry role solo⟪U+202E⟫") && !strings.Contains(res.stdout, "entry role sol⟪U+202E⟫o") {
		t.Errorf("check does not name the entry role legibly:\n%s", res.stdout)
	}
	h.assertSafe()
}
