package render

import (
	"strings"
	"testing"
)

func testLabels() LabelSet {
	return LabelSet{
		Roles: map[string]RoleLabels{
			"coder": {
				Label:        Tiered{Detailed: []string{"coder"}, Friendly: []string{"Coder"}, Whimsical: []string{"The Tinkerer", "The Gearwright"}},
				Description:  Tiered{Friendly: []string{"Writes the code."}},
				WorkingLabel: Tiered{Detailed: []string{"{participant} ({participantRole}) is writing code"}, Friendly: []string{"{participant} is writing code"}, Whimsical: []string{"{participant} hammers at the anvil", "{participant} oils the gears", "{participant} whistles at the bench"}},
			},
			"planner": {Label: Tiered{Detailed: []string{"planner"}}},
		},
		Tools: map[string]ToolLabels{
			"read_file":  {HumanLabel: Tiered{Friendly: []string{"File reader"}}, HumanCallLabel: Tiered{Friendly: []string{"{source} reads a file"}}},
			"write_file": {HumanLabel: Tiered{Friendly: []string{"File writer"}}, HumanWorkingLabel: Tiered{Friendly: []string{"Saving with {participant}"}}},
		},
		Visualization: Visualization{
			PseudoRoleLabels:          map[string]Tiered{"human": {Friendly: []string{"You"}}},
			OperationTemplates:        map[string]map[string]Tiered{"return": {"role->role": {Friendly: []string{"{source} hands {destination} the result ({outcome})"}}}},
			GenericOperationTemplates: map[string]Tiered{"call": {Friendly: []string{"{source} → {destination}: {unknown}"}}},
		},
	}
}

// roleP and toolP are participants as the model makes them: a role's by
// its instance id, a tool's named by the tool (toolIDPrefix and the name).
func roleP(id, role string) Participant {
	return Participant{ID: id, Role: role, Kind: KindRole}
}

func toolP(name string) Participant {
	return Participant{ID: toolIDPrefix + name, Role: name, Kind: KindTool}
}

func TestParticipantLabelTiersAndFallbacks(t *testing.T) {
	coder := roleP("coder-1-2", "coder")
	planner := roleP("planner-1-3", "planner")
	stranger := roleP("code_reviewer-1-4", "code_reviewer")
	read := toolP("read_file")
	grep := toolP("search_text")
	human := Participant{ID: "human", Role: "human", Kind: KindHuman}
	intr := Participant{ID: "interrupt:1", Role: "interrupt", Kind: KindInterrupt}
	tests := []struct {
		tier Tier
		p    Participant
		want string
	}{
		{TierDetailed, coder, "coder"},
		{TierFriendly, coder, "Coder"},
		{TierWhimsical, coder, "The Tinkerer"}, // identity surfaces use the first variant
		{TierWhimsical, planner, "planner"},    // missing tiers walk to the one given
		{TierFriendly, planner, "planner"},
		{TierFriendly, stranger, "Code Reviewer"}, // no entry: title-cased name
		{TierDetailed, read, "File reader"},
		{TierFriendly, grep, "Search Text"},
		{TierFriendly, human, "You"}, // guild pseudo-role label
		{TierDetailed, human, "You"}, // the guild entry's other tiers come before built-ins
		{TierFriendly, intr, "Check-in"},
	}
	for _, tc := range tests {
		r := NewLabelResolver(testLabels(), tc.tier)
		if got := r.ParticipantLabel(tc.p); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.tier, tc.p.ID, got, tc.want)
		}
	}
	if got := NewLabelResolver(testLabels(), TierDetailed).ParticipantDescription(coder); got != "Writes the code." {
		t.Errorf("description %q", got)
	}
	if got := NewLabelResolver(LabelSet{}, TierFriendly).PseudoLabel("tools"); got != "Tools" {
		t.Errorf("tools column %q", got)
	}
}

func TestTierFallbackOrder(t *testing.T) {
	only := func(d, f, w string) Tiered {
		var t Tiered
		if d != "" {
			t.Detailed = []string{d}
		}
		if f != "" {
			t.Friendly = []string{f}
		}
		if w != "" {
			t.Whimsical = []string{w}
		}
		return t
	}
	tests := []struct {
		entry Tiered
		tier  Tier
		want  string
	}{
		{only("d", "f", "w"), TierWhimsical, "w"},
		{only("d", "f", ""), TierWhimsical, "f"},
		{only("d", "", ""), TierWhimsical, "d"},
		{only("d", "", "w"), TierFriendly, "w"}, // toward less precise first
		{only("d", "", ""), TierFriendly, "d"},
		{only("", "f", "w"), TierDetailed, "f"},
		{only("", "", "w"), TierDetailed, "w"},
		{Tiered{Friendly: []string{""}, Detailed: []string{"d"}}, TierFriendly, "d"}, // blank variants do not count
	}
	for _, tc := range tests {
		if got := tc.entry.pick(tc.tier); len(got) == 0 || got[0] != tc.want {
			t.Errorf("%+v at %s: %q, want %q", tc.entry, tc.tier, got, tc.want)
		}
	}
	if (Tiered{}).pick(TierFriendly) != nil {
		t.Error("empty entry picked something")
	}
	if tier, ok := ParseTier("friendly"); !ok || tier != TierFriendly {
		t.Error("ParseTier")
	}
	if _, ok := ParseTier("fun"); ok {
		t.Error("ParseTier accepted an unknown tier")
	}
	if TierWhimsical.Next() != TierFriendly || TierDetailed.Next() != TierWhimsical {
		t.Error("Next")
	}
	if NewLabelResolver(LabelSet{}, "bogus").Tier() != TierFriendly {
		t.Error("unknown tier should resolve as friendly")
	}
}

