package tools

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestBuiltinManifests(t *testing.T) {
	all, err := DefaultManifests()
	if err != nil {
		t.Fatal(err)
	}
	reg := Builtins()
	if len(reg) != len(builtinList()) {
		t.Fatalf("duplicate tool names: %v", reg.Names())
	}
	for name, tool := range reg {
		m := tool.Manifest()
		if m.Name != name || all[name].Name != name {
			t.Errorf("%s: manifest name %q", name, m.Name)
		}
		if m.Description == "" || m.HumanLabel == nil || m.HumanDescription == nil || m.HumanCallLabel == nil || m.HumanWorkingLabel == nil {
			t.Errorf("%s: missing description or labels", name)
			continue
		}
		for _, tier := range []*Tiered{m.HumanLabel, m.HumanDescription, m.HumanCallLabel, m.HumanWorkingLabel} {
			if len(tier.Detailed) == 0 || len(tier.Friendly) == 0 || len(tier.Whimsical) == 0 {
				t.Errorf("%s: a label lacks a tier", name)
			}
		}
		for _, v := range append(append(m.HumanCallLabel.Detailed, m.HumanCallLabel.Friendly...), m.HumanCallLabel.Whimsical...) {
			if !strings.Contains(v, "{source}") {
				t.Errorf("%s: call label %q lacks {source}", name, v)
			}
		}
		var params map[string]any
		if err := json.Unmarshal(m.Parameters, &params); err != nil {
			t.Errorf("%s: parameters: %v", name, err)
			continue
		}
		if params["type"] != "object" || params["additionalProperties"] != false {
			t.Errorf("%s: parameters must be a closed object", name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.Parameters))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile(name + ".json"); err != nil {
			t.Errorf("%s: schema does not compile: %v", name, err)
		}
	}
}

// The original's parameter names, which guilds written for it rely on.
func TestParameterNames(t *testing.T) {
	want := map[string]string{
		"read_file": "path", "read_file_partial": "path,offset,limit", "write_file": "path,content",
		"edit_file": "path,old_string,new_string", "list_directory": "path", "glob_files": "pattern",
		"search_text": "pattern,paths", "repo_map": "path", "run_shell": "command,timeoutSeconds",
		"typecheck": "commands,timeoutSeconds", "test": "commands,timeoutSeconds", "ask_human": "question,context,options",
		"write_plan": "content", "read_plan": "runId", "read_run_log": "offset,limit", "search_run_log": "query,type,limit",
		"git_init": "", "git_commit": "message", "git_branch": "name", "git_set_base": "commit",
		"git_changes_since_base": "", "git_uncommitted_changes": "", "git_restore": "paths,from",
		"fetch_url": "url", "web_search": "query,limit",
	}
	reg := Builtins()
	for name, props := range want {
		tool, ok := reg[name]
		if !ok {
			t.Errorf("missing tool %s", name)
			continue
		}
		var p struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(tool.Manifest().Parameters, &p)
		for _, prop := range strings.Split(props, ",") {
			if _, ok := p.Properties[prop]; prop != "" && !ok {
				t.Errorf("%s lacks parameter %s", name, prop)
			}
		}
		if n := len(strings.Split(props, ",")); props != "" && len(p.Properties) != n {
			t.Errorf("%s has %d parameters, want %d", name, len(p.Properties), n)
		}
	}
}
