package sandbox

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeHome builds an operator's home with toolchains, credential stores
// inside and beside them, and a PATH entry, and points HOME and the XDG
// folders at it. It returns the home.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	files := map[string]string{
		".cargo/bin/cargo":                                        "#!/bin/sh\necho fake cargo\n",
		".cargo/credentials.toml":                                 "[registry]\ntoken = \"CARGO-SECRET\"\n",
		".cargo/registry/index/x":                                 "index",
		".rustup/toolchains/x/bin/rustc":                          "#!/bin/sh\n",
		".pyenv/versions/3.11/bin/python3":                        "#!/bin/sh\n",
		".local/lib/python3.11/site-packages/userpkg/__init__.py": "X = 1\n",
		".local/share/pypoetry/venv/bin/poetry":                   "#!/bin/sh\necho poetry\n",
		".local/share/pypoetry/venv/lib/marker":                   "m",
		".m2/repository/org/x.jar":                                "jar",
		".m2/settings.xml":                                        "<password>MAVEN-SECRET</password>",
		".npm/_cacache/index":                                     "npm",
		".cache/go-build/real":                                    "operator's cache",
		".ssh/id_ed25519":                                         "SSH-SECRET",
		".aws/credentials":                                        "AWS-SECRET",
		".npmrc":                                                  "//registry.npmjs.org/:_authToken=NPM-SECRET",
		".git-credentials":                                        "https://u:GIT-SECRET@example.com",
		".config/gcloud/creds":                                    "GCLOUD-SECRET",
		".mozilla/firefox/cookies":                                "COOKIE-SECRET",
		".local/share/keyrings/login.keyring":                     "KEYRING-SECRET",
		"tools/bin/pytest":                                        "#!/bin/sh\necho pytest\n",
		"junk/bin/notes":                                          "#!/bin/sh\n",
		"go/pkg/mod/example.com/dep@v1.0.0/dep.go":                "package dep\n",
		"go/bin/gopls":                                            "#!/bin/sh\n",
		"private/diary.txt":                                       "PRIVATE",
	}
	for rel, body := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, ".local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".local/share/pypoetry/venv/bin/poetry"), filepath.Join(home, ".local/bin/poetry")); err != nil {
		t.Fatal(err)
	}
	home, _ = filepath.EvalSymlinks(home)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local/state"))
	t.Setenv("XDG_DATA_HOME", "")
	for _, v := range []string{"CARGO_HOME", "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR", "GOPATH", "GOFLAGS", "CONDA_PREFIX", "CONDA_EXE",
		"JAVA_HOME", "GRADLE_USER_HOME", "PYTHONUSERBASE", "UV_CACHE_DIR", "PIP_CACHE_DIR", "npm_config_cache", "VOLTA_HOME", "GOCACHE"} {
		t.Setenv(v, "")
	}
	t.Setenv("GOMODCACHE", filepath.Join(home, "go/pkg/mod"))
	t.Setenv("PATH", strings.Join([]string{filepath.Join(home, "tools/bin"), filepath.Join(home, "junk/bin"),
		filepath.Join(home, ".local/bin"), "/usr/local/go/bin", "/usr/local/bin", "/usr/bin", "/bin"}, ":"))
	return home
}

