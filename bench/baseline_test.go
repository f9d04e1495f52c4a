package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/guildhall/guildhall/runner"
)

// fakeBaseline is a stand-in for crush and codex: it finds the endpoint
// in the configuration the harness wrote (crush.json under
// XDG_CONFIG_HOME, config.toml under CODEX_HOME), asks it one chat
// completion, does the task, and records what it could see.
const fakeBaseline = `package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
)

func main() {
	var base, model, key string
	switch os.Args[1] {
	case "run": // crush run --quiet TASK
		b, _ := os.ReadFile(os.Getenv("XDG_CONFIG_HOME") + "/crush/crush.json")
		var c struct {
			Providers map[string]struct{ BaseURL, APIKey string } ` + "`json:\"providers\"`" + `
			Models    map[string]struct{ Model string } ` + "`json:\"models\"`" + `
		}
		json.Unmarshal(bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("base_url"), []byte("BaseURL")), []byte("api_key"), []byte("APIKey")), &c)
		base, model, key = c.Providers["guildhall"].BaseURL, c.Models["large"].Model, c.Providers["guildhall"].APIKey
		os.WriteFile("config-seen.txt", b, 0o644)
	case "exec": // codex exec ... TASK: the key is in the variable env_key names
		b, _ := os.ReadFile(os.Getenv("CODEX_HOME") + "/config.toml")
		base = regexp.MustCompile("base_url = \"([^\"]+)\"").FindStringSubmatch(string(b))[1]
		model = regexp.MustCompile("(?m)^model = \"([^\"]+)\"").FindStringSubmatch(string(b))[1]
		key = os.Getenv(regexp.MustCompile("env_key = \"([^\"]+)\"").FindStringSubmatch(string(b))[1])
		os.WriteFile("config-seen.txt", b, 0o644)
	}
	// What a request without the key, with another, or outside the API
	// gets from the relay.
	status := func(method, url, auth string) string {
		req, _ := http.NewRequest(method, url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "error"
		}
		resp.Body.Close()
		return fmt.Sprint(resp.StatusCode)
	}
	probes := fmt.Sprintf("no-key=%s wrong-key=%s outside=%s traversal=%s",
		status("GET", base+"/models", ""), status("GET", base+"/models", "Bearer ghrelay-guess"),
		status("GET", base+"/../admin", "Bearer "+key), status("GET", base+"/%2e%2e/models", "Bearer "+key))
	task := os.Args[len(os.Args)-1]
	body, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{
		{"role": "user", "content": task}, {"role": "assistant", "content": ""}, {"role": "tool", "content": "ran ls"}}})
	req, _ := http.NewRequest("POST", base+"/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "endpoint:", err)
		os.Exit(1)
	}
	reply, _ := io.ReadAll(resp.Body)
	outside := "refused"
	if err := os.WriteFile("/etc/guildhall-baseline-escape", []byte("x"), 0o644); err == nil {
		outside = "WROTE"
	}
	_, keyInEnv := os.LookupEnv("OPENAI_API_KEY")
	home, _ := os.UserHomeDir()
	os.WriteFile("seen.txt", []byte(fmt.Sprintf("key-in-env=%v\noutside=%s\nhome=%s\nprobes: %s\n", keyInEnv, outside, home, probes)), 0o644)
	os.WriteFile("hello.txt", []byte("hello\n"), 0o644)
	fmt.Println("done:", strings.TrimSpace(string(reply)) != "")
}
`

func buildFakeBaseline(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(fakeBaseline), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module fake\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "fake")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the fake baseline: %v\n%s", err, out)
	}
	return exe
}

