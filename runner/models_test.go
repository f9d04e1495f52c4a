package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

func TestDeploymentModelsSection(t *testing.T) {
	d, err := ParseDeployment("dep.json", []byte(`{
  "model": {"apiBase": "http://127.0.0.1:8080/v1", "name": "qwen-32b", "provider": "openai", "generation": {"temperature": 0.3}},
  "models": {"fast": {"apiBase": "http://127.0.0.1:8081/v1", "name": "qwen-7b", "contextWindow": 16384,
                      "price": {"input": 0.1, "output": 0.2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := d.ModelFor("fast")
	if m.APIBase != "http://127.0.0.1:8081/v1" || m.Name != "qwen-7b" || m.ContextWindow != 16384 || m.Provider != "openai" ||
		m.Generation.Temperature == nil || *m.Generation.Temperature != 0.3 || m.Price == nil || m.Price.Output != 0.2 {
		t.Fatalf("ModelFor(fast) = %+v: it keeps its own endpoint, name, window and price and takes the provider and temperature from model", m)
	}
	if got := d.ModelFor(""); got.Name != "qwen-32b" {
		t.Fatalf("ModelFor(\"\") = %+v, want the model block", got)
	}
	if d.ModelOrigin("fast", "apiBase") != "dep.json" || d.ModelOrigin("fast", "provider") != "dep.json" {
		t.Fatalf("origins: apiBase %q provider %q", d.ModelOrigin("fast", "apiBase"), d.ModelOrigin("fast", "provider"))
	}
	if r := d.OutputReserveFor("fast"); r != 4096 {
		t.Fatalf("a 16k window keeps a quarter, capped at 4096, for the reply; got %d", r)
	}

	for json, want := range map[string]string{
		`{"models": {"fast": {"apibase": "http://x/v1"}}}`:                                 `dep.json:1:22: unknown key "apibase" in deployment.models.fast; did you mean "apiBase"?`,
		`{"models": {"fast": {"provider": "ollama"}}}`:                                     `models.fast.provider "ollama" is not one of`,
		`{"models": {"fast": {"provider": "script"}}}`:                                     `models.fast.provider "script": the scripted demo model is only the model block's`,
		`{"models": {"fast": {"contextWindow": -1}}}`:                                      `models.fast.contextWindow must be a positive number of tokens`,
		`{"models": {"fast": {"price": {"input": -1, "output": 1}}}}`:                      `models.fast.price: prices are per million tokens`,
		`{"models": {"fast": {"contextWindow": 4096, "generation": {"maxTokens": 4096}}}}`: `models.fast.generation.maxTokens must be positive and smaller than models.fast.contextWindow`,
		`{"models": {"fast model": {"name": "x"}}}`:                                        `models: "fast model" is not a model name`,
		`{"models": {"fast": {"apiKey": "sk-1"}}}`:                                         `"apiKey" looks like a credential`,
		`{"models": {"fast": "http://x/v1"}}`:                                              `deployment.models.fast must be a JSON object`,
	} {
		_, err := ParseDeployment("dep.json", []byte(json))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %q", json, err, want)
		}
	}
}

