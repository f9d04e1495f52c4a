package runner

import (
	"strings"
	"testing"
)

func TestDeploymentLoggingLevel(t *testing.T) {
	d, err := ParseDeployment("d.json", []byte(`{"logging": {"level": "standard"}}`))
	if err != nil || d.Logging.Level != "standard" || d.Origin("logging.level") != "d.json" {
		t.Fatalf("logging.level: %+v %v", d.Logging, err)
	}
	for json, want := range map[string]string{
		`{"logging": {"level": "verbose"}}`:   `logging.level "verbose" is not one of full, standard`,
		`{"logging": {"levels": "full"}}`:     `did you mean "level"?`,
		`{"logging": {"colour": "on"}}`:       `unknown key "colour" in deployment.logging`,
		`{"logging": {"level": "full"}, "x"}`: "invalid JSON",
	} {
		if _, err := ParseDeployment("d.json", []byte(json)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", json, err, want)
		}
	}
}

// TestMaxTokensWaitsForTheWindow: without a configured window the check
// waits for the probe; with one, it is immediate.
func TestMaxTokensWaitsForTheWindow(t *testing.T) {
	d, err := ParseDeployment("d.json", []byte(`{"model": {"generation": {"maxTokens": 65536}}}`))
	if err != nil {
		t.Fatalf("maxTokens without a configured window must wait for the probe: %v", err)
	}
	err = d.CheckGenerationFits()
	if err == nil || !strings.Contains(err.Error(), "d.json: model.generation.maxTokens 65536 leaves no room") || !strings.Contains(err.Error(), "the built-in default") {
		t.Fatalf("with the default window: %v", err)
	}
	d.Model.ContextWindow = 131072 // as a probe reports it
	if err := d.CheckGenerationFits(); err != nil {
		t.Fatalf("a probed window of 131072 fits 65536: %v", err)
	}
	if _, err := ParseDeployment("d.json", []byte(`{"model": {"contextWindow": 8192, "generation": {"maxTokens": 8192}}}`)); err == nil {
		t.Fatal("a configured window smaller than maxTokens is refused at once")
	}
}

