package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/internal/golden"
	"github.com/guildhall/guildhall/store"
)

// noKeys clears every provider key for the test.
func noKeys(t *testing.T) {
	t.Helper()
	for _, n := range secretEnv {
		t.Setenv(n, "")
	}
	for _, n := range []string{"GUILDHALL_BASE_URL", "GUILDHALL_PROVIDER", "GUILDHALL_MODEL"} {
		t.Setenv(n, "")
	}
}

var (
	portPattern  = regexp.MustCompile(`(127\.0\.0\.1:|--port )(\d+)`)
	runIDPattern = regexp.MustCompile(`run-\d{8}-\d{6}`)
)

// ephemeral replaces the loopback ports the test servers were given (the
// kernel's ephemeral range), not the well-known ones a message cites.
func ephemeral(s string) string {
	return portPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := portPattern.FindStringSubmatch(m)
		if n, _ := strconv.Atoi(sub[2]); n >= 20000 {
			return sub[1] + "PORT"
		}
		return m
	})
}

// transcript is a CLI result as a golden file holds it: the exit status,
// stdout and stderr, with loopback ports, run ids and the workspace path
// replaced by stable names.
func endpointTranscript(res cliResult, ws string) []byte {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, ws, "WORKSPACE")
		s = ephemeral(s)
		return runIDPattern.ReplaceAllString(s, "RUN_ID")
	}
	return []byte(fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", res.code, norm(res.stdout), norm(res.stderr)))
}

func runIDs(t *testing.T, ws string) []string {
	t.Helper()
	ids, err := (store.Workspace{Dir: ws}).ListRunIDs()
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return ids
}

