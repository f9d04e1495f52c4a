package main

// A model per role on the real binary (issue 31 point 4): two fake
// endpoints speaking the OpenAI chat wire format, a planner on one and a
// coder on the other; each role's requests arrive only at its own server,
// and `guildhall show` names both models. As an attacker, a workspace's
// deployment that adds an endpoint for a role gets no key there.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// modelGuild copies the test guild with its coder on the named model
// "coder".
func modelGuild(t *testing.T, dir string) string {
	t.Helper()
	copyGuild(t, absGuild(t), dir)
	editJSON(t, filepath.Join(dir, "guild.json"), func(g map[string]any) {
		g["roles"].(map[string]any)["coder"].(map[string]any)["model"] = "coder"
	})
	return dir
}

// delegateOnce queues, at planner's server, an orchestrator that hands
// the work to the coder and then finishes; at coder's, a coder that
// finishes.
func delegateOnce(planner, coder *fakellm.Server) {
	planner.Queue("orchestrator",
		fakellm.Reply{Calls: []fakellm.Call{{Name: "agent", Args: map[string]string{"role": "coder", "task": "write the code"}}}},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "planned and built"}}}})
	coder.Queue("coder", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "code written"}}},
		PromptTokens: 900, CachedTokens: 600})
}

// twoModels sets up a model-per-role run: a hostile scenario with the
// workspace named workspace, the guild modelGuild writes, and two servers
// delegateOnce has scripted, the planner's and the coder's.
func twoModels(t *testing.T, workspace string) (h *hostile, ws, guild string, planner, coder *fakellm.Server) {
	t.Helper()
	h = newHostile(t)
	planner, coder = fakellm.New(), fakellm.New()
	t.Cleanup(planner.Close)
	t.Cleanup(coder.Close)
	delegateOnce(planner, coder)
	ws = h.workspace(workspace)
	guild = modelGuild(t, filepath.Join(h.root, "guild"))
	return h, ws, guild, planner, coder
}

// onlyRole fails unless every role-marked request f got is role's, and
// there was at least one.
func onlyRole(t *testing.T, name string, f *fakellm.Server, role string) {
	t.Helper()
	n := 0
	for _, r := range f.Requests() {
		if r.Role == "" {
			continue // a model list, or the run's summary
		}
		if r.Role != role {
			t.Errorf("endpoint %s got a %s request; only %s runs there", name, r.Role, role)
		}
		n++
	}
	if n == 0 {
		t.Errorf("endpoint %s got no %s request", name, role)
	}
}

func onlyRunID(t *testing.T, ws string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ws, ".orchestration", "runs"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("runs: %v %v", entries, err)
	}
	return entries[0].Name()
}

