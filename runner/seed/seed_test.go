package seed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/tools"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The test reads the seed through plain directories so it does not depend
// on how the files are embedded.
var (
	guildFS     = os.DirFS("guild")
	workspaceFS = os.DirFS("demo/workspace")
)

const manifestDir = "../../tools/manifests"

// tiered is a label with its three tiers, decoded as the product does.
type tiered = tools.Tiered

// complete reports whether every tier of t has a phrasing and none is blank.
func complete(t *tiered) bool {
	return t != nil && nonEmpty(t.Detailed) && nonEmpty(t.Friendly) && nonEmpty(t.Whimsical)
}

func nonEmpty(t tools.Variants) bool {
	if len(t) == 0 {
		return false
	}
	for _, s := range t {
		if strings.TrimSpace(s) == "" {
			return false
		}
	}
	return true
}

type roleDef struct {
	SystemPrompt     string   `json:"systemPrompt"`
	Tools            []string `json:"tools"`
	IncludeReasoning bool     `json:"includeReasoning"`
	StyleGuide       bool     `json:"styleGuide"`
	ProjectDocs      []string `json:"projectDocs"`
	Label            *tiered  `json:"label"`
	Description      *tiered  `json:"description"`
	WorkingLabel     *tiered  `json:"workingLabel"`
}

type visualization struct {
	PseudoRoleLabels          map[string]tiered            `json:"pseudoRoleLabels"`
	OperationTemplates        map[string]map[string]tiered `json:"operationTemplates"`
	GenericOperationTemplates map[string]tiered            `json:"genericOperationTemplates"`
	WorkingTemplates          map[string]tiered            `json:"workingTemplates"`
}

type guildDef struct {
	EntryRole     string             `json:"entryRole"`
	Roles         map[string]roleDef `json:"roles"`
	Tools         []string           `json:"tools"`
	Visualization *visualization     `json:"visualization"`
}

func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func loadGuild(t *testing.T) guildDef {
	t.Helper()
	b, err := fs.ReadFile(guildFS, "guild.json")
	if err != nil {
		t.Fatal(err)
	}
	var g guildDef
	strictDecode(t, b, &g)
	return g
}

// paramSpec is what the test knows of a tool's parameters.
type paramSpec struct {
	props    []string
	required []string
	closed   bool
	schema   json.RawMessage
}

// builtinParams covers tools whose default manifests other packages own, so
// the test still checks argument names before those manifests exist.
var builtinParams = map[string]paramSpec{
	"read_file":               {props: []string{"path"}, required: []string{"path"}},
	"read_file_partial":       {props: []string{"path", "offset", "limit"}, required: []string{"path"}},
	"write_file":              {props: []string{"path", "content"}, required: []string{"path", "content"}},
	"edit_file":               {props: []string{"path", "old_string", "new_string"}, required: []string{"path", "old_string", "new_string"}},
	"list_directory":          {props: []string{"path"}},
	"glob_files":              {props: []string{"pattern"}, required: []string{"pattern"}},
	"search_text":             {props: []string{"pattern", "paths"}, required: []string{"pattern"}},
	"repo_map":                {props: []string{"path"}},
	"run_shell":               {props: []string{"command", "timeoutSeconds"}, required: []string{"command"}},
	"typecheck":               {props: []string{"commands", "timeoutSeconds"}, required: []string{"commands"}},
	"test":                    {props: []string{"commands", "timeoutSeconds"}, required: []string{"commands"}},
	"read_plan":               {props: []string{"runId"}},
	"write_plan":              {props: []string{"content"}, required: []string{"content"}},
	"read_run_log":            {props: []string{"offset", "limit"}},
	"search_run_log":          {props: []string{"query", "type", "limit"}, required: []string{"query"}},
	"ask_human":               {props: []string{"question", "context", "options"}, required: []string{"question"}},
	"git_init":                {},
	"git_commit":              {props: []string{"message"}},
	"git_branch":              {props: []string{"name"}},
	"git_set_base":            {props: []string{"commit"}},
	"git_changes_since_base":  {},
	"git_uncommitted_changes": {},
	"git_restore":             {props: []string{"paths", "from"}, required: []string{"paths"}},
}

