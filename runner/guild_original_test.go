package runner

import (
	"strings"
	"testing"
	"testing/fstest"
)

func mapGuild(guild string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"guild.json": {Data: []byte(guild)}, "p.md": {Data: []byte("You are a.\n")}}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

// TestStyleGuideForms: a path (the original's form) or true (Guildhall's
// shorthand for prompts/style.md) appends the file after one blank line;
// false or absent leaves the prompt byte for byte.
func TestStyleGuideForms(t *testing.T) {
	files := map[string]string{"prompts/style.md": "## Default style\n", "styles/house.md": "## House style\n"}
	cases := []struct {
		value, want string
	}{
		{`"styles/house.md"`, "You are a.\n\n## House style\n"},
		{`"./styles/house.md"`, "You are a.\n\n## House style\n"},
		{`"/styles/house.md"`, "You are a.\n\n## House style\n"}, // path.join in the original drops the leading slash too
		{`true`, "You are a.\n\n## Default style\n"},
		{`false`, "You are a.\n"},
	}
	for _, c := range cases {
		g, err := LoadGuild(mapGuild(`{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "styleGuide": `+c.value+`}}}`, files), "g")
		if err != nil {
			t.Fatalf("styleGuide %s: %v", c.value, err)
		}
		if got := g.Roles["a"].Prompt; got != c.want {
			t.Errorf("styleGuide %s: prompt %q, want %q", c.value, got, c.want)
		}
	}
	g, err := LoadGuild(mapGuild(`{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"]}}}`, files), "g")
	if err != nil || g.Roles["a"].Prompt != "You are a.\n" {
		t.Fatalf("no styleGuide: %q %v", g.Roles["a"].Prompt, err)
	}
}