func TestOriginalEnvOverrides(t *testing.T) {
	base, err := ParseDeployment("deployment/deployment.json", []byte(`{"model": {"apiBase": "http://file/v1"}, "executor": {"interruptTriggers": {"handlerRole": "loop_detector", "everyToolCalls": 12, "everyTokens": 30000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ORCHESTRATOR_MODEL": "qwen", "ORCHESTRATOR_API_BASE": "http://env/v1", "ORCHESTRATOR_MODEL_CONTEXT_WINDOW": "65536",
		"ORCHESTRATOR_TEMPERATURE": "0.7", "ORCHESTRATOR_MAX_TOKENS": "8192", "ORCHESTRATOR_MAX_AGENT_DEPTH": "4",
		"ORCHESTRATOR_TOOL_TIMEOUT_SECONDS": "60", "ORCHESTRATOR_MAX_COMPACTION_ATTEMPTS": "2",
		"ORCHESTRATOR_CONTEXT_PRESSURE_THRESHOLD": "0.6", "ORCHESTRATOR_CONTEXT_HANDLER_ROLE": "context_manager",
		"ORCHESTRATOR_INQUIRY_HANDLER_ROLE": "inquiry_responder", "ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS": "20",
		"ORCHESTRATOR_INTERRUPT_PLAN_OWNER_ROLE": "planner", "ORCHESTRATOR_MAX_TOOL_OUTPUT_CHARS": "9000",
		"ORCHESTRATOR_INTERRUPT_EVERY_TOKENS": "",
	}
	d := base.clone()
	if err := d.ApplyOriginalEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	m, e := d.Model, d.Executor
	if m.Name != "qwen" || m.APIBase != "http://env/v1" || m.ContextWindow != 65536 || *m.Generation.Temperature != 0.7 || m.Generation.MaxTokens != 8192 ||
		e.MaxAgentDepth != 4 || e.DefaultToolTimeoutSeconds != 60 || e.MaxCompactionAttempts != 2 || e.ContextPressureThreshold != 0.6 ||
		e.ContextHandlerRole != "context_manager" || e.InquiryHandlerRole != "inquiry_responder" || d.ContextPolicy.MaxToolOutputChars != 9000 {
		t.Fatalf("overrides not applied: %+v %+v", m, e)
	}
	if it := e.InterruptTriggers; it.HandlerRole != "loop_detector" || it.EveryToolCalls != 20 || it.EveryTokens != 30000 || it.PlanOwnerRole != "planner" {
		t.Fatalf("interruptTriggers merge per field; an empty variable is unset: %+v", it)
	}
	if d.Origin("model.apiBase") != "ORCHESTRATOR_API_BASE" || d.Origin("executor.interruptTriggers.everyTokens") != "deployment/deployment.json" {
		t.Fatalf("origins: %v", d.SetBy)
	}
	if base.Executor.InterruptTriggers.EveryToolCalls != 12 {
		t.Fatal("the base deployment was changed")
	}

	bad := []struct{ name, value, want string }{
		{"ORCHESTRATOR_MAX_TOKENS", "1e3", "ORCHESTRATOR_MAX_TOKENS=\"1e3\": must be a positive integer"},
		{"ORCHESTRATOR_MAX_AGENT_DEPTH", " 4", "plain digits"},
		{"ORCHESTRATOR_MODEL_CONTEXT_WINDOW", "0x1a", "plain digits"},
		{"ORCHESTRATOR_MAX_TOOL_OUTPUT_CHARS", "0", "positive integer"},
		{"ORCHESTRATOR_TEMPERATURE", "NaN", "finite number"},
		{"ORCHESTRATOR_CONTEXT_PRESSURE_THRESHOLD", "1", "between 0 and 1"},
	}
	for _, b := range bad {
		if err := base.clone().ApplyOriginalEnv(func(k string) string {
			if k == b.name {
				return b.value
			}
			return ""
		}); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s=%q: %v, want %q", b.name, b.value, err, b.want)
		}
	}

	// A cadence the file does not have needs its three required fields.
	plain, _ := ParseDeployment("d.json", []byte(`{}`))
	partial := map[string]string{"ORCHESTRATOR_INTERRUPT_HANDLER_ROLE": "loop_detector", "ORCHESTRATOR_INTERRUPT_EVERY_TOOL_CALLS": "5"}
	if err := plain.clone().ApplyOriginalEnv(func(k string) string { return partial[k] }); err == nil || !strings.Contains(err.Error(), "ORCHESTRATOR_INTERRUPT_EVERY_TOKENS is not set") {
		t.Fatalf("a partial cadence: %v", err)
	}
	partial["ORCHESTRATOR_INTERRUPT_EVERY_TOKENS"] = "1000"
	d = plain.clone()
	if err := d.ApplyOriginalEnv(func(k string) string { return partial[k] }); err != nil || d.Executor.InterruptTriggers == nil || d.Executor.InterruptTriggers.EveryTokens != 1000 {
		t.Fatalf("a whole cadence from the environment: %+v %v", d.Executor.InterruptTriggers, err)
	}
}

// TestHandlerRolesByOrigin: a default handler role the guild lacks is
// dropped; one a file or the environment named is an error naming it.
func TestHandlerRolesByOrigin(t *testing.T) {
	g := testGuild(t)
	d := DefaultDeployment()
	d.FitToGuild(g)
	if err := d.CheckAgainstGuild(g); err != nil || d.Executor.ContextHandlerRole != "" {
		t.Fatalf("defaults fitted: %v %q", err, d.Executor.ContextHandlerRole)
	}
	d = DefaultDeployment()
	if err := d.ApplyOriginalEnv(func(k string) string {
		if k == "ORCHESTRATOR_INQUIRY_HANDLER_ROLE" {
			return "oracle"
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	d.FitToGuild(g)
	err := d.CheckAgainstGuild(g)
	if err == nil || !strings.HasPrefix(err.Error(), `ORCHESTRATOR_INQUIRY_HANDLER_ROLE: executor.inquiryHandlerRole names role "oracle"`) {
		t.Fatalf("a handler role from the environment: %v", err)
	}
}

// TestDeploymentTheme: theme is auto, dark or light; anything else is an
// error at its position naming the value and the allowed ones.
func TestDeploymentTheme(t *testing.T) {
	for body, want := range map[string]string{
		`{"theme": "light"}`: ThemeLight,
		`{"theme": "dark"}`:  ThemeDark,
		`{"theme": "auto"}`:  ThemeAuto,
		`{}`:                 "",
	} {
		d, err := ParseDeployment("d.json", []byte(body))
		if err != nil || d.Theme != want {
			t.Errorf("%s: theme %q, %v; want %q", body, d.Theme, err, want)
		}
	}
	for body, want := range map[string]string{
		`{"theme": "solarized"}`: `d.json:1:11: theme "solarized" is not one of auto (the default), dark, light`,
		`{"theme": "Light"}`:     `theme "Light" is not one of auto (the default), dark, light`,
		`{"theme": true}`:        "theme",
		`{"theme": {"bg": "x"}}`: "theme",
		`{"themes": "light"}`:    `did you mean "theme"?`,
	} {
		if _, err := ParseDeployment("d.json", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