func TestOperationLabel(t *testing.T) {
	orch := roleP("orchestrator-0-1", "orchestrator")
	coder := roleP("coder-1-2", "coder")
	read := toolP("read_file")
	shell := toolP("run_shell")
	tests := []struct {
		name     string
		tier     Tier
		op       Operation
		src, dst Participant
		want     string
		bare     bool // resolve against an empty guild
	}{
		{"tool call label wins", TierFriendly, Operation{ID: "op-3", Kind: OpCall}, coder, read, "Coder reads a file", false},
		{"discriminated template", TierFriendly, Operation{ID: "op-9", Kind: OpReturn, Outcome: "success"}, coder, orch, "Coder hands Orchestrator the result (success)", false},
		{"generic guild template keeps unknown placeholders", TierFriendly, Operation{ID: "op-2", Kind: OpCall}, orch, coder, "Orchestrator → Coder: {unknown}", false},
		{"built-in discriminated default", TierFriendly, Operation{ID: "op-4", Kind: OpCall}, coder, shell, "Coder uses Run Shell", true},
		{"built-in detailed default", TierDetailed, Operation{ID: "op-5", Kind: OpObserve}, orch, coder, "Orchestrator observes coder", false},
		{"raw role placeholders", TierDetailed, Operation{ID: "op-6", Kind: OpCall}, coder, shell, "Coder calls tool run_shell", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := testLabels()
			if tc.bare {
				set = LabelSet{}
			}
			r := NewLabelResolver(set, tc.tier)
			if got := r.OperationLabel(tc.op, tc.src, tc.dst); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

func TestWhimsicalRotationIsStable(t *testing.T) {
	r := NewLabelResolver(testLabels(), TierWhimsical)
	coder := roleP("coder-1-2", "coder")
	seen := map[string]bool{}
	for i := 1; i <= 40; i++ {
		id := "op-" + string(rune('0'+i%10)) + string(rune('a'+i))
		a, ok := r.WorkingLabel(coder, id)
		b, _ := NewLabelResolver(testLabels(), TierWhimsical).WorkingLabel(coder, id)
		if !ok || a != b {
			t.Fatalf("%s: %q then %q", id, a, b)
		}
		if !strings.HasPrefix(a, "The Tinkerer ") {
			t.Errorf("placeholder not filled: %q", a)
		}
		seen[a] = true
	}
	if len(seen) != 3 {
		t.Errorf("rotation used %d of 3 variants", len(seen))
	}
	// Pinned: the hash is FNV-1a, so the choice survives restarts and
	// matches any other implementation of it.
	if Seed("op-1") != 0x7bace35c || Seed("") != 0x811c9dc5 {
		t.Errorf("Seed(op-1)=%#x Seed()=%#x, want FNV-1a", Seed("op-1"), Seed(""))
	}
}

func TestWorkingLabelFallbacks(t *testing.T) {
	tests := []struct {
		tier Tier
		p    Participant
		want string
	}{
		{TierDetailed, roleP("coder-1-2", "coder"), "coder (coder) is writing code"},
		{TierFriendly, toolP("write_file"), "Saving with File writer"},
		{TierFriendly, roleP("tester-1-2", "tester"), "Tester is working"},
		{TierDetailed, toolP("git_commit"), "Git Commit is running"},
	}
	for _, tc := range tests {
		got, ok := NewLabelResolver(testLabels(), tc.tier).WorkingLabel(tc.p, "op-1")
		if !ok || got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.tier, tc.p.ID, got, tc.want)
		}
	}
}

func TestFillPlaceholders(t *testing.T) {
	v := func(name string) (string, bool) {
		switch name {
		case "source":
			return "A", true
		case "sourceRole":
			return "a", true
		}
		return "", false
	}
	tests := map[string]string{
		"{source} and {sourceRole}": "A and a",
		"{source}{source}":          "AA",
		"{missing} {source":         "{missing} {source",
		"{} {{source}}":             "{} {A}",
		"no placeholders":           "no placeholders",
		"{sourc€}":                  "{sourc€}",
	}
	for in, want := range tests {
		if got := fill(in, v); got != want {
			t.Errorf("fill(%q) = %q, want %q", in, got, want)
		}
	}
}