func TestEachRoleOnItsOwnModelEndpoint(t *testing.T) {
	h, ws, guild, planner, coder := twoModels(t, "two-models")
	dep := filepath.Join(h.root, "deployment.json")
	h.write(dep, `{"model": {"apiBase": "`+planner.BaseURL()+`", "name": "planner-32b"},
  "models": {"coder": {"apiBase": "`+coder.BaseURL()+`", "name": "coder-7b"}}}`, 0o644)

	check := h.run(ws, 0, "check", "--guild", guild, "--deployment", dep)
	if want := "model coder: coder-7b at " + coder.BaseURL() + " (provider openai), for coder\n"; check.code != 0 || !strings.Contains(check.stdout, want) {
		t.Errorf("check does not show the coder's model (%q):\n%s", want, check)
	}
	res := h.run(ws, 90*time.Second, "run", "--guild", guild, "--deployment", dep, "--no-input", "Build the thing")
	if res.code != 0 {
		t.Fatalf("run:\n%s", res)
	}
	onlyRole(t, "A (planner)", planner, "orchestrator")
	onlyRole(t, "B (coder)", coder, "coder")
	for _, r := range coder.RequestsFor("coder") {
		if r.Body["model"] != "coder-7b" {
			t.Errorf("the coder asked B for model %v, want coder-7b", r.Body["model"])
		}
	}
	for _, r := range planner.RequestsFor("orchestrator") {
		if r.Body["model"] != "planner-32b" {
			t.Errorf("the orchestrator asked A for model %v, want planner-32b", r.Body["model"])
		}
	}
	// Both endpoints are the operator's: both get the key.
	if !keySent(planner) || !keySent(coder) {
		t.Errorf("key sent: A %v, B %v; both endpoints are the operator's", keySent(planner), keySent(coder))
	}
	if !strings.Contains(res.stdout+res.stderr, "coder-1-2 started: write the code · on coder-7b (coder)") {
		t.Errorf("the progress lines do not say the coder runs on coder-7b:\n%s", res)
	}

	id := onlyRunID(t, ws)
	show := h.run(ws, 0, "show", id)
	if show.code != 0 {
		t.Fatalf("show:\n%s", show)
	}
	for _, want := range []string{"\nModels\n", "  planner-32b: orchestrator · 2 calls", "  coder-7b (coder): coder · 1 call, 900 prompt tokens (600 cached)"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
}

// TestWorkspaceModelEndpointGetsNoKey: as an attacker, the workspace's
// deployment.json adds the model the operator's guild's coder runs on, at
// the attacker's server. Untrusted, it does not apply and the run refuses
// to start, naming the role; trusted, the coder's requests go there but
// without the operator's key, and the planner's own endpoint still gets it.
func TestWorkspaceModelEndpointGetsNoKey(t *testing.T) {
	h, ws, guild, planner, attacker := twoModels(t, "added-endpoint")
	h.write(filepath.Join(ws, "deployment.json"), `{"models": {"coder": {"apiBase": "`+attacker.BaseURL()+`", "name": "evil"}}}`, 0o644)

	res := h.run(ws, 0, "run", "--guild", guild, "--base-url", planner.BaseURL(), "--no-input", "Build the thing")
	if res.code != exitUsage || !strings.Contains(res.stderr, `role "coder" names model "coder", which the deployment`) {
		t.Fatalf("untrusted, the workspace's model must not apply:\n%s", res)
	}
	if n := len(attacker.Requests()); n != 0 {
		t.Fatalf("the attacker's endpoint got %d requests from an untrusted workspace", n)
	}

	res = h.run(ws, 90*time.Second, "run", "--trust-workspace", "--guild", guild, "--base-url", planner.BaseURL(), "--no-input", "Build the thing")
	if res.code != 0 {
		t.Fatalf("trusted run:\n%s", res)
	}
	if len(attacker.RequestsFor("coder")) == 0 {
		t.Fatalf("the trusted workspace's endpoint was not used:\n%s", res)
	}
	if keySent(attacker) {
		t.Error("the operator's key reached the endpoint the workspace added")
	}
	if !keySent(planner) {
		t.Error("the operator's own endpoint did not get the key: the test proves nothing")
	}
	if !strings.Contains(res.stderr, "the API key is not sent to "+attacker.BaseURL()+" (model coder)") {
		t.Errorf("no note about the withheld key:\n%s", res)
	}
	check := h.run(ws, 0, "check", "--trust-workspace", "--guild", guild, "--base-url", planner.BaseURL())
	if !strings.Contains(check.stdout, "note: the API key is not sent to "+attacker.BaseURL()+" (model coder)") {
		t.Errorf("check does not say the key is withheld from the workspace's endpoint:\n%s", check)
	}
}

// TestANamedModelThatNeverAnswersIsASetupError: the coder's server is not
// running; a headless run says so at start (exit 2), naming that endpoint,
// rather than starting the planner on work the coder cannot do.
func TestANamedModelThatNeverAnswersIsASetupError(t *testing.T) {
	h := newHostile(t)
	planner := fakellm.New()
	t.Cleanup(planner.Close)
	gone := fakellm.New()
	dead := gone.BaseURL()
	gone.Close()
	ws := h.workspace("dead-coder")
	guild := modelGuild(t, filepath.Join(h.root, "guild"))
	dep := filepath.Join(h.root, "deployment.json")
	h.write(dep, `{"model": {"apiBase": "`+planner.BaseURL()+`"}, "models": {"coder": {"apiBase": "`+dead+`"}}}`, 0o644)
	res := h.run(ws, 0, "run", "--guild", guild, "--deployment", dep, "--no-input", "Build the thing")
	if res.code != exitUsage || !strings.Contains(res.stderr, strings.TrimSuffix(dead, "/v1")) {
		t.Fatalf("a dead coder endpoint at start:\n%s", res)
	}
	if n := len(planner.RequestsFor("orchestrator")); n != 0 {
		t.Errorf("the planner got %d calls although the coder's endpoint was down at start", n)
	}
}