func TestStyleGuideErrors(t *testing.T) {
	big := strings.Repeat("x", maxStyleGuide+1)
	cases := []struct {
		name, value string
		want        []string
	}{
		{"missing file", `"styles/none.md"`, []string{"g/guild.json:1:", `cannot read style guide "styles/none.md"`, "does not exist"}},
		{"empty path", `""`, []string{"styleGuide is empty"}},
		{"a number", `42`, []string{"roles.a.styleGuide must be the path", "not a JSON number"}},
		{"leads out", `"../outside.md"`, []string{`"../outside.md"`, "leads outside the guild folder"}},
		{"leads out deeper", `"styles/../../x.md"`, []string{"leads outside the guild folder"}},
		{"too large", `"big.md"`, []string{"more than the 65536 a style guide may hold"}},
		{"misspelled key", `"p.md", "stylGuide": "x"`, []string{`unknown key "stylGuide"`, `did you mean "styleGuide"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadGuild(mapGuild(`{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "styleGuide": `+c.value+`}}}`,
				map[string]string{"big.md": big}), "g")
			wantError(t, err, c.want)
		})
	}
}

// TestStyleGuideFromTheWorkspace: a workspace's guild, loaded from the
// workspace's root, may name a workspace file as its style guide, never
// one outside the workspace.
func TestStyleGuideFromTheWorkspace(t *testing.T) {
	ws := fstest.MapFS{
		"guild/guild.json": {Data: []byte(`{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "styleGuide": "../STYLE.md"}}}`)},
		"guild/p.md":       {Data: []byte("P")},
		"STYLE.md":         {Data: []byte("## Project style")},
	}
	g, err := LoadGuildIn(ws, "guild", "guild")
	if err != nil {
		t.Fatal(err)
	}
	if g.Roles["a"].Prompt != "P\n\n## Project style" {
		t.Fatalf("prompt = %q", g.Roles["a"].Prompt)
	}
	ws["guild/guild.json"] = &fstest.MapFile{Data: []byte(`{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "styleGuide": "../../etc/passwd"}}}`)}
	if _, err := LoadGuildIn(ws, "guild", "guild"); err == nil || !strings.Contains(err.Error(), "leads outside the workspace") {
		t.Fatalf("a path out of the workspace: %v", err)
	}
}

// TestUnknownKeysWhereTheOriginalIgnoresThem: the guild's top level,
// manifests and label tiers warn with a position; a misspelling of a
// known key, a role key, deployment keys in a guild stay errors.
func TestUnknownKeysWhereTheOriginalIgnoresThem(t *testing.T) {
	guild := "{\n \"entryRole\": \"a\",\n \"$comment\": \"written for the original\",\n" +
		" \"roles\": {\"a\": {\"systemPrompt\": \"p.md\", \"tools\": [\"finish\", \"t\"],\n" +
		"   \"label\": {\"detailed\": [\"A\"], \"playful\": [\"Ace\"]}}},\n" +
		" \"tools\": [\"t.json\"]\n}"
	manifest := "{\"name\": \"t\", \"description\": \"d\", \"parameters\": {\"type\": \"object\"},\n \"timeoutSeconds\": 5,\n" +
		" \"humanLabel\": {\"detailed\": [\"T\"], \"emoji\": [\"🔧\"]}}"
	g, err := LoadGuild(mapGuild(guild, map[string]string{"t.json": manifest}), "g")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`g/guild.json:3:2: unknown key "$comment" in guild is ignored`,
		`g/guild.json:5:33: unknown key "playful" in guild.roles.a.label is ignored`,
		`g/t.json:2:2: unknown key "timeoutSeconds" in manifest is ignored`,
		`g/t.json:3:36: unknown key "emoji" in manifest.humanLabel is ignored`,
	}
	if len(g.Warnings) != len(want) {
		t.Fatalf("warnings = %v", g.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(g.Warnings[i].Error(), w) {
			t.Errorf("warning %d = %q, want prefix %q", i, g.Warnings[i], w)
		}
	}
	if g.Roles["a"].Label == nil || g.Roles["a"].Label.Detailed[0] != "A" {
		t.Errorf("the known tiers are read beside an unknown one: %+v", g.Roles["a"].Label)
	}

	errorsToo := []struct{ name, guild, want string }{
		{"misspelled top-level key", `{"entryRole": "a", "role": {}}`, `unknown key "role" in guild; did you mean "roles"?`},
		{"case of a known key", `{"entryRole": "a", "Visualization": {}, "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"]}}}`, `did you mean "visualization"?`},
		{"misspelled tier", `{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "label": {"friendy": "A"}}}}`, `did you mean "friendly"?`},
		{"unknown role key", `{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"], "colour": 1}}}`, `unknown key "colour" in guild.roles.a; allowed keys are`},
		{"logging in a guild", `{"entryRole": "a", "logging": {"level": "full"}, "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"]}}}`, `"logging" is a deployment setting`},
	}
	for _, c := range errorsToo {
		if _, err := LoadGuild(mapGuild(c.guild, nil), "g"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestToolDeclaredTwiceLastWins: as in the original, the later manifest
// of a name is the one used, and the load warns where it is.
func TestToolDeclaredTwiceLastWins(t *testing.T) {
	guild := "{\"entryRole\": \"a\", \"roles\": {\"a\": {\"systemPrompt\": \"p.md\", \"tools\": [\"t\", \"finish\"]}},\n" +
		" \"tools\": [\"one.json\",\n   \"two.json\"]}"
	g, err := LoadGuild(mapGuild(guild, map[string]string{
		"one.json": `{"name": "t", "description": "first", "parameters": {"type": "object"}}`,
		"two.json": `{"name": "t", "description": "second", "parameters": {"type": "object"}}`,
	}), "g")
	if err != nil {
		t.Fatal(err)
	}
	if g.Manifests["t"].Description != "second" {
		t.Errorf("tool t is %q, want the last declaration", g.Manifests["t"].Description)
	}
	if len(g.Warnings) != 1 || !strings.HasPrefix(g.Warnings[0].Error(), `g/guild.json:3:4: tool "t" is declared again (first at 2:12)`) {
		t.Errorf("warnings = %v", g.Warnings)
	}
}

// TestIncludeReasoningDefaultsToReplay: the original always sends
// reasoning back; a role says false to keep it out.
func TestIncludeReasoningDefaultsToReplay(t *testing.T) {
	g, err := LoadGuild(mapGuild(`{"entryRole": "a", "roles": {
		"a": {"systemPrompt": "p.md", "tools": ["finish"]},
		"b": {"systemPrompt": "p.md", "tools": ["finish"], "includeReasoning": false},
		"c": {"systemPrompt": "p.md", "tools": ["finish"], "includeReasoning": true}}}`, nil), "g")
	if err != nil {
		t.Fatal(err)
	}
	for role, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if got := g.Roles[role].ReplaysReasoning(); got != want {
			t.Errorf("role %s replays reasoning = %v, want %v", role, got, want)
		}
	}
}

func TestNearestKey(t *testing.T) {
	s := shape{"detailed": nil, "friendly": nil, "whimsical": nil, lenientKey: nil}
	for key, want := range map[string]string{
		"detailled": "detailed", "Friendly": "friendly", "whimsica": "whimsical",
		"playful": "", "whimsy": "", "emoji": "", "?": "", "": "", "dtl": "",
	} {
		if got := nearestKey(key, s); got != want {
			t.Errorf("nearestKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestRequestsCarryTheRolesReasoningChoice: what a role's includeReasoning
// decides reaches the provider's request.
func TestRequestsCarryTheRolesReasoningChoice(t *testing.T) {
	g, err := LoadGuild(mapGuild(`{"entryRole": "a", "roles": {
		"a": {"systemPrompt": "p.md", "tools": ["finish"]},
		"b": {"systemPrompt": "p.md", "tools": ["finish"], "includeReasoning": false}}}`, nil), "g")
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{opts: Options{Guild: g, Deployment: DefaultDeployment()}}
	if !r.buildRequest(&Frame{Role: "a"}).IncludeReasoning {
		t.Error("a role without includeReasoning must send its reasoning back")
	}
	if r.buildRequest(&Frame{Role: "b"}).IncludeReasoning {
		t.Error("includeReasoning: false must keep reasoning out of the request")
	}
}