func TestDiscoverToolchainsFindsHomesAndMasksCredentials(t *testing.T) {
	home := fakeHome(t)
	ws := t.TempDir()
	tc := DiscoverToolchains(context.Background(), os.Getenv, ws, nil)
	got := map[string]string{}
	for _, m := range tc.Mounts {
		got[m.Path] = m.Tool + " " + m.What
	}
	want := map[string]string{
		".cargo":                              "rust CARGO_HOME",
		".rustup":                             "rust RUSTUP_HOME",
		".pyenv":                              "python PYENV_ROOT",
		".local/bin":                          "python user scripts",
		".local/lib/python3.11/site-packages": "python user site-packages",
		".m2":                                 "java Maven repository",
		".npm":                                "node npm cache",
		"go/pkg/mod":                          "go GOMODCACHE",
		"go/bin":                              "go GOPATH/bin",
		"tools/bin":                           "path PATH entry",
		".local/share/pypoetry/venv":          "path installation of poetry",
	}
	for rel, what := range want {
		if got[filepath.Join(home, rel)] != what {
			t.Errorf("%s: mounted as %q, want %q", rel, got[filepath.Join(home, rel)], what)
		}
	}
	for _, never := range []string{"junk/bin", ".ssh", ".aws", "private", ".cache/go-build", ""} {
		if _, ok := got[filepath.Join(home, never)]; ok {
			t.Errorf("%s is mounted; it must stay masked", never)
		}
	}
	masked := strings.Join(tc.Masks, "\n")
	for _, rel := range []string{".cargo/credentials.toml", ".m2/settings.xml"} {
		if !strings.Contains(masked, filepath.Join(home, rel)) {
			t.Errorf("%s is not masked inside its mount; masks:\n%s", rel, masked)
		}
	}
	if tc.Of("go") == nil || tc.Missing["go"] != "" {
		t.Errorf("go not found: %q", tc.Missing["go"])
	}
	if _, err := os.Lstat(filepath.Join(home, ".config", "go")); err == nil {
		t.Errorf("discovery's go env left its telemetry in the operator's configuration folder")
	}
}

// A toolchain path inside the workspace, inside a credential store, or
// holding the home folder is never mounted; one reached through a link is
// mounted at both paths.
func TestDiscoverToolchainsRefusesWhatMustStayHidden(t *testing.T) {
	home := fakeHome(t)
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "pyenv-link")
	if err := os.Symlink(filepath.Join(home, ".pyenv"), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYENV_ROOT", link)
	t.Setenv("CARGO_HOME", filepath.Join(home, ".ssh"))
	t.Setenv("RUSTUP_HOME", home)
	t.Setenv("CONDA_PREFIX", filepath.Join(ws, "venv"))
	t.Setenv("JAVA_HOME", "/")
	tc := DiscoverToolchains(context.Background(), os.Getenv, ws, nil)
	paths := map[string]Mount{}
	for _, m := range tc.Mounts {
		paths[m.Path] = m
	}
	for _, never := range []string{filepath.Join(home, ".ssh"), home, filepath.Join(ws, "venv"), "/"} {
		if _, ok := paths[never]; ok {
			t.Errorf("%s is mounted", never)
		}
	}
	if m, ok := paths[link]; !ok || m.Src != filepath.Join(home, ".pyenv") {
		t.Errorf("the linked PYENV_ROOT is not mounted at its own path from its target: %+v", m)
	}
	if _, ok := paths[filepath.Join(home, ".pyenv")]; !ok {
		t.Errorf("the target of the linked PYENV_ROOT is not mounted")
	}
}

// A workspace's go.work or go.mod cannot make discovery's `go env` fetch
// a toolchain: it runs outside the workspace with GOTOOLCHAIN=local.
func TestDiscoverGoIgnoresTheWorkspacesToolchainLine(t *testing.T) {
	fakeHome(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module x\n\ngo 1.99\n\ntoolchain go1.99.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(ws)
	t.Setenv("GOTOOLCHAIN", "auto")
	tc := DiscoverToolchains(context.Background(), os.Getenv, ws, nil)
	if tc.Missing["go"] != "" {
		t.Fatalf("go env failed: %s", tc.Missing["go"])
	}
	for _, m := range tc.Of("go") {
		if strings.Contains(m.Src, "toolchain") {
			t.Errorf("a toolchain was fetched: %s", m.Src)
		}
	}
}

func TestCheckReadOnly(t *testing.T) {
	home := fakeHome(t)
	for _, c := range []struct {
		path, err string
	}{
		{"relative", "must be absolute"},
		{"/", "already"},
		{"/proc/self", "cannot be shown"},
		{home, "home folder"},
		{filepath.Dir(home), "home folder"},
		{filepath.Join(home, ".ssh"), "denylist"},
		{filepath.Join(home, ".ssh/id_ed25519"), "denylist"},
		{filepath.Join(home, "nope"), "does not exist"},
		{filepath.Join(home, ".cargo"), ""},
	} {
		_, err := CheckReadOnly(c.path)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.path, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.path, err, c.err)
		}
	}
}