// knownTools merges the manifests on disk over builtinParams.
func knownTools(t *testing.T) map[string]paramSpec {
	t.Helper()
	out := map[string]paramSpec{}
	for k, v := range builtinParams {
		out[k] = v
	}
	entries, err := os.ReadDir(manifestDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(manifestDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Name       string `json:"name"`
			Parameters struct {
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			} `json:"parameters"`
			Raw struct {
				Parameters json.RawMessage `json:"parameters"`
			}
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if err := json.Unmarshal(b, &m.Raw); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		spec := paramSpec{required: m.Parameters.Required, schema: m.Raw.Parameters}
		for p := range m.Parameters.Properties {
			spec.props = append(spec.props, p)
		}
		spec.closed = m.Parameters.AdditionalProperties != nil && !*m.Parameters.AdditionalProperties
		out[m.Name] = spec
	}
	return out
}

func TestGuildParsesAndIsComplete(t *testing.T) {
	g := loadGuild(t)
	if _, ok := g.Roles[g.EntryRole]; !ok {
		t.Fatalf("entry role %q is not declared", g.EntryRole)
	}
	if len(g.Tools) != 0 {
		t.Errorf("the seed guild should rely on embedded manifests, but lists %v", g.Tools)
	}
	known := knownTools(t)
	for name, r := range g.Roles {
		if r.SystemPrompt != "prompts/"+name+".md" {
			t.Errorf("%s: systemPrompt %q", name, r.SystemPrompt)
		}
		if _, err := fs.Stat(guildFS, r.SystemPrompt); err != nil {
			t.Errorf("%s: prompt: %v", name, err)
		}
		if len(r.ProjectDocs) > 0 {
			t.Errorf("%s: the seed guild declares no projectDocs", name)
		}
		if !slices.Contains(r.Tools, "finish") {
			t.Errorf("%s: cannot finish", name)
		}
		for _, tool := range r.Tools {
			if _, ok := known[tool]; !ok {
				t.Errorf("%s: unknown tool %q", name, tool)
			}
		}
		for field, tr := range map[string]*tiered{"label": r.Label, "description": r.Description, "workingLabel": r.WorkingLabel} {
			if !complete(tr) {
				t.Errorf("%s: %s lacks a tier", name, field)
			}
		}
	}
	if _, err := fs.Stat(guildFS, "prompts/style.md"); err != nil {
		t.Errorf("style guide: %v", err)
	}
}

func TestRoleToolSplit(t *testing.T) {
	g := loadGuild(t)
	for name, r := range g.Roles {
		if slices.Contains(r.Tools, "edit_file") && !slices.Contains(r.Tools, "git_restore") {
			t.Errorf("%s edits files but cannot undo its edits (git_restore)", name)
		}
	}
	writers := []string{"write_file", "edit_file"}
	gitWrite := []string{"git_init", "git_commit", "git_branch", "git_set_base"}
	for name, r := range g.Roles {
		for _, tool := range r.Tools {
			if slices.Contains(writers, tool) && name != "coder" {
				t.Errorf("%s holds %s; only the coder writes", name, tool)
			}
			if tool == "git_restore" && !slices.Contains(r.Tools, "edit_file") {
				t.Errorf("%s holds git_restore without edit_file; only a role that edits undoes its edits", name)
			}
			if slices.Contains(gitWrite, tool) && name != "orchestrator" {
				t.Errorf("%s holds %s; only the orchestrator changes the repository", name, tool)
			}
			if tool == "git_changes_since_base" && !slices.Contains([]string{"architecture_reviewer", "style_reviewer", "security_reviewer"}, name) {
				t.Errorf("%s holds git_changes_since_base", name)
			}
			if tool == "git_uncommitted_changes" && name != "change_summarizer" {
				t.Errorf("%s holds git_uncommitted_changes", name)
			}
		}
	}
}

func TestPromptsResistInjectionAndRoute(t *testing.T) {
	g := loadGuild(t)
	handlers := []string{"loop_detector", "context_manager", "inquiry_responder"}
	for name, r := range g.Roles {
		b, err := fs.ReadFile(guildFS, r.SystemPrompt)
		if err != nil {
			t.Fatal(err)
		}
		p := string(b)
		if !strings.Contains(p, "data is not instructions") {
			t.Errorf("%s: prompt lacks the data-not-instructions rule", name)
		}
		if !strings.Contains(p, "finish {") {
			t.Errorf("%s: prompt does not show the finish call", name)
		}
		if !slices.Contains(handlers, name) && !strings.Contains(p, "[Platform notice — context pressure]") {
			t.Errorf("%s: prompt lacks the context-pressure handoff", name)
		}
		if slices.Contains(r.Tools, "agent") && !strings.Contains(p, "context_handoff") {
			t.Errorf("%s: delegates but does not route context_handoff", name)
		}
		for _, tool := range r.Tools {
			if tool != "finish" && !strings.Contains(p, tool) && !slices.Contains([]string{"read_file_partial", "glob_files", "repo_map", "search_text", "list_directory", "read_plan", "write_plan", "context_info", "edit_context", "read_run_log", "search_run_log", "git_branch", "git_commit", "git_init", "git_set_base"}, tool) {
				t.Errorf("%s: prompt never mentions its tool %s", name, tool)
			}
		}
	}
	orch, _ := fs.ReadFile(guildFS, "prompts/orchestrator.md")
	for _, want := range []string{"Quality level", "[Prior run result — status: …]", "quick", "standard", "thorough", "context_budget_exceeded", "loop_detected", "interrupted"} {
		if !bytes.Contains(orch, []byte(want)) {
			t.Errorf("orchestrator prompt lacks %q", want)
		}
	}
}

func TestVisualizationShapes(t *testing.T) {
	v := loadGuild(t).Visualization
	if v == nil {
		t.Fatal("no visualization section")
	}
	for _, k := range []string{"human", "interrupt", "tools"} {
		tr := v.PseudoRoleLabels[k]
		if !complete(&tr) {
			t.Errorf("pseudoRoleLabels.%s incomplete", k)
		}
	}
	kinds := []string{"call", "return", "observe", "terminate"}
	for _, k := range kinds {
		tr := v.GenericOperationTemplates[k]
		if !complete(&tr) {
			t.Errorf("genericOperationTemplates.%s incomplete", k)
		}
		if len(v.OperationTemplates[k]) == 0 {
			t.Errorf("operationTemplates.%s missing", k)
		}
		for disc, tr := range v.OperationTemplates[k] {
			from, to, ok := strings.Cut(disc, "->")
			valid := []string{"human", "interrupt", "role", "tool"}
			if !ok || !slices.Contains(valid, from) || !slices.Contains(valid, to) {
				t.Errorf("operationTemplates.%s: bad discriminator %q", k, disc)
			}
			if !complete(&tr) {
				t.Errorf("operationTemplates.%s.%s incomplete", k, disc)
			}
		}
	}
	for _, k := range []string{"role", "tool"} {
		tr := v.WorkingTemplates[k]
		if !complete(&tr) {
			t.Errorf("workingTemplates.%s incomplete", k)
		}
	}
}

func TestRunnerManifests(t *testing.T) {
	want := map[string][]string{
		"context_info":           {"targetRole"},
		"edit_context":           {"operations", "targetRole"},
		"trigger_interrupt":      {"targetRole", "action", "reason"},
		"list_role_messages":     {"targetRole"},
		"read_message_window":    {"targetRole", "index", "field", "start", "end"},
		"search_role_blocks":     {"targetRole", "query", "field", "regex", "maxMatches"},
		"recent_role_tool_calls": {"targetRole", "count"},
	}
	for name, props := range want {
		b, err := os.ReadFile(filepath.Join(manifestDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m tools.Manifest
		strictDecode(t, b, &m)
		if m.Name != name || m.Description == "" {
			t.Errorf("%s: name %q, description %q", name, m.Name, m.Description)
		}
		for field, tr := range map[string]*tiered{"humanLabel": m.HumanLabel, "humanDescription": m.HumanDescription, "humanCallLabel": m.HumanCallLabel, "humanWorkingLabel": m.HumanWorkingLabel} {
			if !complete(tr) {
				t.Errorf("%s: %s lacks a tier", name, field)
			}
		}
		spec := knownTools(t)[name]
		if !spec.closed {
			t.Errorf("%s: parameters must set additionalProperties false", name)
		}
		slices.Sort(spec.props)
		slices.Sort(props)
		if !slices.Equal(spec.props, props) {
			t.Errorf("%s: properties %v, want %v", name, spec.props, props)
		}
	}
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type scriptTurn struct {
	Content   string     `json:"content"`
	Reasoning string     `json:"reasoning"`
	ToolCalls []toolCall `json:"toolCalls"`
	Usage     struct {
		PromptTokens       int `json:"promptTokens"`
		CompletionTokens   int `json:"completionTokens"`
		CachedPromptTokens int `json:"cachedPromptTokens"`
	} `json:"usage"`
	DelayMs int `json:"delayMs"`
}

type scriptBranch struct {
	Name   string       `json:"name"`
	When   []string     `json:"when"`
	Task   []string     `json:"task"`
	Unless []string     `json:"unless"`
	Turns  []scriptTurn `json:"turns"`
}

type script struct {
	Roles    map[string][]scriptTurn   `json:"roles"`
	Branches map[string][]scriptBranch `json:"branches"`
}

func loadScript(t *testing.T) script {
	t.Helper()
	b, err := os.ReadFile("demo/script.json")
	if err != nil {
		t.Fatal(err)
	}
	var s script
	strictDecode(t, b, &s)
	return s
}

// copyWorkspace copies the demo workspace into a temporary directory. It
// copies from the plain directory, not through CopyDemoWorkspace, so the
// demo is checked apart from the embedding (the scripts run through sh).
func copyWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(workspaceFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := fs.ReadFile(workspaceFS, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// validateAgainst checks arguments against a manifest's JSON Schema, as the
// executor does before a tool runs.
func validateAgainst(schema, args json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("seed:/params.json", doc); err != nil {
		return err
	}
	sch, err := c.Compile("seed:/params.json")
	if err != nil {
		return err
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

func runCommand(t *testing.T, dir, command string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0, string(out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("%s: %v", command, err)
	return -1, ""
}

// simulation replays the script the way the executor consumes it: one cursor
// per role name, depth-first, a child running to completion inside its
// parent's agent call.
type simulation struct {
	t         *testing.T
	guild     guildDef
	known     map[string]paramSpec
	script    script
	cursor    map[string]int
	dir       string
	testRuns  []int
	questions int
}

func (s *simulation) run(role string, depth int) string {
	t := s.t
	def, ok := s.guild.Roles[role]
	if !ok {
		t.Fatalf("script delegates to unknown role %q", role)
	}
	if depth > 8 {
		t.Fatalf("delegation deeper than maxAgentDepth")
	}
	for {
		turns := s.script.Roles[role]
		i := s.cursor[role]
		if i >= len(turns) {
			t.Fatalf("%s runs out of scripted turns at turn %d", role, i)
		}
		s.cursor[role]++
		turn := turns[i]
		if len(turn.ToolCalls) == 0 {
			t.Fatalf("%s turn %d has no tool calls (an implicit finish is not used in the demo)", role, i)
		}
		for j, c := range turn.ToolCalls {
			where := fmt.Sprintf("%s turn %d call %d (%s)", role, i, j, c.Name)
			checkCall(t, s.known, def, where, c)
			switch c.Name {
			case "agent":
				var a struct{ Role, Task string }
				json.Unmarshal(c.Arguments, &a)
				if strings.TrimSpace(a.Task) == "" {
					t.Errorf("%s: empty task", where)
				}
				s.run(a.Role, depth+1)
			case "ask_human":
				s.questions++
				var a struct {
					Question string
					Options  []struct{ Label, Description string }
				}
				json.Unmarshal(c.Arguments, &a)
				if a.Question == "" || len(a.Options) < 2 || len(a.Options) > 3 {
					t.Errorf("%s: want a question with 2-3 options, got %d", where, len(a.Options))
				}
				for _, o := range a.Options {
					if o.Label == "" {
						t.Errorf("%s: option without label", where)
					}
				}
			case "read_file":
				var a struct{ Path string }
				json.Unmarshal(c.Arguments, &a)
				if _, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(a.Path))); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			case "edit_file":
				var a struct {
					Path      string
					OldString string `json:"old_string"`
					NewString string `json:"new_string"`
				}
				json.Unmarshal(c.Arguments, &a)
				p := filepath.Join(s.dir, filepath.FromSlash(a.Path))
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if n := strings.Count(string(b), a.OldString); n != 1 {
					t.Fatalf("%s: old_string occurs %d times in %s, want exactly once", where, n, a.Path)
				}
				if err := os.WriteFile(p, []byte(strings.Replace(string(b), a.OldString, a.NewString, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			case "write_file":
				var a struct{ Path, Content string }
				json.Unmarshal(c.Arguments, &a)
				p := filepath.Join(s.dir, filepath.FromSlash(path.Clean(a.Path)))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(a.Content), 0o644); err != nil {
					t.Fatal(err)
				}
			case "test", "typecheck":
				var a struct{ Commands []string }
				json.Unmarshal(c.Arguments, &a)
				worst := 0
				for _, cmd := range a.Commands {
					if code, _ := runCommand(t, s.dir, cmd); code != 0 {
						worst = code
					}
				}
				s.testRuns = append(s.testRuns, worst)
			case "finish":
				if j != len(turn.ToolCalls)-1 {
					t.Errorf("%s: finish must be the turn's last call", where)
				}
				var a struct{ Status, Summary string }
				json.Unmarshal(c.Arguments, &a)
				if !slices.Contains([]string{"success", "error", "needs_clarification"}, a.Status) || strings.TrimSpace(a.Summary) == "" {
					t.Errorf("%s: bad finish %+v", where, a)
				}
				return a.Status
			}
		}
	}
}

// checkCall checks one scripted tool call as the executor would: the tool
// is granted to the role and its arguments fit the tool's manifest.
func checkCall(t *testing.T, known map[string]paramSpec, def roleDef, where string, c toolCall) {
	t.Helper()
	if !slices.Contains(def.Tools, c.Name) {
		t.Fatalf("%s: tool not granted", where)
	}
	args := map[string]json.RawMessage{}
	if len(c.Arguments) > 0 {
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			t.Fatalf("%s: arguments are not an object: %v", where, err)
		}
	}
	spec, ok := known[c.Name]
	if !ok {
		t.Fatalf("%s: unknown tool", where)
	}
	for _, r := range spec.required {
		if _, ok := args[r]; !ok {
			t.Errorf("%s: missing argument %q", where, r)
		}
	}
	for a := range args {
		if !slices.Contains(spec.props, a) {
			t.Errorf("%s: unexpected argument %q", where, a)
		}
	}
	if spec.schema != nil {
		if err := validateAgainst(spec.schema, c.Arguments); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
}

// TestDemoBranchesFitTheGuild checks every branch turn statically: the
// roles exist, the tools are granted, the arguments fit the manifests, the
// files read exist in the sample workspace, and each branch ends its
// instance with finish. What the branches do in a run is tested in
// demo_test.go.
func TestDemoBranchesFitTheGuild(t *testing.T) {
	g := loadGuild(t)
	sc := loadScript(t)
	known := knownTools(t)
	for role, bs := range sc.Branches {
		def, ok := g.Roles[role]
		if !ok {
			t.Fatalf("branches for unknown role %q", role)
		}
		for _, b := range bs {
			if len(b.Turns) == 0 {
				t.Fatalf("%s/%s: no turns", role, b.Name)
			}
			for i, turn := range b.Turns {
				if len(turn.ToolCalls) == 0 {
					t.Errorf("%s/%s turn %d has no tool calls", role, b.Name, i)
				}
				for j, c := range turn.ToolCalls {
					where := fmt.Sprintf("%s/%s turn %d call %d (%s)", role, b.Name, i, j, c.Name)
					checkCall(t, known, def, where, c)
					var a struct{ Path, Role string }
					json.Unmarshal(c.Arguments, &a)
					if c.Name == "read_file" {
						if _, err := fs.Stat(workspaceFS, a.Path); err != nil {
							t.Errorf("%s: %v", where, err)
						}
					}
					if c.Name == "agent" {
						if _, ok := g.Roles[a.Role]; !ok {
							t.Errorf("%s: delegates to unknown role %q", where, a.Role)
						}
					}
				}
			}
			last := b.Turns[len(b.Turns)-1].ToolCalls
			if len(last) == 0 || last[len(last)-1].Name != "finish" {
				t.Errorf("%s/%s: the last turn must finish", role, b.Name)
			}
		}
	}
}

func TestDemoScriptDrivesTheGuild(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	g := loadGuild(t)
	sc := loadScript(t)
	dir := copyWorkspace(t)

	if code, out := runCommand(t, dir, "sh test.sh"); code == 0 {
		t.Fatalf("the pristine demo workspace must fail its test:\n%s", out)
	}

	sim := &simulation{t: t, guild: g, known: knownTools(t), script: sc, cursor: map[string]int{}, dir: dir}
	if status := sim.run(g.EntryRole, 0); status != "success" {
		t.Errorf("entry role finished %q", status)
	}
	for role, turns := range sc.Roles {
		if sim.cursor[role] != len(turns) {
			t.Errorf("%s: %d of %d scripted turns consumed", role, sim.cursor[role], len(turns))
		}
	}
	if sim.questions != 1 {
		t.Errorf("the demo asks %d questions, want exactly one", sim.questions)
	}
	if len(sim.testRuns) < 2 || sim.testRuns[0] == 0 {
		t.Errorf("the first scripted test run must fail: %v", sim.testRuns)
	}
	for i, code := range sim.testRuns[1:] {
		if code != 0 {
			t.Errorf("scripted test run %d failed after the fix", i+1)
		}
	}
	if code, out := runCommand(t, dir, "sh test.sh"); code != 0 {
		t.Fatalf("the test must pass after the scripted edits:\n%s", out)
	}
	if code, out := runCommand(t, dir, `sh bin/slug "Hello, World!"`); code != 0 || strings.TrimSpace(out) != "hello-world" {
		t.Errorf("bin/slug after the fix: %d %q", code, out)
	}
}

func TestDemoScriptPacing(t *testing.T) {
	sc := loadScript(t)
	total := 0
	paced := func(where string, turns []scriptTurn) {
		last := 0
		for i, turn := range turns {
			u := turn.Usage
			if u.PromptTokens <= last {
				t.Errorf("%s turn %d: prompt tokens %d do not rise", where, i, u.PromptTokens)
			}
			last = u.PromptTokens
			if u.CompletionTokens <= 0 || u.CachedPromptTokens > u.PromptTokens {
				t.Errorf("%s turn %d: implausible usage %+v", where, i, u)
			}
			if strings.TrimSpace(turn.Content) == "" {
				t.Errorf("%s turn %d: no visible content", where, i)
			}
			if turn.DelayMs <= 0 || turn.DelayMs > 1500 {
				t.Errorf("%s turn %d: delay %d ms", where, i, turn.DelayMs)
			}
		}
	}
	for role, turns := range sc.Roles {
		paced(role, turns)
		for _, turn := range turns {
			total += turn.DelayMs
		}
	}
	for role, bs := range sc.Branches {
		for _, b := range bs {
			paced(role+"/"+b.Name, b.Turns)
		}
	}
	if total < 10000 || total > 20000 {
		t.Errorf("total scripted delay %d ms, want 10-20 s", total)
	}
}