// TestEndpointSetupErrorsAtStart: a base URL that is not one, a missing
// key, or an endpoint whose model list does not answer fail at once with
// exit 2 and a message that names the setting or the URL, what was tried
// and the usual causes. Nothing is recorded.
func TestEndpointSetupErrorsAtStart(t *testing.T) {
	noKeys(t)
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"invalid api key BODY-TEXT"}}`)
	}))
	defer unauthorized.Close()
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"closed_port", nil, []string{"--base-url", fakellm.RefusedURL(t)}},
		{"not_a_url", nil, []string{"--base-url", "notaurl"}},
		{"not_http", nil, []string{"--base-url", "ftp://models.example/v1"}},
		{"env_without_scheme", map[string]string{"GUILDHALL_BASE_URL": "localhost:8080/v1"}, nil},
		{"anthropic_without_key", nil, []string{"--provider", "anthropic"}},
		{"openai_without_key", nil, []string{"--base-url", "https://api.openai.com/v1"}},
		{"key_wanted", nil, []string{"--base-url", unauthorized.URL + "/v1"}},
		{"key_refused", map[string]string{"OPENAI_API_KEY": "sk-test-WRONG-KEY"}, []string{"--base-url", unauthorized.URL + "/v1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			ws := t.TempDir()
			args := append([]string{"run", "--workspace", ws, "--guild", testGuild, "--no-input"}, c.args...)
			res := runCLI(t, "", append(args, "Fix the bug")...)
			if res.code != exitUsage {
				t.Fatalf("exit %d, want 2\n%s", res.code, endpointTranscript(res, ws))
			}
			if ids := runIDs(t, ws); len(ids) != 0 {
				t.Errorf("a setup error left runs %v", ids)
			}
			if strings.Contains(res.stderr, "BODY-TEXT") || strings.Contains(res.stderr, "WRONG-KEY") {
				t.Errorf("the message quotes the provider's body or the key:\n%s", res.stderr)
			}
			golden.Check(t, filepath.Join("testdata", "endpoint", c.name+".golden"), endpointTranscript(res, ws))
		})
	}
}

// TestEndpointThatFailsItsFirstCall: the model list answered with an HTTP
// error (no /v1), so the run starts; its first call fails too, and the run
// ends at once (exit 2) with both tries named, recorded as failed and not
// resumable.
func TestEndpointThatFailsItsFirstCall(t *testing.T) {
	noKeys(t)
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	ws := t.TempDir()
	res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--no-input", "--base-url", notFound.URL, "Fix the bug")
	if res.code != exitUsage {
		t.Fatalf("exit %d\n%s", res.code, endpointTranscript(res, ws))
	}
	ids := runIDs(t, ws)
	if len(ids) != 1 {
		t.Fatalf("runs %v", ids)
	}
	m, err := (store.Workspace{Dir: ws}).ReadMeta(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != store.StatusError || m.Error == nil || m.Error.Kind != "endpoint_unreachable" {
		t.Errorf("the run is not marked: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(ws, ".orchestration", "runs", ids[0], "state.json")); !os.IsNotExist(err) {
		t.Error("a checkpoint was left to resume")
	}
	golden.Check(t, filepath.Join("testdata", "endpoint", "first_call_fails.golden"), endpointTranscript(res, ws))
	// Nothing nags about it later.
	again := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--no-input", "--base-url", fakellm.RefusedURL(t), "x")
	if strings.Contains(again.stderr, "stopped before finishing") {
		t.Errorf("the failed start is offered for resume:\n%s", again.stderr)
	}
}

// TestPermanentServerErrorEndsWithAMessage: a server whose model list
// answers while every call fails with HTTP 500 is not retried forever:
// after three relapses the run stops, each failure line carries the
// server's own message, and the last line says what happened.
func TestPermanentServerErrorEndsWithAMessage(t *testing.T) {
	noKeys(t)
	f := fakellm.New()
	defer f.Close()
	for range 20 {
		f.Inject(fakellm.Fault{Status: 500, Body: `{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON","type":"server_error"}}`})
	}
	ws := t.TempDir()
	dep := filepath.Join(t.TempDir(), "deployment.json")
	if err := os.WriteFile(dep, []byte(`{"executor": {"providerHealth": {"retries": 3, "suspendAfter": 3, "probeSeconds": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--deployment", dep, "--no-input", "--base-url", f.BaseURL(), "Fix the bug")
	if res.code != exitError {
		t.Fatalf("exit %d\n%s", res.code, endpointTranscript(res, ws))
	}
	golden.Check(t, filepath.Join("testdata", "endpoint", "permanent_server_error.golden"), endpointTranscript(res, ws))
}

// TestSmallWindowPicksTheCompactSeedGuild: a server that reports an 8k
// window gets the compact seed guild, and says so; at 4k even that is too
// big, and the run's first line says so, with the fix.
func TestSmallWindowPicksTheCompactSeedGuild(t *testing.T) {
	noKeys(t)
	for _, window := range []int{8192, 4096, 32768} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			f.ContextWindow = window
			f.Queue("", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Done."}}}})
			ws := t.TempDir()
			res := runCLI(t, "", "run", "--workspace", ws, "--no-input", "--base-url", f.BaseURL(), "Say hello")
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, endpointTranscript(res, ws))
			}
			m, err := (store.Workspace{Dir: ws}).ReadMeta(runIDs(t, ws)[0])
			if err != nil {
				t.Fatal(err)
			}
			want := "seed-compact"
			if window >= 16384 {
				want = "seed"
			}
			if m.GuildPath != want {
				t.Errorf("guild %q, want %q", m.GuildPath, want)
			}
			first := f.Requests()[0] // the orchestrator's call; a summary follows
			if got, want := first.Body["max_tokens"], float64(min(4096, window/4)); got != want {
				t.Errorf("max_tokens %v, want %v (a quarter of the window)", got, want)
			}
			golden.Check(t, filepath.Join("testdata", "endpoint", fmt.Sprintf("window_%d.golden", window)), endpointTranscript(res, ws))
		})
	}
}

// TestQueueRunHoldsOnAnEndpointThatFailsItsFirstCall: queue run against a
// server without /v1 tries the first item once, puts it back at the head,
// leaves the rest alone and exits 2 with the setup message.
func TestQueueRunHoldsOnAnEndpointThatFailsItsFirstCall(t *testing.T) {
	noKeys(t)
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	ws := t.TempDir()
	for _, task := range []string{"first task", "second task"} {
		if res := runCLI(t, "", "queue", "add", "--workspace", ws, task); res.code != 0 {
			t.Fatalf("queue add: %+v", res)
		}
	}
	res := runCLI(t, "", "queue", "run", "--workspace", ws, "--guild", testGuild, "--no-input", "--base-url", notFound.URL)
	if res.code != exitUsage || !strings.Contains(res.stderr, "never answered") || !strings.Contains(res.stderr, "The queue holds until the endpoint answers") {
		t.Fatalf("exit %d\n%s", res.code, endpointTranscript(res, ws))
	}
	ls := runCLI(t, "", "queue", "ls", "--workspace", ws)
	if strings.Count(ls.stdout, "waiting") != 2 || strings.Contains(ls.stdout, "error") {
		t.Errorf("after the hold:\n%s", ls.stdout)
	}
	if ids := runIDs(t, ws); len(ids) != 1 {
		t.Errorf("runs %v: only the first item was tried", ids)
	}
}
