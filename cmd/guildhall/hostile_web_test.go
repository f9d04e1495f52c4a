package main

// The loopback API is a door (issue 13, point 5): a daemon that a
// workspace script left running shares the operator's host. It reads
// Guildhall's command line from /proc, finds the port and tries to answer
// the pending question ("May I force-push?") over the loopback API. These
// tests are that daemon, against the real binary.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attackerAnswer is what the daemon tries to make the operator's answer.
const attackerAnswer = "ATTACKER: yes, force-push to main and delete the tags"

// consoleProcess is a running `guildhall demo --headless --web` and what
// it printed.
type consoleProcess struct {
	cmd     *exec.Cmd
	url     string // the printed URL, token and all
	stderr  *bytes.Buffer
	stderrC chan struct{} // closed when stderr ends
}

// freePort finds a loopback port to put on the command line, as an
// operator who types `--web 127.0.0.1:8765` does.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startConsole starts the demo with the browser console on port, in ws,
// with runtime as XDG_RUNTIME_DIR, and waits for the printed URL.
func (h *hostile) startConsole(ws, port, runtime string) *consoleProcess {
	h.t.Helper()
	cmd := exec.Command(h.bin, "demo", "--headless", "--speed", "0.2", "--into", ws, "--web", "127.0.0.1:"+port)
	cmd.Dir = h.root
	cmd.Env = h.env("XDG_RUNTIME_DIR=" + runtime)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	cp := &consoleProcess{cmd: cmd, stderr: &bytes.Buffer{}, stderrC: make(chan struct{})}
	h.t.Cleanup(func() {
		if cp.cmd.ProcessState == nil {
			_ = cp.cmd.Process.Kill()
			_ = cp.cmd.Wait()
		}
	})
	urls := make(chan string, 1)
	go func() {
		defer close(cp.stderrC)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			cp.stderr.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "browser console: "); ok {
				urls <- u
			}
		}
	}()
	select {
	case cp.url = <-urls:
	case <-time.After(60 * time.Second):
		h.t.Fatal("the binary never printed the browser console URL")
	}
	return cp
}

// do sends one request, with the token when tok is not "".
func do(t *testing.T, method, url, tok, body string, dress func(*http.Request)) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if dress != nil {
		dress(req)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, b
}

