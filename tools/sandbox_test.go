package tools

// The hostile-workspace suite of the sandbox, at the level the model sees:
// every attempt is a run_shell call whose failure must come back as a
// normal tool result (an exit status and stderr), with the host
// unchanged. Each attempt is run once more with the sandbox off (mode
// none) as a control: the attempt must work there, or the test proves
// nothing. Real bubblewrap; CI installs it.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/egresstest"
	"github.com/guildhall/guildhall/internal/gobuild"
	"github.com/guildhall/guildhall/internal/proctest"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// hostileBase is a folder outside /tmp (which the sandbox replaces with
// its own), so that what a command writes beside the workspace would land
// on the host: the package folder holds it while the test runs.
func hostileBase(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(wd, ".sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// confined opens a sandbox with cfg on the workspace.
func confined(t *testing.T, ws *Workspace, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	return confinedWith(t, ws, sandbox.Options{}, cfg)
}

func confinedWith(t *testing.T, ws *Workspace, o sandbox.Options, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	p, err := sandbox.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Policy, o.Workspace = p, ws.canon
	sb, err := sandbox.NewHost().Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// hostileWS makes a workspace with .orchestration (as a run has it) in a
// fresh base folder, and returns it with an outside folder beside it.
func hostileWS(t *testing.T) (ws *Workspace, dir, outside string) {
	t.Helper()
	base := hostileBase(t)
	dir, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(dir, ".orchestration", "runs"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, ws.canon, outside
}

// shellResult runs run_shell and insists on a normal result.
func shellResult(t *testing.T, env *Env, command string) map[string]any {
	t.Helper()
	r := call(t, env, "run_shell", map[string]any{"command": command, "timeoutSeconds": 15})
	if r.Failed() {
		t.Fatalf("%q: not a normal result: %s: %s", command, r.Kind, r.Message)
	}
	return data(t, r)
}

func exitOf(d map[string]any) int { return int(d["exitCode"].(float64)) }

// tree records every file and folder under dir with its content and mode.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s", strings.TrimPrefix(p, dir), fi.Mode())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", target)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSandboxConfinesWrites tries every way a command writes outside the
// workspace: builtin redirections (the interpreter's own, run in the
// helper), here-documents, .., cd, symbolic links planted in the workspace
// or made by the command, and external programs.
func TestSandboxConfinesWrites(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, outside := hostileWS(t)
	mustSymlink(t, outside, filepath.Join(dir, "planted"))
	cases := []struct{ name, command string }{
		{"builtin redirect", "echo x > $OUT/a"},
		{"builtin append", "echo x >> $OUT/notes.txt"},
		{"here-document into a file", "cat > $OUT/h <<EOF\nx\nEOF"},
		{"builtin here-document", "while read -r l; do echo \"$l\"; done >> $OUT/notes.txt <<EOF\nx\nEOF"},
		{"dot-dot", "echo x > ../outside/dd"},
		{"cd then write", "cd $OUT && echo x > f"},
		{"cd .. then write", "cd .. && echo x > outside/up"},
		{"planted symlink", "echo x > planted/s"},
		{"symlink made by the command", "ln -s $OUT made && echo x > made/m"},
		{"touch", "touch $OUT/t"},
		{"cp", "cp /etc/hostname $OUT/c"},
		{"sh -c", "export OUT; sh -c 'echo x > \"$OUT\"/s'"},
		{"mkdir", "mkdir $OUT/d"},
		{"rm", "rm $OUT/notes.txt"},
		{"chmod", "chmod 777 $OUT/notes.txt"},
		{"mv out", "mv $OUT/notes.txt stolen"},
		{"system file", "echo x >> /etc/hostname"},
	}
	before := tree(t, outside)
	sb := confined(t, ws, sandbox.Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command := "OUT=" + outside + "; " + c.command
			env := testEnv(ws)
			env.Sandbox = sb
			d := shellResult(t, env, command)
			if exitOf(d) == 0 {
				t.Errorf("confined: exit 0 (stdout %q, stderr %q)", d["stdout"], d["stderr"])
			}
			if now := tree(t, outside); now != before {
				t.Fatalf("confined: the outside folder changed:\n%s\nwas\n%s", now, before)
			}
			// The control: without the sandbox the same command works.
			d = shellResult(t, testEnv(ws), command)
			if now := tree(t, outside); now == before && c.name != "system file" {
				t.Errorf("unconfined control changed nothing (exit %v, stderr %q): the attempt is not real", d["exitCode"], d["stderr"])
			}
			resetOutside(t, outside)
			_ = os.Remove(filepath.Join(dir, "made"))
			_ = os.Remove(filepath.Join(dir, "stolen"))
		})
	}
}

// resetOutside puts the outside folder back as hostileWS made it.
func resetOutside(t *testing.T, outside string) {
	t.Helper()
	if err := os.RemoveAll(outside); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxWritesTheWorkspace checks what must keep working: writes in
// the workspace, HOME and /tmp (the sandbox's own), and the read-only
// mode, where the workspace takes no writes either.
func TestSandboxWritesTheWorkspace(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, _ := hostileWS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	d := shellResult(t, env, "echo built > out.txt && mkdir -p sub && cd sub && echo deep > f && cd .. && "+
		"echo h > $HOME/h && cat $HOME/h && echo t > /tmp/t && cat /tmp/t && echo $TMPDIR && cat out.txt")
	if exitOf(d) != 0 || d["stdout"] != "h\nt\n/tmp\nbuilt\n" {
		t.Fatalf("%v", d)
	}
	if got := readString(t, filepath.Join(dir, "sub", "f")); got != "deep\n" {
		t.Errorf("sub/f holds %q", got)
	}
	// HOME and /tmp persist across the run's calls.
	if d := shellResult(t, env, "cat $HOME/h /tmp/t"); d["stdout"] != "h\nt\n" {
		t.Errorf("second call: %v", d)
	}
	env.Sandbox = confined(t, ws, sandbox.Config{Mode: "read-only"})
	d = shellResult(t, env, "echo x > ro.txt; touch ro2; echo h > $HOME/h && cat $HOME/h")
	if d["stdout"] != "h\n" || !strings.Contains(strings.ToLower(d["stderr"].(string)), "read-only file system") {
		t.Errorf("read-only mode: %v", d)
	}
	for _, f := range []string{"ro.txt", "ro2"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("read-only mode wrote %s", f)
		}
	}
}

// TestSandboxHidesSecrets plants what a hostile workspace is after: a
// private key in the real HOME, another process's environment, the
// records in .orchestration and the repository's hooks and config.
func TestSandboxHidesSecrets(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, outside := hostileWS(t)
	home := filepath.Join(outside, "home")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("FAKE-HOME-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	// Guildhall's own state and configuration, outside HOME.
	state, config := filepath.Join(outside, "state"), filepath.Join(outside, "config")
	for _, d := range []string{state, config} {
		if err := os.MkdirAll(filepath.Join(d, "guildhall"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "guildhall", "records.key"), []byte("STATE-SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", config)
	if err := os.WriteFile(filepath.Join(dir, ".orchestration", "queue.json"), []byte(`{"items":["ORCH-SECRET"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gitInitHost(t, dir)
	hookBefore := tree(t, filepath.Join(dir, ".git"))

	// A process outside the sandbox holding a secret in its environment.
	secretProc := exec.Command("sleep", "60")
	secretProc.Env = []string{"GUILDHALL_TEST_ENV_SECRET=ENV-SECRET-9f1"}
	if err := secretProc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secretProc.Process.Kill(); _ = secretProc.Wait() })
	pid := strconv.Itoa(secretProc.Process.Pid)

	cases := []struct{ name, command, secret string }{
		{"HOME by variable", "cat $HOME/.ssh/id_ed25519", "FAKE-HOME-SECRET"},
		{"HOME by path", "cat " + home + "/.ssh/id_ed25519", "FAKE-HOME-SECRET"},
		{"HOME listing", "ls -a " + home + "/.ssh", "id_ed25519"},
		{"HOME by builtin", "while read -r l; do echo \"$l\"; done < " + home + "/.ssh/id_ed25519", "FAKE-HOME-SECRET"},
		{"environ by pid", "cat /proc/" + pid + "/environ", "ENV-SECRET"},
		{"environ by scan", "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep SECRET", "ENV-SECRET"},
		{"cmdline by scan", "ls /proc | grep -x " + pid, pid},
		{"Guildhall's state", "cat " + state + "/guildhall/records.key", "STATE-SECRET"},
		{"Guildhall's configuration", "cat " + config + "/guildhall/records.key", "STATE-SECRET"},
		{"orchestration read", "cat .orchestration/queue.json", "ORCH-SECRET"},
		// Root-readable host secrets: the password hashes are there on
		// every Linux (root reads them unconfined).
		{"password hashes", "cat /etc/shadow", "root:"},
		{"orchestration list", "ls .orchestration", "queue.json"},
	}
	sb := confined(t, ws, sandbox.Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "password hashes" && os.Geteuid() != 0 {
				t.Skip("only root reads them, confined or not")
			}
			env := testEnv(ws)
			env.Sandbox = sb
			d := shellResult(t, env, c.command)
			if out := fmt.Sprint(d["stdout"], d["stderr"]); strings.Contains(out, c.secret) {
				t.Errorf("confined: the secret came through: %v", d)
			}
			d = shellResult(t, testEnv(ws), c.command)
			if !strings.Contains(d["stdout"].(string), c.secret) {
				t.Errorf("unconfined control did not find the secret (%v): the attempt is not real", d)
			}
		})
	}
	writes := []struct{ name, command, check string }{
		{"git hook", "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"git config by builtin", "echo '[core] hooksPath = .' >> .git/config", ".git/config"},
		{"git config by git", "git config core.fsmonitor 'touch /tmp/pwned'", ".git/config"},
		{"git replaced", "rm -rf .git; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"orchestration write", "echo '{\"items\":[]}' > .orchestration/queue.json", ".orchestration/queue.json"},
		{"orchestration plant", "mkdir -p .orchestration/runs/run-20990101-000000 && echo planted > .orchestration/runs/run-20990101-000000/state.json", ".orchestration/runs/run-20990101-000000"},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			env := testEnv(ws)
			env.Sandbox = sb
			orchBefore := tree(t, filepath.Join(dir, ".orchestration"))
			d := shellResult(t, env, w.command)
			if exitOf(d) == 0 {
				t.Errorf("confined: exit 0: %v", d)
			}
			if now := tree(t, filepath.Join(dir, ".git")); now != hookBefore {
				t.Errorf("confined: .git changed:\n%s", now)
			}
			if now := tree(t, filepath.Join(dir, ".orchestration")); now != orchBefore {
				t.Errorf("confined: .orchestration changed:\n%s", now)
			}
			if _, err := os.Stat("/tmp/pwned"); err == nil {
				t.Error("a hook ran")
			}
		})
	}
}

// gitInitHost makes a repository in dir, outside any sandbox, with a
// sample hook folder.
func gitInitHost(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxRestartsWhenGitAppears: in a workspace without .git no
// command can make one (git init, mkdir .git, a planted config); git_init
// can, and from then on the shell sees the new .git read-only, because
// the helper is restarted with it mounted so. Closing the sandbox leaves
// no placeholder behind.
func TestSandboxRestartsWhenGitAppears(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, _ := hostileWS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	for _, cmd := range []string{
		"git init -q . && git config core.fsmonitor 'touch /tmp/pwned' && echo made",
		"rm -f .git; mkdir .git && echo made",
		"mv .git elsewhere; git init -q . && echo made",
		"GIT_DIR=.git git init -q && echo made",
	} {
		d := shellResult(t, env, cmd)
		if exitOf(d) == 0 || strings.Contains(d["stdout"].(string), "made") {
			t.Errorf("%q made a repository: %v", cmd, d)
		}
		if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Size() > 0) {
			t.Fatalf("%q left a .git on the host: %v", cmd, fi.Mode())
		}
	}
	// git_init writes .git in a sandbox of its own, and the git tools that
	// only read get it read-only.
	if r := call(t, env, "git_init", map[string]any{}); r.Failed() {
		t.Fatalf("git_init: %s", r.Message)
	}
	d := shellResult(t, env, "mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit")
	if exitOf(d) == 0 {
		t.Errorf("wrote a hook into the .git git_init made: %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the hook exists")
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := call(t, env, "git_commit", map[string]any{"message": "first"}); r.Failed() {
		t.Errorf("git_commit: %s", r.Message)
	}
	if r := call(t, env, "git_uncommitted_changes", map[string]any{}); r.Failed() {
		t.Errorf("git_uncommitted_changes: %s", r.Message)
	}
}

// The .git placeholder of a workspace without one is gone from the host
// once the sandbox closes, and a second sandbox on the same workspace
// keeps its own protection while the first closes.
func TestSandboxGitPlaceholderLeavesNothing(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, _ := hostileWS(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	first := confined(t, ws, sandbox.Config{})
	second := confined(t, ws, sandbox.Config{})
	env1, env2 := testEnv(ws), testEnv(ws)
	env1.Sandbox, env2.Sandbox = first, second
	shellResult(t, env1, "true")
	shellResult(t, env2, "true")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		t.Errorf("the placeholder went while a second sandbox used it: %v", err)
	}
	if d := shellResult(t, env2, "git init -q . && echo made"); strings.Contains(d["stdout"].(string), "made") {
		t.Errorf("the second sandbox made a repository after the first closed: %v", d)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		t.Errorf("a .git (%v, %d bytes) is left on the host", fi.Mode(), fi.Size())
	}
}

// TestSandboxNetworkIsOff tries the host's loopback (TCP), a DNS server
// on it, DNS as configured, and every Unix socket on the host.
func TestSandboxNetworkIsOff(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, _ := hostileWS(t)
	probe := buildProbe(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dns := fakeDNS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	cases := []struct{ name, command string }{
		{"host loopback TCP", probe + " tcp " + l.Addr().String()},
		{"DNS server on the host", probe + " dns " + dns + " guildhall.test"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := shellResult(t, env, c.command)
			if exitOf(d) == 0 || strings.Contains(d["stdout"].(string), "OK ") {
				t.Errorf("confined: %v", d)
			}
			if d := shellResult(t, testEnv(ws), c.command); exitOf(d) != 0 {
				t.Errorf("unconfined control failed (%v): the attempt is not real", d)
			}
		})
	}
	// No control for these: unconfined they would leave the machine.
	for _, command := range []string{"getent hosts example.com", probe + " lookup example.com", probe + " tcp 1.1.1.1:53"} {
		if d := shellResult(t, env, command); exitOf(d) == 0 {
			t.Errorf("%q worked in the sandbox: %v", command, d)
		}
	}
}

// fakeDNS answers every UDP query on the host's loopback with 192.0.2.1,
// and returns its address.
func fakeDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			q := buf[:n]
			end := 12
			for end < n && q[end] != 0 {
				end += int(q[end]) + 1
			}
			end += 5 // the root label, QTYPE, QCLASS
			if end > n {
				continue
			}
			resp := append([]byte{}, q[:end]...)
			resp[2], resp[3] = 0x81, 0x80       // a response, recursion available
			resp[6], resp[7] = 0, 0             // answers
			if q[end-4] == 0 && q[end-3] == 1 { // type A
				resp[7] = 1
				resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1)
			}
			_, _ = pc.WriteTo(resp, addr)
		}
	}()
	return pc.LocalAddr().String()
}

// probe is tools/sandbox/testdata/probe, built once per test process;
// TestMain removes it.
var probe = gobuild.New("github.com/guildhall/guildhall/tools/sandbox/testdata/probe", "probe")

// buildProbe copies the probe into dir, which the sandbox can see.
func buildProbe(t *testing.T, dir string) string {
	t.Helper()
	return probe.CopyTo(t, dir)
}

// TestSandboxUnixSockets scans the host for socket files (everything but
// /proc and /sys) and the abstract sockets it has, and tries each from
// inside: a read-only mount does not stop connect(), so every one must be
// out of sight. Canary sockets in the places the sandbox hides (/tmp,
// HOME, /run's kind of folder, the abstract namespace) make the control.
func TestSandboxUnixSockets(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, outside := hostileWS(t)
	probe := buildProbe(t, dir)
	home := filepath.Join(outside, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	canaries := []string{filepath.Join(t.TempDir(), "canary.sock"), filepath.Join(home, "agent.sock")}
	for _, p := range canaries {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go acceptAll(l)
	}
	abstract := fmt.Sprintf("guildhall-canary-%d", os.Getpid())
	al, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	go acceptAll(al)

	sockets := hostSockets(t)
	for _, c := range canaries {
		found := false
		for _, s := range sockets {
			found = found || s == c
		}
		if !found {
			t.Fatalf("the scan missed the canary %s", c)
		}
	}
	list := filepath.Join(dir, "sockets.txt")
	if err := os.WriteFile(list, []byte(strings.Join(sockets, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{Network: "allowlist"})
	d := shellResult(t, env, probe+" unix -f sockets.txt; "+probe+" abstract "+strings.Join(append(abstractSockets(t), abstract), " "))
	for _, line := range strings.Split(d["stdout"].(string), "\n") {
		if strings.HasPrefix(line, "OK ") {
			t.Errorf("a host socket is reachable from the sandbox: %s", line)
		}
	}
	if !strings.Contains(d["stdout"].(string), fmt.Sprintf("TRIED %d\n", len(sockets))) {
		t.Errorf("not every socket was tried: %v", d)
	}
	t.Logf("%d host sockets tried", len(sockets))
	// The control: the canaries answer a command outside the sandbox.
	d = shellResult(t, testEnv(ws), probe+" unix "+strings.Join(canaries, " ")+"; "+probe+" abstract "+abstract)
	if strings.Count(d["stdout"].(string), "OK ") != len(canaries)+1 {
		t.Errorf("unconfined control: %v", d)
	}
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// hostSockets lists every socket file on the host outside /proc and /sys.
func hostSockets(t *testing.T) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir("/", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (p == "/proc" || p == "/sys") {
			return filepath.SkipDir
		}
		if d.Type()&os.ModeSocket != 0 {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// abstractSockets lists the host's abstract Unix socket names.
func abstractSockets(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 8 && strings.HasPrefix(f[7], "@") && !seen[f[7]] && !strings.ContainsAny(f[7], "\x00 ") {
			seen[f[7]] = true
			out = append(out, strings.TrimPrefix(f[7], "@"))
		}
	}
	return out
}

// TestSandboxRootHasNoPower: the sandbox runs as root when Guildhall
// does (as here and in CI), yet has no capabilities, cannot remount, make
// a user namespace of its own, or write what is mounted read-only.
func TestSandboxRootHasNoPower(t *testing.T) {
	sandboxtest.Need(t)
	ws, _, _ := hostileWS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	d := shellResult(t, env, "grep CapEff /proc/self/status; id -u")
	if !strings.Contains(d["stdout"].(string), "CapEff:\t0000000000000000") {
		t.Errorf("capabilities: %v", d)
	}
	for _, command := range []string{
		"mount -o remount,rw /",
		"mount -t tmpfs none " + ws.canon + "/.orchestration",
		"umount " + ws.canon + "/.orchestration",
		"unshare -U -r true",
		"unshare -m true",
		"chroot / true",
		// Host-wide kernel settings: writing back the current value would
		// still be a write.
		"cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness",
		"sh -c 'cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness'",
		"echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
		"mkdir /sys/fs/cgroup/guildhall-escape || mkdir /sys/fs/cgroup/pids/guildhall-escape",
		"hostname evil",
		"mknod dev0 c 1 3",
		"chown 1234 " + ws.canon,
	} {
		if d := shellResult(t, env, command); exitOf(d) == 0 {
			t.Errorf("%q worked: %v", command, d)
		}
	}
}

// TestSandboxKillsEveryProcess: a daemon that leaves its session and
// process group (setsid -f, a double fork, nohup) is gone when the call
// ends, found by the PID namespace rather than by a group.
func TestSandboxKillsEveryProcess(t *testing.T) {
	sandboxtest.Need(t)
	ws, _, _ := hostileWS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	mark := fmt.Sprintf("guildhall-mark-%d", os.Getpid())

	// Each parent waits until its child left, so that the escape does not
	// depend on winning a race with the group kill.
	d := shellResult(t, env, "sh -c 'setsid -f sh -c \"sleep 300; : "+mark+"-a\"; sleep 0.2'; "+
		"sh -c '(setsid sh -c \"(sleep 300; : "+mark+"-b) &\" &) ; sleep 0.2'; "+
		"sh -c 'nohup setsid sh -c \"sleep 300; : "+mark+"-c\" >/dev/null 2>&1 & sleep 0.2'; "+
		"ps -eo args | grep -v grep | grep -c "+mark)
	if n, _ := strconv.Atoi(strings.TrimSpace(d["stdout"].(string))); n < 3 {
		t.Fatalf("the daemons did not start: %v", d)
	}
	proctest.WaitNoneMatching(t, mark, 5*time.Second)
	// The sandbox itself still serves the next call.
	if d := shellResult(t, env, "echo alive"); d["stdout"] != "alive\n" {
		t.Errorf("next call: %v", d)
	}
}

// TestSandboxEnvironment: the allowlisted environment only, with HOME and
// TMPDIR the sandbox's, and no provider key even when the operator names
// it.
func TestSandboxEnvironment(t *testing.T) {
	sandboxtest.Need(t)
	ws, _, _ := hostileWS(t)
	t.Setenv("OPENAI_API_KEY", "leak-openai")
	t.Setenv("GITHUB_PAT", "leak-pat")
	t.Setenv("KEEP_ME", "kept")
	env := testEnv(ws)
	env.PassEnv = []string{"KEEP_ME", "OPENAI_API_KEY"}
	env.Sandbox = confined(t, ws, sandbox.Config{})
	d := shellResult(t, env, "env; cat /proc/1/environ /proc/2/environ 2>/dev/null | tr '\\0' '\\n'")
	out := d["stdout"].(string)
	if strings.Contains(out, "leak-") || !strings.Contains(out, "KEEP_ME=kept") || !strings.Contains(out, "TMPDIR=/tmp") {
		t.Errorf("environment: %s", out)
	}
	if strings.Contains(out, "HTTP_PROXY") {
		t.Errorf("a proxy with the network off: %s", out)
	}
}

// TestSandboxTimeoutsAndCancellation: a timed-out or cancelled command
// is a normal result, its processes are gone, and the sandbox serves the
// next call; so does a command that kills the sandbox's own shell.
func TestSandboxTimeoutsAndCancellation(t *testing.T) {
	sandboxtest.Need(t)
	ws, _, _ := hostileWS(t)
	env := testEnv(ws)
	env.Sandbox = confined(t, ws, sandbox.Config{})
	r := call(t, env, "run_shell", map[string]any{"command": "echo before; sleep 30", "timeoutSeconds": 0.5})
	if r.Kind != KindTimeout || !strings.Contains(r.Details.(procResult).Stdout, "before") {
		t.Errorf("timeout: %+v", r)
	}
	r = call(t, env, "run_shell", map[string]any{"command": "echo before; while :; do :; done", "timeoutSeconds": 0.5})
	if r.Kind != KindTimeout {
		t.Errorf("builtin loop: %+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	r = runShell{}.Call(ctx, env, json.RawMessage(`{"command":"sleep 30"}`))
	cancel()
	if r.Kind != KindError || !strings.Contains(r.Message, "cancelled") || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled: %+v after %s", r, time.Since(start))
	}
	// The helper is the sandbox's PID 1: the kernel does not deliver a
	// SIGKILL sent from inside its namespace, so a command cannot end it.
	d := shellResult(t, env, "sh -c 'kill -KILL 1'; echo survived")
	if exitOf(d) != 0 || d["stdout"] != "survived\n" {
		t.Errorf("a command killed the helper: %v", d)
	}
	if d := shellResult(t, env, "echo again"); d["stdout"] != "again\n" {
		t.Errorf("after the shell was killed: %v", d)
	}
}

// TestSandboxAllowlist: with network allowlist, a program inside reaches
// allowlisted hosts through the proxy (an address, and a name the test
// maps to a local server through the proxy's resolver and dialer), over
// HTTP and HTTPS; anything else is refused with a 403 that says how to
// allow it, and every attempt is an egress decision naming the role.
func TestSandboxAllowlist(t *testing.T) {
	sandboxtest.Need(t)
	ws, dir, _ := hostileWS(t)
	probe := buildProbe(t, dir)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain answered %s for %s", r.URL.Path, r.Host)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure answered %s", r.URL.Path)
	}))
	defer secure.Close()
	plainAddr, secureAddr := plain.Listener.Addr().String(), secure.Listener.Addr().String()
	_, plainPort, _ := net.SplitHostPort(plainAddr)

	var mu sync.Mutex
	var seen []string
	opts := sandbox.Options{
		OnEgress: func(d egress.Decision, c sandbox.Caller) {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s:%d allowed=%v role=%s/%s reason=%q", d.Host, d.Port, d.Allowed, c.Role, c.RoleID, d.Reason))
			mu.Unlock()
		},
		// registry.test is a public name to the proxy; its address leads
		// to the plain test server.
		Resolver: egresstest.Resolver{"registry.test": {"93.184.216.34"}},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "93.184.216.34:"+plainPort {
				addr = plainAddr
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	env := testEnv(ws)
	env.Role, env.RoleID = "coder", "coder-1-2"
	env.Sandbox = confinedWith(t, ws, opts, sandbox.Config{Network: "allowlist", Allow: []string{plainAddr, secureAddr, "registry.test"}})
	d := shellResult(t, env, probe+" http http://"+plainAddr+"/ok https://"+secureAddr+"/tls http://registry.test:"+plainPort+"/pkg")
	out := d["stdout"].(string)
	for _, want := range []string{"plain answered /ok", "secure answered /tls", "plain answered /pkg for registry.test"} {
		if !strings.Contains(out, want) {
			t.Errorf("allowed fetch lacks %q: %v", want, d)
		}
	}
	d = shellResult(t, env, probe+" http http://denied.test/x; "+probe+" http https://denied.test/; "+
		probe+" http http://127.0.0.1:1/; "+probe+" tcp "+plainAddr+"; env | grep -i _proxy=")
	out = d["stdout"].(string)
	if strings.Contains(out, "OK ") {
		t.Errorf("a denied fetch worked: %v", d)
	}
	if !strings.Contains(out, "denied.test (port 80) is not on the network allowlist") || !strings.Contains(out, "sandbox.allow in deployment.json") {
		t.Errorf("the refusal does not say why or how to allow it: %s", out)
	}
	if !strings.Contains(out, "HTTPS_PROXY=http://127.0.0.1:") || !strings.Contains(out, "https_proxy=http://127.0.0.1:") {
		t.Errorf("proxy variables: %s", out)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	for _, want := range []string{
		"127.0.0.1:" + plainPort + " allowed=true role=coder/coder-1-2",
		"registry.test:" + plainPort + " allowed=true role=coder/coder-1-2",
		"denied.test:80 allowed=false role=coder/coder-1-2 reason=\"not on the sandbox's network allowlist\"",
		"denied.test:443 allowed=false role=coder/coder-1-2",
		"127.0.0.1:1 allowed=false",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("egress decisions lack %q:\n%s", want, got)
		}
	}
}
