package main

// The hostile-repository suite: every test here plays an attacker who ships
// a repository (or an archive) that the operator clones and opens in
// Guildhall. Each runs the real binary and asserts the four things the
// operator relies on:
//
//   - nothing ran: a marker file outside the workspace stays absent;
//   - nothing leaked: a header-logging loopback server never sees the key;
//   - nothing outside changed: files outside the workspace keep their
//     checksums and modes;
//   - the operator got a clear message.
//
// Fixtures are built by the tests (symbolic links, hard links and git
// repositories cannot be committed portably); the static parts live in
// testdata/hostile/.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/treesum"
)

// hostileKey is the operator's API key in every hostile test. It is long
// and unusual so that a leak anywhere (a header, a body, a file) is found
// by a plain substring search.
const hostileKey = "sk-operator-SECRET-5f0c1e77a9b24d6e8e21"

var (
	hostileBinOnce sync.Once
	hostileBin     string
	hostileBinErr  error
)

// hostileBinary builds guildhall once per test binary run.
func hostileBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	hostileBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guildhall-hostile-bin-")
		if err != nil {
			hostileBinErr = err
			return
		}
		hostileBin = filepath.Join(dir, "guildhall")
		out, err := exec.Command("go", "build", "-o", hostileBin, ".").CombinedOutput()
		if err != nil {
			hostileBinErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if hostileBinErr != nil {
		t.Fatal(hostileBinErr)
	}
	return hostileBin
}

// hostile is one attacker scenario: a fresh operator (HOME and XDG
// folders), the operator's key in the environment, a folder of files
// outside the workspace that must not change, a marker path that must never
// exist, and a loopback server that logs everything it receives.
type hostile struct {
	t       *testing.T
	bin     string
	root    string // everything of this test
	home    string // the operator's HOME
	outside string // files outside the workspace; see sums
	marker  string // must never be created
	sums    map[string]string

	keyServer *keyLog
}