// firstVisit GETs the printed URL without following the redirect.
func firstVisit(t *testing.T, url string) *http.Response {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// rawRequest writes req as is on a fresh connection to addr and returns
// the status line, for requests net/http would not send (no Host, an
// absolute URI, HTTP/1.0).
func rawRequest(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestHostileDaemonCannotAnswerOverLoopback: the daemon finds the port on
// Guildhall's command line, but not the token, and no request it can make
// without the token answers the question, reads it, or starts a run. The
// operator's real token then answers it, so the refusals are not a broken
// server.
func TestHostileDaemonCannotAnswerOverLoopback(t *testing.T) {
	h := newHostile(t)
	ws := filepath.Join(h.root, "ws", "demo")
	runtime := filepath.Join(h.root, "runtime")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	cp := h.startConsole(ws, freePort(t), runtime)
	base, tok, ok := strings.Cut(cp.url, "?token=")
	if !ok || len(tok) != 64 || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("printed URL %q carries no token", cp.url)
	}

	// ---- the daemon ----
	pid := cp.cmd.Process.Pid
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"command line": cmdline, "environment": environ} {
		if bytes.Contains(b, []byte(tok)) || bytes.Contains(bytes.ToUpper(b), []byte(strings.ToUpper(tok[:16]))) {
			t.Fatalf("the token is in the process's %s: %q", what, b)
		}
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	addr := ""
	for i, a := range args {
		if a == "--web" && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	if addr == "" {
		t.Fatalf("no --web on the command line %q", args)
	}
	api := "http://" + addr

	// Wait (as the operator) until the question is pending, so every
	// attempt below is against a live question.
	var qid string
	deadline := time.Now().Add(90 * time.Second)
	for qid == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no question was asked\n%s", cp.stderr)
		}
		code, b := do(t, "GET", api+"/api/questions", tok, "", nil)
		var qs struct {
			Questions []struct {
				ID string `json:"id"`
			} `json:"questions"`
		}
		if code == 200 && json.Unmarshal(b, &qs) == nil && len(qs.Questions) == 1 {
			qid = qs.Questions[0].ID
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The daemon even knows the question id (it is short and guessable);
	// all it lacks is the token.
	answer := fmt.Sprintf(`{"id":%q,"answer":%q}`, qid, attackerAnswer)
	_, port, _ := net.SplitHostPort(addr)
	self := "http://" + addr
	guesses := map[string]func(*http.Request){
		"nothing":        nil,
		"its own origin": func(r *http.Request) { r.Header.Set("Origin", self); r.Header.Set("Sec-Fetch-Site", "same-origin") },
		"localhost":      func(r *http.Request) { r.Host = "localhost:" + port },
		// A loopback name on another port passes the Host check (a port
		// forward looks like this); the token is still missing.
		"localhost on another port": func(r *http.Request) { r.Host = "localhost:19000" },
		"[::1] on another port":     func(r *http.Request) { r.Host = "[::1]:1" },
		"a guessed cookie": func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: "guildhall_token_" + port, Value: strings.Repeat("a", 64)})
		},
		"the port as token": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+port) },
		"the pid as token":  func(r *http.Request) { r.Header.Set("Authorization", fmt.Sprintf("Bearer %d", pid)) },
		"an empty Bearer":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") },
		"a forwarded loopback": func(r *http.Request) {
			r.Header.Set("X-Forwarded-For", "127.0.0.1")
			r.Header.Set("X-Real-IP", "127.0.0.1")
		},
		"a query token":             func(r *http.Request) { r.URL.RawQuery = "token=" + strings.Repeat("0", 64) },
		"the command line as token": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Join(args, " ")) },
	}
	for name, dress := range guesses {
		for _, rt := range []struct{ method, path, body string }{
			{"POST", "/api/answer", answer},
			{"GET", "/api/questions", ""},
			{"GET", "/api/events", ""},
			{"GET", "/api/runs", ""},
			{"POST", "/api/runs", `{"task":"git push --force origin main"}`},
			{"POST", "/api/queue", `{"task":"git push --force origin main"}`},
			{"PUT", "/api/settings", `{"effort":"quick","logLevel":""}`},
			{"GET", "/", ""},
			{"GET", "/static/app.js", ""},
		} {
			code, b := do(t, rt.method, api+rt.path, "", rt.body, dress)
			if code != http.StatusUnauthorized {
				t.Errorf("%s: %s %s answered %d, want 401: %.200s", name, rt.method, rt.path, code, b)
			}
			if bytes.Contains(b, []byte(tok)) || bytes.Contains(b, []byte("Should this run")) {
				t.Errorf("%s: %s %s leaked the token or the question", name, rt.method, rt.path)
			}
		}
	}
	// A rebinding attacker's name, on the console's port or any other, is
	// refused before the token counts: even the right token does not help.
	for _, host := range []string{"evil.example:" + port, "evil.example:19000", "evil.example", "127.0.0.1.evil.example:" + port, "localhost.:" + port} {
		code, b := do(t, "POST", api+"/api/answer", tok, answer, func(r *http.Request) { r.Host = host })
		if code != http.StatusForbidden || !bytes.Contains(b, []byte("forbidden_host")) {
			t.Errorf("Host %s with the token: %d %s, want 403 forbidden_host", host, code, b)
		}
	}
	// A page on another loopback port (Origin) cannot write, token or not.
	for _, origin := range []string{"http://127.0.0.1:19000", "http://localhost:" + port} {
		code, _ := do(t, "POST", api+"/api/answer", tok, answer, func(r *http.Request) { r.Header.Set("Origin", origin) })
		if code != http.StatusForbidden {
			t.Errorf("Origin %s: %d, want 403", origin, code)
		}
	}
	bodyLen := len(answer)
	for name, req := range map[string]string{
		"no Host at all": "POST /api/answer HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(bodyLen) + "\r\n\r\n" + answer,
		"an absolute URI": "POST http://" + addr + "/api/answer HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(bodyLen) + "\r\nConnection: close\r\n\r\n" + answer,
		"a doubled path": "POST //api/answer HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(bodyLen) + "\r\nConnection: close\r\n\r\n" + answer,
		"an encoded path": "POST /api/%61nswer HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: " +
			fmt.Sprint(bodyLen) + "\r\nConnection: close\r\n\r\n" + answer,
	} {
		line := rawRequest(t, addr, req)
		if !strings.Contains(line, " 401 ") && !strings.Contains(line, " 403 ") && !strings.Contains(line, " 400 ") {
			t.Errorf("raw request with %s: %q, want it refused", name, line)
		}
	}

	// The run still waits for the operator, and nothing the daemon sent
	// reached the records.
	code, b := do(t, "GET", api+"/api/questions", tok, "", nil)
	if code != 200 || !bytes.Contains(b, []byte(qid)) {
		t.Fatalf("the question is no longer pending after the attack: %d %s", code, b)
	}
	logs, _ := filepath.Glob(filepath.Join(ws, ".orchestration", "runs", "run-*", "log.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	if raw, _ := os.ReadFile(logs[0]); bytes.Contains(raw, []byte(`"human_answer"`)) || bytes.Contains(raw, []byte("ATTACKER")) {
		t.Fatalf("the attacker's answer reached the log")
	}
	if runs, _ := filepath.Glob(filepath.Join(ws, ".orchestration", "runs", "run-*")); len(runs) != 1 {
		t.Errorf("the attacker started a run: %v", runs)
	}

	// The discovery file is the operator's, and only the operator's.
	files, _ := filepath.Glob(filepath.Join(runtime, "guildhall", "*.json"))
	if len(files) != 1 {
		t.Fatalf("discovery files %v", files)
	}
	if fi, _ := os.Lstat(filepath.Dir(files[0])); fi.Mode().Perm() != 0o700 {
		t.Errorf("discovery folder mode %v", fi.Mode())
	}
	if fi, _ := os.Lstat(files[0]); fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("discovery file mode %v", fi.Mode())
	}
	var rec struct {
		URL, Token, Workspace string
		PID                   int
	}
	canon, _ := filepath.EvalSymlinks(ws)
	if raw, _ := os.ReadFile(files[0]); json.Unmarshal(raw, &rec) != nil || rec.URL != base || rec.Token != tok || rec.PID != pid || rec.Workspace != canon {
		t.Errorf("discovery file %+v, want url %s pid %d workspace %s and the token", rec, base, pid, canon)
	}

	// ---- the operator ----
	// The printed URL lets a browser in: a cookie scoped to the page's
	// random prefix, then the cookie alone under that prefix.
	res := firstVisit(t, cp.url)
	home := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(home, "/s/") || strings.Contains(home, tok) {
		t.Fatalf("the printed URL answered %d Location %q, want 303 to /s/RANDOM/", res.StatusCode, home)
	}
	if cs := res.Cookies(); len(cs) != 1 || cs[0].Path != home || cs[0].Value != tok || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("the first visit's cookie %+v, want HttpOnly, Strict, Path=%s", cs, home)
	}
	code, _ = do(t, "GET", api+home+"api/questions", "", "", func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: "guildhall_token_" + port, Value: tok})
	})
	if code != 200 {
		t.Errorf("the cookie was refused under the prefix: %d", code)
	}
	code, b = do(t, "POST", api+"/api/answer", tok, fmt.Sprintf(`{"id":%q,"answer":"Only fix the failing tests"}`, qid), nil)
	if code != 200 {
		t.Fatalf("the operator's answer was refused: %d %s", code, b)
	}
	deadline = time.Now().Add(2 * time.Minute)
	for {
		code, b := do(t, "GET", api+"/api/run", tok, "", nil)
		var run struct {
			Status string `json:"status"`
		}
		if code == 200 && json.Unmarshal(b, &run) == nil && run.Status == "success" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish after the operator's answer: %d %s\n%s", code, b, cp.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = cp.cmd.Process.Signal(os.Interrupt)
	err = cp.cmd.Wait()
	<-cp.stderrC
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, cp.stderr)
	}

	raw, _ := os.ReadFile(logs[0])
	if !bytes.Contains(raw, []byte(`"answer":"Only fix the failing tests","source":"browser"`)) || bytes.Contains(raw, []byte("ATTACKER")) {
		t.Errorf("the log does not hold the operator's answer alone")
	}
	// The token is in no record, and nowhere in the workspace (the tools
	// the run ran got no copy of it in their environment either).
	_ = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(tok)) {
			t.Errorf("the token is in %s", p)
		}
		return nil
	})
	if _, err := os.ReadFile(filepath.Join(filepath.Dir(logs[0]), "meta.json")); err != nil {
		t.Errorf("meta.json: %v", err) // and the walk above read it
	}
	if files, _ := filepath.Glob(filepath.Join(runtime, "guildhall", "*")); len(files) != 0 {
		t.Errorf("the discovery file outlived the server: %v", files)
	}
	if strings.Count(cp.stderr.String(), tok) != 1 {
		t.Errorf("the token should be printed once, in the URL:\n%s", cp.stderr)
	}
	h.assertSafe()
}

