package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportNamesEachRolesModel: a variant whose roles ran on different
// models says which model each role used; one model says nothing more.
func TestReportNamesEachRolesModel(t *testing.T) {
	r := &Report{Variants: []string{"seed", "one"}, Results: []Result{
		{Benchmark: "b1", Variant: "seed", Status: "success", Pass: true,
			RoleModels: map[string]string{"orchestrator": "qwen-32b", "coder": "qwen-7b (fast)"}},
		{Benchmark: "b2", Variant: "seed", Status: "success", Pass: true,
			RoleModels: map[string]string{"orchestrator": "qwen-32b", "coder": "qwen-7b (fast)", "planner": "qwen-32b"}},
		{Benchmark: "b1", Variant: "one", Status: "success", Pass: true, RoleModels: map[string]string{"orchestrator": "qwen-32b", "coder": "qwen-32b"}},
	}}
	var out bytes.Buffer
	WriteTable(&out, r)
	if !strings.Contains(out.String(), "   models: coder qwen-7b (fast); orchestrator qwen-32b; planner qwen-32b\n") {
		t.Errorf("the report does not name each role's model:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "models:"); n != 1 {
		t.Errorf("%d models lines, want 1 (the single-model variant has none):\n%s", n, out.String())
	}
}