// newHostile sets up a scenario. The outside folder holds a plain file, an
// executable, a fake private key in HOME and a fake git repository's files,
// all checksummed.
func newHostile(t *testing.T) *hostile {
	t.Helper()
	bin := hostileBinary(t)
	root := t.TempDir()
	h := &hostile{t: t, bin: bin, root: root,
		home:    filepath.Join(root, "home"),
		outside: filepath.Join(root, "outside"),
		marker:  filepath.Join(root, "outside-marker"),
	}
	for _, d := range []string{h.home, h.outside, filepath.Join(h.home, ".ssh"),
		filepath.Join(h.home, ".config"), filepath.Join(h.home, ".local", "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h.write(filepath.Join(h.outside, "notes.txt"), "outside notes\n", 0o644)
	h.write(filepath.Join(h.outside, "tool.sh"), "#!/bin/sh\necho outside tool\n", 0o755)
	h.write(filepath.Join(h.home, ".ssh", "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-HOME-SECRET\n", 0o600)
	h.keyServer = newKeyLog(t)
	h.snapshot()
	return h
}

func (h *hostile) write(path, content string, mode os.FileMode) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		h.t.Fatal(err)
	}
}

// mkdirs makes dir and its parents, 0755.
func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// workspace makes an empty workspace folder named name.
func (h *hostile) workspace(name string) string {
	h.t.Helper()
	dir := filepath.Join(h.root, "ws", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// roleGuild writes at dir a guild whose one role, role, has prompt (in
// prompts/ROLE.md) and holds tools, and returns dir.
func (h *hostile) roleGuild(dir, role, prompt string, tools ...string) string {
	h.t.Helper()
	h.write(filepath.Join(dir, "prompts", role+".md"), prompt+"\n", 0o644)
	b, err := json.Marshal(map[string]any{"entryRole": role, "roles": map[string]any{
		role: map[string]any{"systemPrompt": "prompts/" + role + ".md", "tools": tools}}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.write(filepath.Join(dir, "guild.json"), string(b), 0o644)
	return dir
}

// protect adds a file outside the workspace to the checksummed set (call
// snapshot again after adding files).
func (h *hostile) snapshot() {
	h.t.Helper()
	h.sums = checksums(h.t, h.outside, h.home)
}

// env is the environment the binary runs with: the operator's HOME and
// XDG folders, the key, PATH, and extra.
func (h *hostile) env(extra ...string) []string {
	env := []string{
		"HOME=" + h.home,
		"XDG_CONFIG_HOME=" + filepath.Join(h.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(h.home, ".local", "state"),
		"PATH=" + os.Getenv("PATH"),
		"OPENAI_API_KEY=" + hostileKey,
		"ANTHROPIC_API_KEY=" + hostileKey,
		"TERM=dumb",
		"LANG=C.UTF-8",
	}
	// The go command's caches, so a workspace test that runs go works.
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if v := os.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && os.Getenv("GOCACHE") == "" {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(out)))
	}
	return append(env, extra...)
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// run runs the binary in dir with args, standard input closed, for at most
// timeout (60 s when zero).
func (h *hostile) run(dir string, timeout time.Duration, args ...string) result {
	h.t.Helper()
	return h.runEnv(dir, timeout, nil, args...)
}

func (h *hostile) runEnv(dir string, timeout time.Duration, extraEnv []string, args ...string) result {
	h.t.Helper()
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Dir = dir
	cmd.Env = h.env(extraEnv...)
	res := runCmd(h.t, cmd)
	if ctx.Err() != nil {
		h.t.Fatalf("run %v did not finish within %s\n%s", args, timeout, res)
	}
	return res
}

// runCmd runs cmd and returns what it printed and its exit status. An
// error other than the command's own exit fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args[1:], err)
	}
	return res
}

// assertSafe checks the three invariants every hostile test ends with.
func (h *hostile) assertSafe() {
	h.t.Helper()
	h.assertNothingRan()
	h.assertNoLeak()
	h.assertOutsideUnchanged()
}

// assertNothingRan checks that the marker outside the workspace is absent.
func (h *hostile) assertNothingRan() {
	h.t.Helper()
	if _, err := os.Lstat(h.marker); err == nil {
		b, _ := os.ReadFile(h.marker)
		h.t.Errorf("a workspace-chosen command ran: %s exists (%q)", h.marker, b)
	}
}

// assertNoLeak checks that the key server never received the key.
func (h *hostile) assertNoLeak() {
	h.t.Helper()
	for _, r := range h.keyServer.requests() {
		if strings.Contains(r, hostileKey) {
			h.t.Errorf("the operator's key reached the attacker's server:\n%s", r)
		}
	}
}

// assertOutsideUnchanged checks the checksums taken by snapshot.
func (h *hostile) assertOutsideUnchanged() {
	h.t.Helper()
	now := checksums(h.t, h.outside, h.home)
	for p, sum := range h.sums {
		if now[p] != sum {
			h.t.Errorf("%s changed outside the workspace: %s → %s", p, sum, now[p])
		}
	}
	for p := range now {
		if _, ok := h.sums[p]; !ok && !h.operatorState(p) {
			h.t.Errorf("%s appeared outside the workspace", p)
		}
	}
}

// operatorState reports whether p is Guildhall's own operator state (the
// records key, trust decisions) or its cache (the sandbox's per-workspace
// build caches, which sandboxed commands write by design), which it may
// create in HOME.
func (h *hostile) operatorState(p string) bool {
	for _, own := range []string{filepath.Join(h.home, ".local", "state", "guildhall"), filepath.Join(h.home, ".cache", "guildhall")} {
		if p == own || strings.HasPrefix(p, own+string(filepath.Separator)) {
			return true
		}
	}
	return p == filepath.Join(h.home, ".cache")
}

// checksums hashes every file under the roots, with its mode; folders and
// links are recorded by mode and target.
func checksums(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	sums, err := treesum.Of(roots...)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// keyLog is a loopback server that records every request it gets (line,
// headers and body) and answers like an OpenAI-compatible endpoint that
// lists one model and refuses chats, so a client that reaches it goes no
// further.
type keyLog struct {
	*httptest.Server
	mu  sync.Mutex
	log []string
}

func newKeyLog(t *testing.T) *keyLog {
	k := &keyLog{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		for name, vs := range r.Header {
			for _, v := range vs {
				fmt.Fprintf(&b, "%s: %s\n", name, v)
			}
		}
		b.Write(body)
		k.mu.Lock()
		k.log = append(k.log, b.String())
		k.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"attacker-model","object":"model"}]}`)
			return
		}
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(k.Close)
	return k
}

// requests returns every request received so far.
func (k *keyLog) requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.log...)
}

// BaseURL is the server's OpenAI-style base URL.
func (k *keyLog) BaseURL() string { return k.URL + "/v1" }
