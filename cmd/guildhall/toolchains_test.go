//go:build linux

package main

// Real projects in the default sandbox (network off), through the real
// binary: the operator's toolchains and dependency caches are mounted
// read-only, so a Go module using a module from the host's cache, a
// Python project with a workspace venv and user-site packages, a Node
// project with node_modules and a Rust crate build and pass their tests
// with run_shell and test; and, as an attacker, a command can read no
// credential store, write no toolchain or operator cache, and reach no
// network, with its result saying how the operator would allow it.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/runner/event"
)

// toolchainCall is one scripted call and the result it gave.
type toolchainCall struct {
	tool, command string
	exit          float64
	out           string // stdout and stderr
}

// buildRun runs `guildhall run --json` in ws with a solo role that runs
// each command with run_shell and then all of them with test, under an
// operator deployment giving commands two minutes (a cold build cache on
// a busy machine), with extraEnv added to the operator's environment.
func (h *hostile) buildRun(ws string, extraEnv []string, commands ...string) (result, []toolchainCall) {
	h.t.Helper()
	return h.buildRunSandbox(ws, "", extraEnv, commands...)
}

// buildRunSandbox is buildRun under an operator deployment whose
// "sandbox" setting is sandbox (JSON; "" for the default).
func (h *hostile) buildRunSandbox(ws, sandbox string, extraEnv []string, commands ...string) (result, []toolchainCall) {
	h.t.Helper()
	dir := filepath.Join(h.root, "build-guild")
	h.write(filepath.Join(dir, "guild.json"), `{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":["run_shell","test","finish"]}}}`, 0o644)
	h.write(filepath.Join(dir, "prompts", "solo.md"), "[role:solo] Build and test.\n", 0o644)
	dep := filepath.Join(h.root, "build-deployment.json")
	deployment := `{"executor": {"defaultToolTimeoutSeconds": 180}}`
	if sandbox != "" {
		deployment = `{"executor": {"defaultToolTimeoutSeconds": 180}, "sandbox": ` + sandbox + `}`
	}
	h.write(dep, deployment, 0o644)
	f := fakellm.New()
	defer f.Close()
	var turns []fakellm.Reply
	for _, c := range commands {
		turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "run_shell", Args: map[string]any{"command": c}}}})
	}
	turns = append(turns,
		fakellm.Reply{Calls: []fakellm.Call{{Name: "test", Args: map[string]any{"commands": commands}}}},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "built"}}}})
	f.Queue("solo", turns...)
	res := h.runEnv(ws, 8*time.Minute, extraEnv, "run", "--workspace", ws, "--guild", dir, "--deployment", dep,
		"--base-url", f.BaseURL(), "--model", "fake-model", "--no-input", "--json", "build and test")
	return res, toolCalls(h.t, res.stdout)
}

// toolCalls decodes the run_shell and test results from --json output.
func toolCalls(t *testing.T, stdout string) []toolchainCall {
	t.Helper()
	var out []toolchainCall
	for _, p := range jsonEvents[event.ToolResultPayload](t, stdout, event.ToolResult) {
		var r struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(p.Result, &r); err != nil || r.Kind != "success" {
			if p.Tool != "finish" {
				t.Errorf("%s did not give a normal result: %s", p.Tool, p.Result)
			}
			continue
		}
		type entry struct {
			Command  string  `json:"command"`
			ExitCode float64 `json:"exitCode"`
			Stdout   string  `json:"stdout"`
			Stderr   string  `json:"stderr"`
		}
		switch p.Tool {
		case "run_shell":
			var d entry
			_ = json.Unmarshal(r.Data, &d)
			out = append(out, toolchainCall{"run_shell", "", d.ExitCode, d.Stdout + d.Stderr})
		case "test":
			var ds []entry
			_ = json.Unmarshal(r.Data, &ds)
			for _, d := range ds {
				out = append(out, toolchainCall{"test", d.Command, d.ExitCode, d.Stdout + d.Stderr})
			}
		}
	}
	return out
}

