package main

import (
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// TestResumeUsesTheEndpointTheRunUsed (issue 29, point 9): a run against a
// local endpoint named by flags stops on its tool-call budget; `guildhall
// resume RUN_ID` without the endpoint flags goes back to that endpoint
// (not the built-in 127.0.0.1:8080), says so, and finishes the run. The
// operator's key is not sent to an endpoint read from the record, which
// sits in the workspace: the note says how to send it.
func TestResumeUsesTheEndpointTheRunUsed(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("endpoint")
	f := fakellm.New()
	defer f.Close()
	for _, p := range []string{"a", "b", "c"} {
		f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "list_directory", Args: map[string]string{"path": p}}}})
	}
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "looked"}}}})
	guild := budgetGuild(t, h)
	res := h.run(ws, 0, "run", "--workspace", ws, "--guild", guild, "--provider", "openai", "--base-url", f.BaseURL(), "--model", "fake-model",
		"--no-input", "--max-tool-calls", "2", "Look around")
	m, paths := budgetRun(t, ws)
	if res.code != 1 || m.Error == nil || m.Error.Kind != "budget_exceeded" || len(paths) != 2 {
		t.Fatalf("the run should stop on its budget after 2 calls: %s\n%+v %v", res, m.Error, paths)
	}
	sent := len(f.Requests())
	if m.Provider != "openai" || m.APIBase != f.BaseURL() || m.Model != "fake-model" {
		t.Fatalf("meta records %s %s %s", m.Provider, m.APIBase, m.Model)
	}

	res = h.run(ws, 0, "resume", m.RunID, "--workspace", ws, "--no-input", "--max-tool-calls", "0")
	if res.code != 0 {
		t.Fatalf("resume without the endpoint flags: %s", res)
	}
	want := "resuming with the endpoint run " + m.RunID + " used: openai " + f.BaseURL() + ", model fake-model"
	if !strings.Contains(res.stderr, want) {
		t.Errorf("resume does not say which endpoint it uses (%q):\n%s", want, res.stderr)
	}
	if strings.Contains(res.stderr, "8080") {
		t.Errorf("resume mentions the default endpoint:\n%s", res.stderr)
	}
	if m, paths = budgetRun(t, ws); m.Status != store.StatusSuccess || len(paths) != 3 {
		t.Errorf("status %s after %d calls", m.Status, len(paths))
	}
	later := f.Requests()[sent:]
	if len(later) == 0 {
		t.Fatal("the resumed run sent nothing to the run's endpoint")
	}
	for _, r := range later {
		if r.Body["model"] != "fake-model" {
			t.Errorf("resumed request for model %v", r.Body["model"])
		}
		if a := r.Header.Get("Authorization"); strings.Contains(a, hostileKey) {
			t.Errorf("the key went to an endpoint read from the workspace's record: %q", a)
		}
	}
	if !strings.Contains(res.stderr, "the API key is not sent to "+f.BaseURL()) {
		t.Errorf("no note about the withheld key:\n%s", res.stderr)
	}
}

// TestRecordedEndpointGivesWayToFlags: on resume, a flag or an environment
// variable beats the run's recorded endpoint, which beats the deployment.
func TestRecordedEndpointGivesWayToFlags(t *testing.T) {
	rec := recordedEndpoint{runID: "run-20260101-120000", provider: "openai-responses", apiBase: "http://127.0.0.1:9001/v1", model: "m-rec"}
	for _, tc := range []struct {
		name                      string
		flags                     commonFlags
		env                       map[string]string
		provider, base, model, at string
	}{
		{"the record", commonFlags{recordedEndpoint: rec}, nil, "openai-responses", "http://127.0.0.1:9001/v1", "m-rec", "run run-20260101-120000"},
		{"a flag", commonFlags{recordedEndpoint: rec, baseURL: "http://127.0.0.1:7000/v1", model: "m-flag"}, nil, "openai-responses", "http://127.0.0.1:7000/v1", "m-flag", "--base-url"},
		{"the environment", commonFlags{recordedEndpoint: rec}, map[string]string{"GUILDHALL_BASE_URL": "http://127.0.0.1:7001/v1"}, "openai-responses", "http://127.0.0.1:7001/v1", "m-rec", "GUILDHALL_BASE_URL"},
		{"the original's variable", commonFlags{recordedEndpoint: rec}, map[string]string{"ORCHESTRATOR_API_BASE": "http://127.0.0.1:7002/v1"}, "openai-responses", "http://127.0.0.1:7002/v1", "m-rec", "ORCHESTRATOR_API_BASE"},
		{"no record", commonFlags{}, nil, "openai", "http://127.0.0.1:8080/v1", "", "the built-in defaults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GUILDHALL_PROVIDER", "GUILDHALL_BASE_URL", "GUILDHALL_MODEL", "ORCHESTRATOR_API_BASE", "ORCHESTRATOR_MODEL"} {
				t.Setenv(k, tc.env[k])
			}
			d := runner.DefaultDeployment()
			if err := tc.flags.override(d); err != nil {
				t.Fatal(err)
			}
			if d.Model.Provider != tc.provider || d.Model.APIBase != tc.base || d.Model.Name != tc.model {
				t.Errorf("got %s %s %s", d.Model.Provider, d.Model.APIBase, d.Model.Name)
			}
			if got := d.Origin("model.apiBase"); got != tc.at && tc.at != "the built-in defaults" {
				t.Errorf("origin %q, want %q", got, tc.at)
			}
		})
	}
}

// TestScriptedRunsRecordNoEndpointToResume: a scripted run's script is
// not recorded, so resume does not take "script" from the record.
func TestScriptedRunsRecordNoEndpointToResume(t *testing.T) {
	if got := endpointOf(&store.Meta{RunID: "run-x", Provider: "script"}); got != (recordedEndpoint{}) {
		t.Errorf("scripted: %+v", got)
	}
	if got := endpointOf(&store.Meta{RunID: "run-x", Provider: "openai"}); got != (recordedEndpoint{}) {
		t.Errorf("no address: %+v", got)
	}
}