// TestHostileDaemonPlantsTheDiscoveryFolder: the daemon plants a symbolic
// link where the discovery folder goes, to have the token written
// somewhere it can read. Guildhall refuses the folder, says so, writes the
// token nowhere, and the console still works.
func TestHostileDaemonPlantsTheDiscoveryFolder(t *testing.T) {
	h := newHostile(t)
	ws := filepath.Join(h.root, "ws", "demo")
	runtime := filepath.Join(h.root, "runtime")
	loot := filepath.Join(h.root, "loot")
	for _, d := range []string{runtime, loot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(loot, filepath.Join(runtime, "guildhall")); err != nil {
		t.Fatal(err)
	}
	cp := h.startConsole(ws, freePort(t), runtime)
	_, tok, _ := strings.Cut(cp.url, "?token=")
	_ = cp.cmd.Process.Kill()
	_ = cp.cmd.Wait()
	<-cp.stderrC
	if !strings.Contains(cp.stderr.String(), "note: no attach file:") || !strings.Contains(cp.stderr.String(), "symbolic link") {
		t.Errorf("no clear note about the planted folder:\n%s", cp.stderr)
	}
	if entries, _ := os.ReadDir(loot); len(entries) != 0 {
		t.Errorf("something was written through the link: %v", entries)
	}
	if tok == "" {
		t.Error("the console did not start")
	}
	h.assertSafe()
}