// TestLaterFileReplacesANamedModelWhole: the operator's fast model's
// settings do not linger under the workspace's fast model, nor their
// origins (which decide where a key goes).
func TestLaterFileReplacesANamedModelWhole(t *testing.T) {
	op, err := ParseDeployment("op.json", []byte(`{"models": {"fast": {"apiBase": "http://op/v1", "contextWindow": 8192}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := ParseDeploymentOnto(op, "ws.json", []byte(`{"models": {"fast": {"name": "other"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := ws.ModelFor("fast")
	if m.APIBase != ws.Model.APIBase || m.ContextWindow != 0 || m.Name != "other" {
		t.Fatalf("replaced model = %+v", m)
	}
	if o := ws.Origin("models.fast.apiBase"); o != "" {
		t.Fatalf("models.fast.apiBase origin %q survived the replacement", o)
	}
	if op.ModelFor("fast").APIBase != "http://op/v1" {
		t.Fatal("layering changed the base deployment")
	}
}

func TestRoleModelIsCheckedAgainstTheDeployment(t *testing.T) {
	fsys := fstest.MapFS{
		"guild.json": {Data: []byte(`{"entryRole": "lead", "roles": {
			"lead": {"systemPrompt": "p.md", "tools": ["finish"]},
			"coder": {"systemPrompt": "p.md", "tools": ["finish"], "model": "fast"}}}`)},
		"p.md": {Data: []byte("prompt")},
	}
	g, err := LoadGuild(fsys, "myguild")
	if err != nil {
		t.Fatal(err)
	}
	if g.RoleModel("coder") != "fast" || g.RoleModel("lead") != "" {
		t.Fatalf("role models: coder %q lead %q", g.RoleModel("coder"), g.RoleModel("lead"))
	}
	d, _ := ParseDeployment("dep.json", []byte(`{"models": {"big": {"name": "qwen-32b"}}}`))
	err = d.CheckAgainstGuild(g)
	if err == nil || !strings.Contains(err.Error(), `myguild: role "coder" names model "fast", which the deployment (dep.json) does not define in models (it defines big)`) {
		t.Fatalf("unknown model: %v", err)
	}
	d, _ = ParseDeployment("dep.json", []byte(`{"models": {"fast": {"name": "qwen-7b"}}}`))
	if err := d.CheckAgainstGuild(g); err != nil {
		t.Fatalf("a defined model: %v", err)
	}

	fsys["guild.json"] = &fstest.MapFile{Data: []byte(`{"entryRole": "lead", "roles": {"lead": {"systemPrompt": "p.md", "tools": ["finish"], "model": "../x"}}}`)}
	if _, err := LoadGuild(fsys, "myguild"); err == nil || !strings.Contains(err.Error(), `role "lead": model "../x" is not a model name`) {
		t.Fatalf("bad model name: %v", err)
	}
}

// twoEndpointSession opens a session whose coder runs on the named model
// fast at b, and the rest on the model block at a.
func twoEndpointSession(t *testing.T, a, b *fakellm.Server, health ProviderHealth) (*Session, string) {
	t.Helper()
	g, err := LoadGuild(os.DirFS("testdata/original"), "testdata/original")
	if err != nil {
		t.Fatal(err)
	}
	g.Roles["coder"].Model = "fast"
	d := DefaultDeployment()
	d.FitToGuild(g)
	d.Executor.ProviderHealth = health
	d.Model.APIBase, d.Model.Name = a.BaseURL(), "big-model"
	d.Models = map[string]ModelConfig{"fast": {APIBase: b.BaseURL(), Name: "small-model"}}
	pa := provider.NewOpenAIChat(provider.Config{BaseURL: a.BaseURL(), Model: "big-model", RequestTimeout: 2 * time.Second})
	pb := provider.NewOpenAIChat(provider.Config{BaseURL: b.BaseURL(), Model: "small-model", RequestTimeout: 2 * time.Second})
	dir := t.TempDir()
	s := openSession(t, SessionConfig{Workspace: dir, Guild: g, Deployment: d, Provider: pa, NoInput: true,
		EndpointAnswered: true, Models: map[string]ModelEndpoint{"fast": {Provider: pb, Answered: true}}})
	return s, dir
}

func TestEachRoleCallsItsOwnEndpoint(t *testing.T) {
	a, b := fakellm.New(), fakellm.New()
	defer a.Close()
	defer b.Close()
	queueSimpleRun(a)
	queueSimpleRun(b)
	s, dir := twoEndpointSession(t, a, b, ProviderHealth{})
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := s.Wait(ctx); err != nil || out.Status != store.StatusSuccess {
		t.Fatalf("outcome %+v %v", out, err)
	}
	for _, q := range a.Requests() {
		// The run's summaries (no role marker) go to the model block.
		if q.Role != "" && q.Role != "orchestrator" {
			t.Errorf("endpoint A got a %s call; only the orchestrator runs there", q.Role)
		}
	}
	for _, q := range b.Requests() {
		if q.Role != "coder" {
			t.Errorf("endpoint B got a %q call; only the coder runs there", q.Role)
		}
		if q.Body["model"] != "small-model" {
			t.Errorf("the coder's call asked for model %v, want small-model", q.Body["model"])
		}
	}
	if len(a.RequestsFor("orchestrator")) != 2 || len(b.RequestsFor("coder")) != 1 {
		t.Fatalf("calls: orchestrator at A %d (want 2), coder at B %d (want 1)", len(a.RequestsFor("orchestrator")), len(b.RequestsFor("coder")))
	}
	models := map[string]string{}
	for _, e := range find(readEvents(t, testWS(dir), id), event.RoleStart) {
		var p event.RoleStartPayload
		_ = e.Decode(&p)
		models[p.Role] = p.Model + "/" + p.ModelRef
	}
	if models["orchestrator"] != "big-model/" || models["coder"] != "small-model/fast" {
		t.Fatalf("role_start models = %v", models)
	}
}

// TestSuspensionNamesTheEndpointThatIsDown: the coder's endpoint goes
// down; the run suspends naming it, the other endpoint's health stays ok,
// and the run goes on once it is back.
func TestSuspensionNamesTheEndpointThatIsDown(t *testing.T) {
	a, b := fakellm.New(), fakellm.New()
	defer a.Close()
	defer b.Close()
	queueSimpleRun(a)
	queueSimpleRun(b)
	b.SetDown(true)
	s, dir := twoEndpointSession(t, a, b, ProviderHealth{Retries: 2, SuspendAfter: 2, ProbeSeconds: 1})
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.Health().State != HealthSuspended {
		if time.Now().After(deadline) {
			t.Fatalf("never suspended: %+v", s.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h := s.Health(); h.Model != "fast" || h.SuspendedRunID != id {
		t.Fatalf("health while suspended = %+v, want the fast model's", h)
	}
	if h := s.health.Snapshot(); h.State != HealthOK {
		t.Fatalf("endpoint A's health = %+v; it never failed", h)
	}
	meta, _ := testWS(dir).ReadMeta(id)
	if meta.Suspension == nil || meta.Suspension.Model != "fast" || !strings.Contains(meta.Suspension.Message, "The model endpoint fast ("+b.BaseURL()+")") {
		t.Fatalf("suspension = %+v, want it to name the fast model's endpoint", meta.Suspension)
	}
	b.SetDown(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := s.Wait(ctx); err != nil || out.Status != store.StatusSuccess {
		t.Fatalf("outcome after the outage = %+v %v", out, err)
	}
}

func TestARunNeedsAnEndpointForEachRoleModel(t *testing.T) {
	g := testGuild(t)
	g.Roles["coder"].Model = "fast"
	h := newHarness(t, g, nil)
	h.opts.Deployment.Models = map[string]ModelConfig{"fast": {Name: "x"}}
	if _, err := Create(h.opts); err == nil || !strings.Contains(err.Error(), `role "coder" runs on model "fast", and this run was given no endpoint for it`) {
		t.Fatalf("create without the fast endpoint: %v", err)
	}
}

// TestEachModelLearnsItsOwnCeiling: a prompt the small model's endpoint
// rejected as too long lowers that model's budget, not the big model's.
func TestEachModelLearnsItsOwnCeiling(t *testing.T) {
	g := testGuild(t)
	g.Roles["coder"].Model = "fast"
	d := DefaultDeployment()
	d.Model.ContextWindow = 32768
	d.Models = map[string]ModelConfig{"fast": {ContextWindow: 8192}}
	r := &Run{opts: Options{Guild: g, Deployment: d, Models: map[string]ModelEndpoint{"fast": {}}}}
	big, small := r.effectiveBudget("orchestrator"), r.effectiveBudget("coder")
	if big != 32768-4096 || small != 8192-2048 {
		t.Fatalf("budgets: orchestrator %d, coder %d", big, small)
	}
	r.learn("fast", 5000)
	r.learn("fast", 7000) // a larger rejection teaches nothing new
	if got := r.effectiveBudget("coder"); got != 5000 {
		t.Errorf("coder's budget after a 5000-token rejection = %d", got)
	}
	if got := r.effectiveBudget("orchestrator"); got != big {
		t.Errorf("the orchestrator's budget moved to %d with the coder's rejection", got)
	}
}