func TestCacheEnvPointsBuildsAtTheWorkspacesCaches(t *testing.T) {
	caches := []buildCache{{env: "GOCACHE", path: "/c/go-build"}, {env: "CARGO_TARGET_DIR", path: "/c/cargo-target"}, {env: "UV_CACHE_DIR", path: "/c/uv"}}
	writable := func(p string) bool { return within(p, "/ws") || within(p, "/shared") }
	for _, c := range []struct{ in, want string }{
		{"PATH=/bin GOCACHE=/root/.cache/go-build CARGO_TARGET_DIR=/srv/target", "PATH=/bin CARGO_TARGET_DIR=/c/cargo-target GOCACHE=/c/go-build UV_CACHE_DIR=/c/uv"},
		{"CARGO_TARGET_DIR=/ws/out", "CARGO_TARGET_DIR=/ws/out GOCACHE=/c/go-build UV_CACHE_DIR=/c/uv"},
		{"CARGO_TARGET_DIR=out GOCACHE=/shared/go-build", "CARGO_TARGET_DIR=out GOCACHE=/shared/go-build UV_CACHE_DIR=/c/uv"},
	} {
		if got := strings.Join(cacheEnv(strings.Fields(c.in), caches, writable), " "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.in, got, c.want)
		}
	}
}

