package render

import (
	"fmt"
	"strings"
	"testing"
)

// hostileLabel wraps word in what a guild from the workspace could put in
// a label: clipboard writes, title sets, screen clears and resets, 8-bit
// controls, a hyperlink, a cursor move and a bidi override.
func hostileLabel(word string) string {
	half := len(word) / 2
	return "\x1b]52;c;SE9TVElMRQ==\x07" + word[:half] + "\x1b]0;pwned\x07\x1b]2;pwned\x1b\\\x1b[2J\x1bc" +
		"\u009b2J\u009d0;x\u009c\x1b[H\x1b]8;;http://evil.example\x1b\\" + word[half:] + "\x1b]8;;\x1b\\\u202e\r\n\t\x7f"
}

// hostileTiered puts a hostile variant, and a variant that is nothing but
// control, in every tier.
func hostileTiered(word string) Tiered {
	return Tiered{
		Detailed:  []string{"\x1b]0;only control\x07", hostileLabel(word + "D")},
		Friendly:  []string{hostileLabel(word + "F")},
		Whimsical: []string{hostileLabel(word + "W"), hostileLabel(word + "W")},
	}
}

func hostileLabelSet() LabelSet {
	tmpl := func(word, body string) Tiered {
		return Tiered{
			Detailed:  []string{hostileLabel(word+"D") + body},
			Friendly:  []string{hostileLabel(word+"F") + body},
			Whimsical: []string{hostileLabel(word+"W") + body},
		}
	}
	return LabelSet{
		Roles: map[string]RoleLabels{
			"coder": {Label: hostileTiered("Coderx"), Description: hostileTiered("Descx"), WorkingLabel: tmpl("Workx", " {participant} {participantRole} {participantId}")},
		},
		Tools: map[string]ToolLabels{
			"read_file": {HumanLabel: hostileTiered("Readerx"), HumanDescription: hostileTiered("Readsx"),
				HumanCallLabel: tmpl("Callx", " {source} {destination}"), HumanWorkingLabel: tmpl("Busyx", " {participant}")},
		},
		Visualization: Visualization{
			PseudoRoleLabels:          map[string]Tiered{"human": hostileTiered("Humanx"), "interrupt": hostileTiered("Intrx"), "tools": hostileTiered("Toolsx")},
			OperationTemplates:        map[string]map[string]Tiered{"return": {"tool->role": tmpl("Retx", " {sourceRole} {outcome} {stack}")}},
			GenericOperationTemplates: map[string]Tiered{"call": tmpl("Genx", " {source} {destinationRole}")},
			WorkingTemplates:          map[string]Tiered{"human": tmpl("Waitx", "")},
		},
	}
}

// checkLabel fails unless s is safe on one line of a terminal and shows
// each of wants.
func checkLabel(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	checkTerminalSafe(t, s)
	if strings.ContainsAny(s, "\n\t") {
		t.Errorf("%s: %q spans lines", what, s)
	}
	for _, bad := range []string{"pwned", "SE9TVElMRQ", "evil.example", "only control"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: %q shows the body of a sequence (%q)", what, s, bad)
		}
	}
	for _, want := range wants {
		if !strings.Contains(s, want) {
			t.Errorf("%s: %q, want it to show %q", what, s, want)
		}
	}
}

func TestLabelResolverSanitizesEveryLabel(t *testing.T) {
	set := hostileLabelSet()
	// Log fields are as hostile as the guild: a role named with control,
	// an outcome and a stack from a tampered record.
	coder := Participant{ID: "coder-1\x1b]0;pwned\x07-2", Role: "coder", Kind: KindRole}
	evilRole := Participant{ID: "x", Role: "rev\x1b]52;c;SE9TVElMRQ==\x07iewer\u202e", Kind: KindRole}
	read := Participant{ID: "tool:read_file", Role: "read_file", Kind: KindTool}
	human := Participant{ID: "human", Role: "human", Kind: KindHuman}
	call := Operation{ID: "op-1", Kind: OpCall}
	// The outcome ends in an OSC with no terminator: its body stays as
	// inert text (nothing after a stray ESC is hidden), and it cannot
	// reach into the rest of the label.
	ret := Operation{ID: "op-2", Kind: OpReturn, Outcome: "ok\x1b[2J\x1bc\x1b]0;left open", Stack: "main\x1b]0;pwned\x07"}
	for tier, suffix := range map[Tier]string{TierDetailed: "D", TierFriendly: "F", TierWhimsical: "W"} {
		r := NewLabelResolver(set, tier)
		at := func(what string) string { return fmt.Sprintf("%s at %s", what, tier) }
		checkLabel(t, at("role label"), r.ParticipantLabel(coder), "Coderx"+suffix)
		checkLabel(t, at("role description"), r.ParticipantDescription(coder), "Descx"+suffix)
		checkLabel(t, at("tool label"), r.ParticipantLabel(read), "Readerx"+suffix)
		checkLabel(t, at("tool description"), r.ParticipantDescription(read), "Readsx"+suffix)
		checkLabel(t, at("pseudo label"), r.PseudoLabel("tools"), "Toolsx"+suffix)
		checkLabel(t, at("human label"), r.ParticipantLabel(human), "Humanx"+suffix)
		checkLabel(t, at("role name fallback"), r.ParticipantLabel(evilRole), "Reviewer⟪U+202E⟫")
		checkLabel(t, at("tool call label"), r.OperationLabel(call, coder, read), "Callx"+suffix, "Coderx"+suffix, "Readerx"+suffix)
		checkLabel(t, at("generic call template"), r.OperationLabel(call, coder, evilRole), "Genx"+suffix, "Coderx"+suffix, "reviewer⟪U+202E⟫")
		checkLabel(t, at("return template"), r.OperationLabel(ret, read, coder), "Retx"+suffix, " read_file ok]0;left open main")
		w, ok := r.WorkingLabel(coder, "op-1")
		checkLabel(t, at("role working label"), w, "Workx"+suffix, "Coderx"+suffix, " coder coder-1-2")
		w, _ = r.WorkingLabel(read, "op-1")
		checkLabel(t, at("tool working label"), w, "Busyx"+suffix, "Readerx"+suffix)
		w, _ = r.WorkingLabel(human, "op-1")
		checkLabel(t, at("working template"), w, "Waitx"+suffix)
		if !ok {
			t.Errorf("%s: no working label", tier)
		}
	}
	// A variant that is nothing but control counts as missing: the
	// detailed tier's first variant above is skipped, not shown blank.
	r := NewLabelResolver(LabelSet{Roles: map[string]RoleLabels{"coder": {Label: Tiered{Detailed: []string{"\x1b]0;x\x07 \x1b[2J"}}}}}, TierDetailed)
	if got := r.ParticipantLabel(Participant{Role: "coder", Kind: KindRole}); got != "Coder" {
		t.Errorf("a label of only control shows %q, want the role name", got)
	}
}

func TestNowCaptionSanitizesLabels(t *testing.T) {
	events, _ := loadLog(t, "delegation.jsonl")
	r := NewLabelResolver(hostileLabelSet(), TierFriendly)
	// After 11 events the planner is reading a file (the tool's working
	// label); after 30 the coder works (its own working label).
	for n, want := range map[int]string{11: "BusyxF", 30: "WorkxF"} {
		caption := NowCaption(replay(events[:n]), r)
		checkLabel(t, fmt.Sprintf("caption after %d events", n), caption, want)
	}
}