// expectPass checks that every scripted command passed, through both
// tools, and that each output holds want.
func expectPass(t *testing.T, res result, calls []toolchainCall, n int, want ...string) {
	t.Helper()
	if res.code != 0 || len(calls) != 2*n {
		t.Fatalf("%d calls, want %d:\n%s", len(calls), 2*n, res)
	}
	for i, c := range calls {
		if c.exit != 0 {
			t.Errorf("%s call %d exited %v:\n%s", c.tool, i, c.exit, c.out)
		}
		if w := want[i%n]; !strings.Contains(c.out, w) {
			t.Errorf("%s call %d lacks %q:\n%s", c.tool, i, w, c.out)
		}
	}
}

// goModuleFixture writes a workspace module requiring example.com/greet,
// which exists only in a file:// GOPROXY folder of the test's own, and
// seeds a module cache of the test's own from it with the host's go,
// as `go mod download` fills anyone's. It returns the cache.
func goModuleFixture(t *testing.T, h *hostile, ws string) string {
	t.Helper()
	proxy := filepath.Join(h.root, "goproxy", "example.com", "greet", "@v")
	h.write(filepath.Join(proxy, "list"), "v1.0.0\n", 0o644)
	h.write(filepath.Join(proxy, "v1.0.0.info"), `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`, 0o644)
	mod := "module example.com/greet\n\ngo 1.21\n"
	h.write(filepath.Join(proxy, "v1.0.0.mod"), mod, 0o644)
	zf, err := os.Create(filepath.Join(proxy, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{
		"go.mod":   mod,
		"greet.go": "package greet\n\n// Hello greets.\nfunc Hello(n string) string { return \"hello, \" + n }\n",
	} {
		w, err := zw.Create("example.com/greet@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zf.Close()
	h.write(filepath.Join(ws, "go.mod"), "module example.com/ws\n\ngo 1.21\n\nrequire example.com/greet v1.0.0\n", 0o644)
	h.write(filepath.Join(ws, "ws.go"), "package ws\n\nimport \"example.com/greet\"\n\n// Greet greets.\nfunc Greet() string { return greet.Hello(\"sandbox\") }\n", 0o644)
	h.write(filepath.Join(ws, "ws_test.go"), "package ws\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif Greet() != \"hello, sandbox\" {\n\t\tt.Fatal(Greet())\n\t}\n}\n", 0o644)
	modcache := filepath.Join(h.root, "modcache")
	cmd := exec.Command("go", "mod", "download", "-x")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOPROXY=file://"+filepath.Join(h.root, "goproxy"), "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("seed the module cache: %v\n%s", err, out)
	}
	cmd = exec.Command("go", "mod", "tidy")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return modcache
}

func TestToolchainGoModuleFromTheHostsModuleCache(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("gomod")
	modcache := goModuleFixture(t, h, ws)
	res, calls := h.buildRun(ws, []string{"GOMODCACHE=" + modcache, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"},
		"go test ./...")
	expectPass(t, res, calls, 1, "ok  \texample.com/ws")
	// The workspace's first run says what the sandbox mounts for it.
	if want := "GOMODCACHE " + modcache; !strings.Contains(res.stderr, "  go (go.mod): GOROOT ") || !strings.Contains(res.stderr, want) {
		t.Errorf("the first run does not say what it mounts for go (%q):\n%s", want, res.stderr)
	}
	// The second run's go test found the workspace's build cache warm.
	if !strings.Contains(calls[1].out, "(cached)") {
		t.Errorf("the second go test did not use the workspace's build cache:\n%s", calls[1].out)
	}
}

func TestToolchainPythonVenvAndUserSite(t *testing.T) {
	sandboxtest.Need(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	h := newHostile(t)
	ws := h.workspace("py")
	// The operator's python (pyenv's here, under /root) and its version.
	env := []string{}
	for _, name := range []string{"PYENV_ROOT", "PYENV_VERSION"} {
		if v := os.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	if root, err := exec.Command("pyenv", "root").Output(); err == nil && os.Getenv("PYENV_ROOT") == "" {
		env = append(env, "PYENV_ROOT="+strings.TrimSpace(string(root)))
	}
	ver, err := exec.Command(py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A package in the operator's user site (~/.local/lib/pythonX.Y).
	h.write(filepath.Join(h.home, ".local", "lib", "python"+strings.TrimSpace(string(ver)), "site-packages", "usersite_pkg", "__init__.py"), "WHO = 'user site'\n", 0o644)
	// A workspace venv with a package of its own.
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", filepath.Join(ws, ".venv")).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	purelib, err := exec.Command(filepath.Join(ws, ".venv", "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	h.write(filepath.Join(strings.TrimSpace(string(purelib)), "venv_pkg", "__init__.py"), "WHO = 'venv'\n", 0o644)
	h.write(filepath.Join(ws, "test_venv.py"), "import unittest, venv_pkg\n\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(venv_pkg.WHO, 'venv')\n", 0o644)
	h.write(filepath.Join(ws, "test_user.py"), "import unittest, usersite_pkg\n\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(usersite_pkg.WHO, 'user site')\n", 0o644)
	h.snapshot()
	res, calls := h.buildRun(ws, env,
		".venv/bin/python -m unittest -v test_venv 2>&1",
		"python3 -c 'import sys; print(sys.executable)' && python3 -m unittest -v test_user 2>&1")
	pyExe, _ := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	expectPass(t, res, calls, 2, "test (test_venv.T.test) ... ok", strings.TrimSpace(string(pyExe)))
	for _, c := range calls[1:2] {
		if !strings.Contains(c.out, "test (test_user.T.test) ... ok") {
			t.Errorf("the user-site test did not pass:\n%s", c.out)
		}
	}
	h.assertSafe()
}

func TestToolchainNodeModules(t *testing.T) {
	sandboxtest.Need(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm on PATH")
	}
	h := newHostile(t)
	ws := h.workspace("node")
	h.write(filepath.Join(ws, "package.json"), `{"name": "ws", "version": "1.0.0", "private": true, "scripts": {"test": "node test.js"}}`, 0o644)
	h.write(filepath.Join(ws, "node_modules", "pad-left", "package.json"), `{"name": "pad-left", "version": "1.0.0", "main": "index.js"}`, 0o644)
	h.write(filepath.Join(ws, "node_modules", "pad-left", "index.js"), "module.exports = (s, n) => s.padStart(n, '.');\n", 0o644)
	h.write(filepath.Join(ws, "test.js"), "const pad = require('pad-left');\nconst assert = require('assert');\nassert.strictEqual(pad('x', 3), '..x');\nconsole.log('node test passed');\n", 0o644)
	h.snapshot()
	res, calls := h.buildRun(ws, nil, "npm test 2>&1")
	expectPass(t, res, calls, 1, "node test passed")
	h.assertSafe()
	// check says what the sandbox shows the project; a second run, not
	// the first, says nothing of it.
	chk := h.run(ws, time.Minute, "check", "--workspace", ws)
	for _, want := range []string{"sandbox: workspace-write, network off: ok", "  node (package.json): ", "node is /", "node_modules present",
		"network off: `npm ci` needs \"network\": \"allowlist\" and sandbox.allow [\"npm\"]", "  build caches (writable, this workspace's own): "} {
		if !strings.Contains(chk.stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, chk)
		}
	}
	if strings.ContainsRune(chk.stdout, 0x1b) {
		t.Errorf("check printed an escape:\n%q", chk.stdout)
	}
	res, _ = h.buildRun(ws, nil, "true")
	if strings.Contains(res.stderr, "node (package.json)") {
		t.Errorf("a later run repeats the toolchain report:\n%s", res.stderr)
	}
}

func TestToolchainRustCrate(t *testing.T) {
	sandboxtest.Need(t)
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Skip("no cargo on PATH: the Rust project cannot be built here")
	}
	h := newHostile(t)
	ws := h.workspace("rs")
	var env []string
	for name, def := range map[string]string{"CARGO_HOME": filepath.Join(os.Getenv("HOME"), ".cargo"), "RUSTUP_HOME": filepath.Join(os.Getenv("HOME"), ".rustup")} {
		v := os.Getenv(name)
		if v == "" {
			v = def
		}
		env = append(env, name+"="+v)
	}
	if !strings.HasPrefix(cargo, "/usr/") {
		t.Logf("cargo is %s (its CARGO_HOME and RUSTUP_HOME are mounted read-only)", cargo)
	}
	h.write(filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"ws\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n", 0o644)
	h.write(filepath.Join(ws, "src", "lib.rs"), "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n}\n", 0o644)
	h.snapshot()
	res, calls := h.buildRun(ws, env, "cargo test --offline 2>&1")
	expectPass(t, res, calls, 1, "test tests::adds ... ok")
	h.assertSafe()
}

// With the crates preset allowed, cargo unpacks what it fetches into a
// CARGO_HOME of the workspace's own, which carries the operator's cargo
// configuration, while the operator's CARGO_HOME stays read-only and
// unwritten; under the default sandbox the same build is refused by the
// read-only CARGO_HOME. The registry is a local one named by the
// operator's cargo configuration and shown by sandbox.readOnly, so no
// network is needed.
func TestToolchainRustFetchesIntoTheWorkspacesCargoHome(t *testing.T) {
	sandboxtest.Need(t)
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("no cargo on PATH: the Rust project cannot be built here")
	}
	h := newHostile(t)
	reg := filepath.Join(h.root, "registry")
	crate := writeCrate(t, filepath.Join(reg, "greet-0.1.0.crate"), "greet", "0.1.0",
		"pub const HI: &str = \"hi from greet\";\n")
	h.write(filepath.Join(reg, "index", "gr", "ee", "greet"), fmt.Sprintf(
		`{"name":"greet","vers":"0.1.0","deps":[],"cksum":"%s","features":{},"yanked":false}`+"\n", crate), 0o644)
	cargoHome := filepath.Join(h.root, "operator-cargo")
	h.write(filepath.Join(cargoHome, "config.toml"), fmt.Sprintf(
		"[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nlocal-registry = %q\n", reg), 0o644)
	rustup := os.Getenv("RUSTUP_HOME")
	if rustup == "" {
		rustup = filepath.Join(os.Getenv("HOME"), ".rustup")
	}
	env := []string{"CARGO_HOME=" + cargoHome, "RUSTUP_HOME=" + rustup}
	project := func(name string) string {
		ws := h.workspace(name)
		h.write(filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"ws\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreet = \"0.1.0\"\n", 0o644)
		h.write(filepath.Join(ws, "src", "main.rs"), "fn main() { println!(\"{}\", greet::HI); }\n", 0o644)
		return ws
	}
	before := treeList(t, cargoHome)

	readOnly := fmt.Sprintf(`"readOnly": [%q]`, reg)
	res, calls := h.buildRunSandbox(project("rs-default"), "{"+readOnly+"}", env, "cargo run --quiet --offline 2>&1")
	if len(calls) == 0 || calls[0].exit == 0 || !strings.Contains(calls[0].out, "Read-only file system") {
		t.Fatalf("under the default sandbox cargo unpacked into the read-only CARGO_HOME:\n%s", res)
	}

	ws := project("rs-crates")
	res, calls = h.buildRunSandbox(ws, `{"network": "allowlist", "allow": ["crates"], `+readOnly+`}`, env,
		`echo "CARGO_HOME=$CARGO_HOME"; cargo run --quiet 2>&1`)
	expectPass(t, res, calls, 1, "hi from greet")
	cacheHome := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(calls[0].out, "\n", 2)[0], "CARGO_HOME="))
	if filepath.Base(cacheHome) != "cargo-home" || !strings.Contains(cacheHome, "sandbox-cache") {
		t.Fatalf("CARGO_HOME in the sandbox is %q, want the workspace's cargo-home", cacheHome)
	}
	if got, _ := filepath.Glob(filepath.Join(cacheHome, "registry", "src", "*", "greet-0.1.0", "src", "lib.rs")); len(got) != 1 {
		t.Errorf("greet was not unpacked into the workspace's CARGO_HOME %s", cacheHome)
	}
	if after := treeList(t, cargoHome); after != before {
		t.Errorf("the operator's CARGO_HOME changed:\n%s\n---\n%s", before, after)
	}
	h.assertSafe()
}

// writeCrate writes a .crate (the gzipped tar cargo publishes) of a
// library crate name@version with src/lib.rs lib, and returns its SHA-256.
func writeCrate(t *testing.T, path, name, version, lib string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := []struct{ name, body string }{
		{"Cargo.toml", fmt.Sprintf("[package]\nname = %q\nversion = %q\nedition = \"2021\"\n", name, version)},
		{"src/lib.rs", lib},
	}
	for _, f := range files {
		hdr := &tar.Header{Name: name + "-" + version + "/" + f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// treeList lists the paths, kinds and sizes under root, to compare.
func treeList(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// As an attacker: with toolchains in the operator's HOME, each holding a
// credential store, and every store of the denylist beside them, a
// sandboxed command reads none of them, writes neither a toolchain nor
// the operator's build cache, and reaches no network; the refused
// download's result says how the operator would allow it.
func TestHostileToolchainMountsKeepCredentialsAndCaches(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("creds")
	secrets := []string{".ssh/id_ed25519", ".aws/credentials", ".config/gcloud/application_default_credentials.json", ".azure/accessTokens.json",
		".kube/config", ".docker/config.json", ".gnupg/private-keys-v1.d/k.key", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
		".local/share/keyrings/login.keyring", ".mozilla/firefox/p/cookies.sqlite", ".config/google-chrome/Default/Cookies",
		".config/chromium/Default/Login Data", ".cargo/credentials.toml", ".m2/settings.xml", ".gradle/gradle.properties",
		".config/guildhall/notes.txt", ".local/state/guildhall/notes.txt"}
	for _, s := range secrets {
		h.write(filepath.Join(h.home, s), "TOOLCHAIN-SECRET "+s+"\n", 0o600)
	}
	for _, f := range []string{".cargo/bin/cargo-fake", ".m2/repository/x.jar", ".gradle/caches/x", ".npm/_cacache/x", ".cache/go-build/real-entry"} {
		h.write(filepath.Join(h.home, f), "toolchain file\n", 0o755)
	}
	h.write(filepath.Join(h.home, ".local/lib/python3.11/site-packages/p/__init__.py"), "toolchain file\n", 0o644)
	h.snapshot()
	var cmds []string
	for _, s := range secrets {
		cmds = append(cmds, fmt.Sprintf("cat %q; ls -la %q", filepath.Join(h.home, s), filepath.Dir(filepath.Join(h.home, s))))
	}
	readAll := strings.Join(cmds, "; ") + "; true"
	operatorCache := filepath.Join(h.home, ".cache", "go-build")
	realCache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	realPlant := filepath.Join(strings.TrimSpace(string(realCache)), "guildhall-hostile-planted")
	res, results := h.shellRun(ws, nil,
		"cat "+filepath.Join(h.home, ".cargo/bin/cargo-fake")+" "+filepath.Join(h.home, ".m2/repository/x.jar"),
		readAll,
		"for f in .cargo/bin/cargo-fake .m2/repository/x.jar .gradle/caches/x .npm/_cacache/x .local/lib/python3.11/site-packages/p/__init__.py; do echo owned >> "+h.home+"/$f; touch "+h.home+"/$(dirname $f)/planted; done; echo owned > "+operatorCache+"/real-entry; touch "+operatorCache+"/planted "+realPlant+"; echo \"GOCACHE=$GOCACHE\"",
		"curl -sS -m 5 https://proxy.golang.org/example.com/@v/list",
	)
	if _, err := os.Lstat(realPlant); err == nil {
		_ = os.Remove(realPlant)
		t.Errorf("the operator's real GOCACHE took a write from the sandbox")
	}
	if len(results) != 4 {
		t.Fatalf("%d results:\n%s", len(results), res)
	}
	if out := results[0]["stdout"].(string); strings.Count(out, "toolchain file") != 2 {
		t.Errorf("the toolchains are not readable: %v", results[0])
	}
	if out := fmt.Sprint(results[1]); strings.Contains(out, "TOOLCHAIN-SECRET") {
		t.Errorf("a credential store is readable in the sandbox:\n%s", out)
	}
	if out := results[2]["stdout"].(string); !strings.Contains(out, "GOCACHE="+filepath.Join(h.home, ".cache", "guildhall", "sandbox-cache")) {
		t.Errorf("GOCACHE is not the workspace's own cache: %v", results[2])
	}
	note := `guildhall: network off: proxy.golang.org was refused; allow with "network": "allowlist" and sandbox.allow ["go"] in the operator's deployment.json`
	if r := results[3]; r["exitCode"].(float64) == 0 || !strings.Contains(r["stderr"].(string), note) {
		t.Errorf("the refused download does not say how to allow it: %v", r)
	}
	h.assertSafe()
}