// As an attacker inside the sandbox: the toolchains are readable and not
// writable, every credential store is unreadable (beside the toolchains
// and inside them), the rest of HOME is masked, and the only writable
// cache is the workspace's own, never the operator's.
func TestSandboxShowsToolchainsReadOnlyAndNoCredentials(t *testing.T) {
	needBwrap(t)
	home := fakeHome(t)
	sb, ws := openSandbox(t, Config{})
	env := []string{"PATH=" + os.Getenv("PATH"), "GOCACHE=" + filepath.Join(home, ".cache/go-build")}
	sh := func(command string) (int, string) {
		t.Helper()
		res, err := sb.Run(context.Background(), Script{Dir: ws, Command: command, Env: env, Timeout: 20e9, MaxChars: 8192})
		if err != nil {
			t.Fatalf("%q: %v", command, err)
		}
		return res.ExitCode, res.Stdout + res.Stderr
	}
	for _, rel := range []string{".cargo/bin/cargo", ".rustup/toolchains/x/bin/rustc", ".pyenv/versions/3.11/bin/python3",
		".local/lib/python3.11/site-packages/userpkg/__init__.py", ".m2/repository/org/x.jar", ".npm/_cacache/index",
		"go/pkg/mod/example.com/dep@v1.0.0/dep.go", "tools/bin/pytest", ".local/share/pypoetry/venv/lib/marker"} {
		p := filepath.Join(home, rel)
		if code, out := sh("cat " + p + " >/dev/null"); code != 0 {
			t.Errorf("toolchain file %s not readable: %s", rel, out)
		}
		if code, _ := sh("echo x >> " + p); code == 0 {
			t.Errorf("toolchain file %s is writable", rel)
		}
		if code, _ := sh("touch " + filepath.Join(filepath.Dir(p), "planted")); code == 0 {
			t.Errorf("a file could be planted beside %s", rel)
		}
	}
	if code, out := sh("poetry"); code != 0 || !strings.Contains(out, "poetry") {
		t.Errorf("poetry, a link in ~/.local/bin to its installation, does not run: %d %s", code, out)
	}
	for _, rel := range []string{".ssh/id_ed25519", ".aws/credentials", ".npmrc", ".git-credentials", ".config/gcloud/creds",
		".mozilla/firefox/cookies", ".local/share/keyrings/login.keyring", ".cargo/credentials.toml", ".m2/settings.xml",
		"private/diary.txt", "junk/bin/notes", ".cache/go-build/real"} {
		code, out := sh("cat " + filepath.Join(home, rel))
		if strings.Contains(out, "SECRET") || strings.Contains(out, "PRIVATE") || strings.Contains(out, "operator's cache") || (code == 0 && out != "") {
			t.Errorf("%s is readable in the sandbox: %s", rel, out)
		}
	}
	code, out := sh(`echo "$GOCACHE"; echo built > "$GOCACHE/entry" && cat "$GOCACHE/entry"`)
	cacheDir, _ := WorkspaceCacheDir(ws)
	if code != 0 || !strings.Contains(out, filepath.Join(cacheDir, "go-build")) || !strings.Contains(out, "built") {
		t.Errorf("GOCACHE is not the workspace's writable cache: %d %s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(cacheDir, "go-build", "entry")); err != nil || string(b) != "built\n" {
		t.Errorf("the workspace's cache did not keep the entry: %q %v", b, err)
	}
	if code, _ := sh("echo poison > " + filepath.Join(home, ".cache/go-build/real")); code == 0 {
		t.Errorf("the operator's own GOCACHE is writable")
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".cache/go-build/real")); string(b) != "operator's cache" {
		t.Errorf("the operator's cache changed: %q", b)
	}
	if code, out := sh("ls " + filepath.Dir(cacheDir)); code == 0 && strings.TrimSpace(out) != filepath.Base(cacheDir) {
		t.Errorf("other workspaces' caches are visible: %s", out)
	}
	// A credential file made during the run (a `cargo login` elsewhere) is
	// masked from the sandbox's next start on; a .git made on the host
	// restarts it. So is a removed cache folder made again.
	if err := os.WriteFile(filepath.Join(home, ".cargo/credentials"), []byte("LATE-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cacheDir); err != nil {
		t.Fatal(err)
	}
	// As git_init does: the .git placeholder goes first.
	if err := sb.ClearGitPlaceholder(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, out := sh("cat " + filepath.Join(home, ".cargo/credentials") + "; echo x > $GOCACHE/again && echo wrote"); strings.Contains(out, "LATE-SECRET") || !strings.Contains(out, "wrote") {
		t.Errorf("after a restart: %s", out)
	}
}

func TestReportSaysWhatIsMountedAndMissing(t *testing.T) {
	home := fakeHome(t)
	ws := t.TempDir()
	for _, f := range []string{"go.mod", "package.json", "requirements.txt", "Cargo.toml"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, ".venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	off, _ := NewPolicy(Config{})
	tc := DiscoverToolchains(context.Background(), os.Getenv, ws, nil)
	projects := DetectProjects(ws)
	if len(projects) != 4 {
		t.Fatalf("projects %+v", projects)
	}
	got := strings.Join(tc.Report(off, ws, "/usr/local/go/bin:/nonexistent", projects), "\n")
	for _, want := range []string{
		"go (go.mod): GOROOT /usr/local/go, GOMODCACHE " + filepath.Join(home, "go/pkg/mod") + " and GOPATH/bin " + filepath.Join(home, "go/bin") + " mounted read-only; go is /usr/local/go/bin/go; network off: `go mod download` needs \"network\": \"allowlist\" and sandbox.allow [\"go\"]",
		"rust (Cargo.toml): CARGO_HOME " + filepath.Join(home, ".cargo") + " and RUSTUP_HOME " + filepath.Join(home, ".rustup") + " mounted read-only; missing: no cargo on PATH",
		"node (package.json): npm cache " + filepath.Join(home, ".npm") + " mounted read-only; missing: no node, npm on PATH; no node_modules yet",
		"python (requirements.txt): ",
		"workspace venv .venv; network off: `pip install` needs",
		"masked inside them (credentials): ",
		filepath.Join(home, ".cargo/credentials.toml"),
		"build caches (writable, this workspace's own): " + filepath.Join(home, ".cache/guildhall/sandbox-cache/"),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	list, _ := NewPolicy(Config{Network: "allowlist", Allow: []string{"go"}})
	if got := strings.Join(tc.Report(list, ws, "", projects[:1]), "\n"); !strings.Contains(got, "network allowlist: `go mod download` may download (proxy.golang.org allowed)") {
		t.Errorf("allowlist report:\n%s", got)
	}
}

func TestGoDownloadEnv(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"PATH=/bin GOMODCACHE=/c/go-mod", "PATH=/bin GOMODCACHE=/c/go-mod GOPROXY=file:///op/mod/cache/download,https://proxy.golang.org,direct GOFLAGS=-modcacherw"},
		{"GOPROXY=https://goproxy.example GOFLAGS=-mod=mod", "GOPROXY=file:///op/mod/cache/download,https://goproxy.example GOFLAGS=-mod=mod -modcacherw"},
		{"GOPROXY=off", "GOPROXY=off GOFLAGS=-modcacherw"},
	} {
		if got := strings.Join(goDownloadEnv(strings.Fields(c.in), "/op/mod"), " "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.in, got, c.want)
		}
	}
}

// With the go preset allowed, a build downloads into the workspace's own
// module cache, taking what the operator's cache holds from it without
// the network, and the operator's module cache is not written.
func TestSandboxGoDownloadsIntoTheWorkspacesModuleCache(t *testing.T) {
	needBwrap(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	home := fakeHome(t)
	opCache := filepath.Join(home, "go/pkg/mod")
	proxy := filepath.Join(t.TempDir(), "proxy")
	mod := "module example.com/greet\n\ngo 1.21\n"
	writeZip(t, filepath.Join(proxy, "example.com/greet/@v/v1.0.0.zip"), map[string]string{
		"example.com/greet@v1.0.0/go.mod": mod, "example.com/greet@v1.0.0/greet.go": "package greet\n\nconst Hi = \"hi\"\n"})
	for name, body := range map[string]string{"list": "v1.0.0\n", "v1.0.0.mod": mod, "v1.0.0.info": `{"Version":"v1.0.0"}`} {
		if err := os.WriteFile(filepath.Join(proxy, "example.com/greet/@v", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, ws := openSandbox(t, Config{Network: "allowlist", Allow: []string{"go"}})
	for name, body := range map[string]string{
		"go.mod":  "module example.com/ws\n\ngo 1.21\n\nrequire example.com/greet v1.0.0\n",
		"main.go": "package main\n\nimport \"example.com/greet\"\n\nfunc main() { println(greet.Hi) }\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seed := exec.Command("go", "mod", "tidy")
	seed.Dir = ws
	seed.Env = append(os.Environ(), "GOMODCACHE="+opCache, "GOPROXY=file://"+proxy, "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	before := dirList(t, opCache)
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: `echo "$GOMODCACHE"; go run . 2>&1`,
		Env: []string{"PATH=" + os.Getenv("PATH"), "GOMODCACHE=" + opCache, "GOSUMDB=off", "GOTOOLCHAIN=local"}, Timeout: 5 * 60e9, MaxChars: 8192})
	if err != nil {
		t.Fatal(err)
	}
	cacheDir, _ := WorkspaceCacheDir(ws)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, filepath.Join(cacheDir, "go-mod")) || !strings.Contains(res.Stdout, "hi") {
		t.Fatalf("exit %d:\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(cacheDir, "go-mod", "example.com", "greet@v1.0.0", "greet.go")); err != nil {
		t.Errorf("the module did not land in the workspace's module cache: %v", err)
	}
	if after := dirList(t, opCache); after != before {
		t.Errorf("the operator's module cache changed:\n%s\n---\n%s", before, after)
	}
}

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func dirList(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %d %s\n", p, fi.Size(), fi.Mode())
		}
		return nil
	})
	return b.String()
}

// A confined MCP server sees the operator's toolchains as the commands do
// (an npx or uvx server finds its node or uv under HOME), read-only, and
// never a denylisted credential inside them or beside them.
func TestServerSeesToolchainsButNoCredentials(t *testing.T) {
	needBwrap(t)
	home := fakeHome(t)
	sb, _ := openSandbox(t, Config{})
	py := filepath.Join(home, ".pyenv/versions/3.11/bin/python3")
	script := "cat " + filepath.Join(home, ".cargo/bin/cargo") + " && echo READ-TOOLCHAIN; " +
		"cat " + filepath.Join(home, ".cargo/credentials.toml") + " " + filepath.Join(home, ".ssh/id_ed25519") + " 2>/dev/null; " +
		"echo x >> " + py + " 2>/dev/null && echo WROTE-TOOLCHAIN; read line; echo \"$line\""
	out := probeServer(t, sb, ServerSpec{Name: "tc", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Policy: serverPolicy(t, Config{})})
	if !strings.Contains(out, "fake cargo") || !strings.Contains(out, "READ-TOOLCHAIN") {
		t.Errorf("the server does not see the toolchain:\n%s", out)
	}
	for _, secret := range []string{"CARGO-SECRET", "SSH-SECRET", "WROTE-TOOLCHAIN"} {
		if strings.Contains(out, secret) {
			t.Errorf("the server reached %s:\n%s", secret, out)
		}
	}
}

func TestDownloadEnvPointsMavenAndGradleAtTheWorkspace(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".m2/repository", ".gradle/caches"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tc := Toolchains{Mounts: []Mount{
		{Tool: "java", What: "Maven repository", Path: filepath.Join(home, ".m2")},
		{Tool: "java", What: "GRADLE_USER_HOME", Path: filepath.Join(home, ".gradle")},
	}}
	caches := []buildCache{{env: "", name: "m2-repository", path: "/c/m2"}, {env: "GRADLE_USER_HOME", name: "gradle-home", path: "/c/gradle"}}
	opRepo, opGradle := filepath.Join(home, ".m2/repository"), filepath.Join(home, ".gradle/caches")
	for _, c := range []struct{ in, want string }{
		{"PATH=/bin GRADLE_USER_HOME=/c/gradle",
			"PATH=/bin GRADLE_USER_HOME=/c/gradle MAVEN_OPTS=-Dmaven.repo.local=/c/m2 -Dmaven.repo.local.tail=" + opRepo + " GRADLE_RO_DEP_CACHE=" + opGradle},
		{"MAVEN_OPTS=-Xmx1g GRADLE_USER_HOME=/ws/g",
			"GRADLE_USER_HOME=/ws/g MAVEN_OPTS=-Xmx1g -Dmaven.repo.local=/c/m2 -Dmaven.repo.local.tail=" + opRepo},
		{"MAVEN_OPTS=-Dmaven.repo.local=/ws/repo GRADLE_USER_HOME=/c/gradle GRADLE_RO_DEP_CACHE=/ro",
			"GRADLE_USER_HOME=/c/gradle GRADLE_RO_DEP_CACHE=/ro MAVEN_OPTS=-Dmaven.repo.local=/ws/repo"},
	} {
		if got := strings.Join(downloadEnv(strings.Fields(c.in), caches, tc), " "); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	// Without the operator's folders there is no tail and no read-only cache.
	got := strings.Join(downloadEnv([]string{"GRADLE_USER_HOME=/c/gradle"}, caches, Toolchains{}), " ")
	if want := "GRADLE_USER_HOME=/c/gradle MAVEN_OPTS=-Dmaven.repo.local=/c/m2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDownloadCachesFollowThePolicy(t *testing.T) {
	names := func(p Policy) string {
		var n []string
		for _, k := range policyCaches(p) {
			n = append(n, k.name)
		}
		return strings.Join(n, " ")
	}
	base := "go-build pip uv npm cargo-target gradle-home"
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, base},
		{Config{Network: "allowlist", Allow: []string{"npm"}}, base},
		{Config{Network: "allowlist", Allow: []string{"go", "crates", "maven"}}, base + " go-mod cargo-home m2-repository"},
		{Config{Network: "allowlist", Allow: []string{"crates"}}, base + " cargo-home"},
	} {
		p, err := NewPolicy(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(p); got != c.want {
			t.Errorf("%+v: caches %q, want %q", c.cfg, got, c.want)
		}
	}
}

// As an attacker with the run's CARGO_HOME writable: a link left where
// the configuration goes is replaced at the next start, never followed,
// and a configuration changed inside is the operator's again.
func TestSeedCargoHomeReplacesWhatACommandLeft(t *testing.T) {
	dir := t.TempDir()
	home, op, victim := filepath.Join(dir, "cargo-home"), filepath.Join(dir, "op"), filepath.Join(dir, "victim")
	for _, d := range []string{home, op} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(victim, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(op, "config.toml"), []byte("[net]\noffline = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(home, "config.toml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config"), []byte("[source.crates-io]\nreplace-with = 'evil'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := seedCargoHome(home, op); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("the link was followed: the victim holds %q", b)
	}
	fi, err := os.Lstat(filepath.Join(home, "config.toml"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("config.toml is not a regular file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != "[net]\noffline = true\n" {
		t.Errorf("config.toml holds %q", b)
	}
	if _, err := os.Lstat(filepath.Join(home, "config")); !os.IsNotExist(err) {
		t.Errorf("the planted legacy config survived the start: %v", err)
	}
	if err := seedCargoHome(home, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(home, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("without an operator's CARGO_HOME the copy stays: %v", err)
	}
}

// With the maven preset allowed, Maven's local repository is a folder of
// the workspace's own, writable, with the operator's read beside it and
// never written.
func TestSandboxMavenDownloadsIntoTheWorkspacesRepository(t *testing.T) {
	needBwrap(t)
	home := fakeHome(t)
	opRepo := filepath.Join(home, ".m2/repository")
	sb, ws := openSandbox(t, Config{Network: "allowlist", Allow: []string{"maven"}})
	before := dirList(t, filepath.Join(home, ".m2"))
	out := run(t, sb, ws, `repo=${MAVEN_OPTS#*-Dmaven.repo.local=}; repo=${repo%% *}; echo "repo=$repo"
mkdir -p "$repo/org/y" && echo jar > "$repo/org/y/y.jar" && echo wrote
cat `+opRepo+`/org/x.jar; echo
echo owned > `+opRepo+`/org/x.jar || echo refused
echo "$MAVEN_OPTS"`)
	cacheDir, _ := WorkspaceCacheDir(ws)
	repo := filepath.Join(cacheDir, "m2-repository")
	for _, want := range []string{"repo=" + repo, "wrote", "jar", "refused", "-Dmaven.repo.local.tail=" + opRepo} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(repo, "org/y/y.jar")); err != nil || string(b) != "jar\n" {
		t.Errorf("the download did not land in the workspace's repository: %q %v", b, err)
	}
	if after := dirList(t, filepath.Join(home, ".m2")); after != before {
		t.Errorf("the operator's ~/.m2 changed:\n%s\n---\n%s", before, after)
	}
	if mvn, err := exec.LookPath("mvn"); err == nil {
		// The real Maven, offline (validate needs no plugin), takes the
		// workspace's repository from MAVEN_OPTS, with the operator's
		// settings.xml masked.
		pom := `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>x</groupId><artifactId>y</artifactId><version>1</version></project>`
		if err := os.WriteFile(filepath.Join(ws, "pom.xml"), []byte(pom), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := sb.Run(context.Background(), Script{Dir: ws, Command: mvn + " -o -B -X validate 2>&1",
			Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Timeout: 2 * time.Minute, MaxChars: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, "Using local repository at "+repo) || !strings.Contains(res.Stdout, "BUILD SUCCESS") {
			t.Errorf("mvn exit %d:\n%s", res.ExitCode, tail(res.Stdout, 3000))
		}
	} else {
		t.Log("no mvn on PATH: the real Maven is not run")
	}
	tc := sb.currentView().tools
	if got := strings.Join(tc.Report(sb.opts.Policy, ws, "", []Project{{"java", "pom.xml"}}), "\n"); !strings.Contains(got, "into the workspace's own Maven repository") || !strings.Contains(got, "MAVEN_OPTS -Dmaven.repo.local") {
		t.Errorf("report:\n%s", got)
	}
}

// tail is the last n bytes of s, for a failure message.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// When the workspace's caches cannot be made (here the cache folder's
// place is a file), commands still run, and a failed one says why its
// build may have no cache, rather than the loss going unseen.
func TestSandboxSaysWhenTheBuildCachesAreMissing(t *testing.T) {
	needBwrap(t)
	fakeHome(t)
	notDir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(notDir, []byte("a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", notDir)
	sb, ws := openSandbox(t, Config{})
	const note = "guildhall: the workspace's build caches are missing: "
	for _, c := range []struct {
		command  string
		exit     int
		wantNote bool
	}{{"echo built", 0, false}, {"echo failed >&2; exit 3", 3, true}} {
		res, err := sb.Run(context.Background(), Script{Dir: ws, Command: c.command,
			Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 8192})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != c.exit || strings.Contains(res.Stderr, note) != c.wantNote {
			t.Errorf("%q: exit %d, stderr %q (the note wanted: %v)", c.command, res.ExitCode, res.Stderr, c.wantNote)
		}
	}
}
