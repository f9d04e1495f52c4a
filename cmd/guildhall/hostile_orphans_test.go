package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// pidAlive reports whether pid is a live (not zombie) process.
func pidAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// readPID waits for a pid file the server writes.
func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s was never written: the server did not start", path)
	return 0
}

// With --sandbox none, the operator's unconfined MCP server ignores the
// end of its stdin and hangs up, and starts a child that leaves its
// session. Guildhall is killed with SIGKILL while it waits for the
// server: the server and its child are gone within a few seconds.
func TestHostileUnconfinedServerDiesWithGuildhall(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("orphans")
	pids := filepath.Join(h.root, "pids")
	mkdirs(t, pids)
	script := `trap '' HUP TERM INT; ` +
		`setsid sh -c 'trap "" HUP TERM INT; echo $$ > ` + filepath.Join(pids, "child") + `; exec sleep 300' < /dev/null > /dev/null 2>&1 & ` +
		`echo $$ > ` + filepath.Join(pids, "server") + `; exec sleep 301 < /dev/null`
	// The operator's MCP args expand ${VAR}, and $$ is a literal $.
	arg := strings.ReplaceAll(script, "$$", "$$$$")
	h.write(filepath.Join(h.home, ".config", "guildhall", "deployment.json"), `{"mcpServers": {
		"t": {"command": "sh", "args": ["-c", `+jsonString(arg)+`], "sandbox": {"mode": "none"}}}}`, 0o600)
	guild := h.roleGuild(filepath.Join(h.root, "guild"), "solo", "[role:solo] Use the tools.", "t.*", "finish")
	f := fakellm.New()
	defer f.Close()
	f.Queue("solo", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})

	cmd := exec.Command(h.bin, "run", "--workspace", ws, "--guild", guild, "--base-url", f.BaseURL(),
		"--model", "fake-model", "--no-input", "--sandbox", "none", "go")
	cmd.Dir = ws
	cmd.Env = h.env()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	server, child := readPID(t, filepath.Join(pids, "server")), readPID(t, filepath.Join(pids, "child"))
	t.Cleanup(func() {
		_ = syscall.Kill(server, syscall.SIGKILL)
		_ = syscall.Kill(child, syscall.SIGKILL)
	})
	if !pidAlive(server) || !pidAlive(child) {
		t.Fatal("the server or its child is not running before Guildhall is killed")
	}
	_ = cmd.Process.Kill()
	<-done
	deadline := time.Now().Add(5 * time.Second)
	for (pidAlive(server) || pidAlive(child)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pidAlive(server) {
		t.Errorf("the unconfined server (%d) outlived a kill -9 of Guildhall", server)
	}
	if pidAlive(child) {
		t.Errorf("the server's session-escaped child (%d) outlived a kill -9 of Guildhall", child)
	}
}