// TestBaselineRunsThroughItsHeadlessMode runs a fake crush and a fake
// codex, built here, on one task: each reads the configuration the harness
// wrote, reaches the model only through the relay (which adds the key the
// program never sees), works in the same kind of throwaway workspace and
// sandbox, and is validated like a guild.
func TestBaselineRunsThroughItsHeadlessMode(t *testing.T) {
	fake := buildFakeBaseline(t)
	var mu sync.Mutex
	var auths, models []string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		mu.Lock()
		auths, models = append(auths, r.Header.Get("Authorization")), append(models, req.Model)
		mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 321, "completion_tokens": 12}}`)
	}))
	defer endpoint.Close()
	dir := t.TempDir()
	writeBench(t, dir, "greet", map[string]string{"README.md": "say hello\n"},
		`{"taskType": "coding", "description": "Write hello.txt containing hello.", "validation": {"command": "grep -q hello hello.txt", "expectedFiles": ["hello.txt"]}}`, "")
	benches, err := LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	var variants []Variant
	for _, program := range Baselines {
		variants = append(variants, Variant{Name: program, Deployment: runner.DefaultDeployment(), Baseline: &Baseline{
			Program: program, Exe: fake, Endpoint: endpoint.URL + "/v1", Model: "tiny-7b", Key: "test-key"}})
	}
	h := newHarness(t, variants...)
	h.Keep = true
	rep, err := h.Run(context.Background(), dir, benches)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if !r.Pass || r.Status != "success" || r.Error != "" {
			t.Errorf("%s: %+v %+v", r.Variant, r, r.Validation)
			continue
		}
		if r.Tokens != (Tokens{Prompt: 321, Completion: 12, Total: 333}) || r.ModelCalls != 1 || r.ToolCalls != 1 || r.Guild != r.Variant || r.Model != "tiny-7b" {
			t.Errorf("%s counts: %+v", r.Variant, r)
		}
		if !strings.Contains(r.Summary, "done: true") {
			t.Errorf("%s summary %q", r.Variant, r.Summary)
		}
		seen, _ := os.ReadFile(filepath.Join(r.Workspace, "seen.txt"))
		if !strings.Contains(string(seen), "key-in-env=false") || !strings.Contains(string(seen), "outside=refused") {
			t.Errorf("%s saw: %s", r.Variant, seen)
		}
		// The relay refused, without forwarding, what did not carry its
		// token or asked for anything but the API.
		if !strings.Contains(string(seen), "probes: no-key=401 wrong-key=401 outside=404 traversal=404") {
			t.Errorf("%s: the relay let through what it should refuse: %s", r.Variant, seen)
		}
		cfg, _ := os.ReadFile(filepath.Join(r.Workspace, "config-seen.txt"))
		if strings.Contains(string(cfg), "test-key") || !strings.Contains(string(cfg), modelHost) {
			t.Errorf("%s configuration: %s", r.Variant, cfg)
		}
	}
	for i, a := range auths {
		if a != "Bearer test-key" || models[i] != "tiny-7b" {
			t.Errorf("request %d: Authorization %q, model %q", i, a, models[i])
		}
	}
	if len(auths) != 2 {
		t.Errorf("%d requests reached the endpoint, want one per program", len(auths))
	}
	if _, err := os.Stat("/etc/guildhall-baseline-escape"); err == nil {
		t.Error("a baseline wrote outside its workspace")
	}
}

func TestFindBaseline(t *testing.T) {
	if _, err := FindBaseline("aider", "/usr/bin"); err == nil || !strings.Contains(err.Error(), "not one of crush, codex") {
		t.Errorf("unknown program: %v", err)
	}
	if _, err := FindBaseline("crush", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("missing program: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindBaseline("codex", "/nonexistent:"+dir); err != nil || got != filepath.Join(dir, "codex") {
		t.Errorf("FindBaseline = %q, %v", got, err)
	}
	// A script under a hidden folder cannot be copied into the sandbox.
	if _, err := visibleExe(filepath.Join(dir, "codex"), t.TempDir(), "codex"); err == nil || !strings.Contains(err.Error(), "install it system-wide") {
		t.Errorf("a hidden script: %v", err)
	}
	// A compiled program there (this test binary, under the build's
	// temporary folder) is copied whole into the sandbox's bin.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if ScopedPath(filepath.Dir(self)) != "" {
		t.Skipf("the test binary %s is not under a hidden folder", self)
	}
	bin := t.TempDir()
	got, err := visibleExe(self, bin, "crush")
	if err != nil || got != filepath.Join(bin, "crush") {
		t.Fatalf("a hidden executable: %q, %v", got, err)
	}
	want, _ := os.ReadFile(self)
	if copied, _ := os.ReadFile(got); !bytes.Equal(copied, want) {
		t.Errorf("the copy has %d bytes, want the program's %d", len(copied), len(want))
	}
}

func TestRelayCountsStreamedUsage(t *testing.T) {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"
	if got := usageOf([]byte(body)); got != (Tokens{Prompt: 10, Completion: 3, Total: 13}) {
		t.Errorf("chat stream usage %+v", got)
	}
	resp := "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":7,\"output_tokens\":2}}}\n\n"
	if got := usageOf([]byte(resp)); got != (Tokens{Prompt: 7, Completion: 2, Total: 9}) {
		t.Errorf("responses stream usage %+v", got)
	}
	if got := countToolResults(map[string]json.RawMessage{"input": json.RawMessage(`[{"type":"function_call_output"},{"type":"message"},{"type":"function_call_output"}]`)}); got != 2 {
		t.Errorf("responses tool results %d", got)
	}
}
