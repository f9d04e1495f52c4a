package sandbox

// The operator's toolchains, shown read-only inside the sandbox. The
// sandbox masks HOME, where rustup's cargo, pyenv's python, nvm's node and
// Go's module cache live, so without this file an ordinary project cannot
// be built. At sandbox start the homes and dependency caches of the common
// toolchains are found from the operator's own environment, and each is
// mounted read-only at its real path; everything else under HOME stays
// masked, and the credential denylist (denylist.go) is masked again inside
// any of them. docs/security.md has the table and says why each is safe.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// goEnvTimeout bounds the one `go env` run at sandbox start.
const goEnvTimeout = 5 * time.Second

// maxToolchainMounts bounds the mounts discovery may add (a PATH of a
// thousand entries must not make a thousand binds).
const maxToolchainMounts = 64

// Mount is one host folder or file the sandbox shows read-only.
type Mount struct {
	Tool string // "go", "rust", "node", "python", "java", "path" or "operator"
	What string // what it is: "GOROOT", "CARGO_HOME", "sandbox.readOnly", ...
	Path string // where it is seen inside: the path as the operator's environment names it
	Src  string // the host path bound there: Path with its links resolved
}

// Toolchains is what discovery found: the mounts, the denylisted paths
// masked inside them, and the toolchains looked for and not found.
type Toolchains struct {
	Mounts  []Mount
	Masks   []string          // denylisted paths inside mounts, as seen inside
	Missing map[string]string // toolchain → why none was found
	masks   []mask
}

// mask is one denylisted path inside a mount, as seen inside.
type mask struct {
	path string
	src  string // the host path it masks
	dir  bool   // a folder (masked with a tmpfs), else a file (/dev/null)
}

// Env is the operator's environment as discovery reads it.
type Env func(name string) string

// discovery collects the mounts of one start.
type discovery struct {
	ws     string
	homes  []string
	denied []string
	tc     Toolchains
	seen   map[string]bool
}

// DiscoverToolchains finds the operator's toolchains from env (the
// operator's environment, os.Getenv in production: the toolchains'
// variables and PATH; the home folders and Guildhall's own folders come
// from the process's environment, as for the rest of the sandbox) for a
// sandbox of workspace ws (canonical), with the operator's
// sandbox.readOnly paths (canonical, from the policy) added. It runs
// `go env` once, bounded by ctx and goEnvTimeout, outside the workspace.
func DiscoverToolchains(ctx context.Context, env Env, ws string, readOnly []string) Toolchains {
	h := hostPaths()
	d := &discovery{ws: ws, homes: h.homes, denied: h.denied(), seen: map[string]bool{},
		tc: Toolchains{Missing: map[string]string{}}}
	home := h.envHome
	in := func(rel string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(home, rel)
	}
	or := func(v, def string) string {
		if filepath.IsAbs(v) {
			return v
		}
		return def
	}
	cacheHome := or(env("XDG_CACHE_HOME"), in(".cache"))
	dataHome := or(env("XDG_DATA_HOME"), in(".local/share"))
	join := func(base, rel string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(base, rel)
	}

	d.goToolchain(ctx, env)

	n := d.count()
	d.add("rust", "CARGO_HOME", or(env("CARGO_HOME"), in(".cargo")))
	d.add("rust", "RUSTUP_HOME", or(env("RUSTUP_HOME"), in(".rustup")))
	d.missing("rust", n, "no CARGO_HOME or ~/.cargo, RUSTUP_HOME or ~/.rustup")

	d.add("node", "NVM_DIR", or(env("NVM_DIR"), in(".nvm")))
	d.add("node", "VOLTA_HOME", or(env("VOLTA_HOME"), in(".volta")))
	d.add("node", "FNM_DIR", or(env("FNM_DIR"), join(dataHome, "fnm")))
	d.add("node", "FNM_DIR", in(".fnm"))
	d.add("node", "npm cache", or(env("npm_config_cache"), in(".npm")))
	d.add("node", "bun", or(env("BUN_INSTALL"), in(".bun")))

	n = d.count()
	d.add("python", "PYENV_ROOT", or(env("PYENV_ROOT"), in(".pyenv")))
	userBase := or(env("PYTHONUSERBASE"), in(".local"))
	d.add("python", "user scripts", join(userBase, "bin"))
	if userBase != "" {
		sites, _ := filepath.Glob(filepath.Join(userBase, "lib", "python*", "site-packages"))
		for _, s := range sites {
			d.add("python", "user site-packages", s)
		}
	}
	d.add("python", "uv cache", or(env("UV_CACHE_DIR"), join(cacheHome, "uv")))
	d.add("python", "uv pythons and tools", join(dataHome, "uv"))
	d.add("python", "pip cache", or(env("PIP_CACHE_DIR"), join(cacheHome, "pip")))
	d.add("python", "CONDA_PREFIX", env("CONDA_PREFIX"))
	if exe := env("CONDA_EXE"); filepath.IsAbs(exe) {
		d.add("python", "conda", filepath.Dir(filepath.Dir(exe)))
	}
	for _, c := range []string{"miniconda3", "anaconda3", "miniforge3", "mambaforge", ".conda"} {
		d.add("python", "conda", in(c))
	}
	d.missing("python", n, "no PYENV_ROOT, user site-packages, uv or conda under HOME; a python outside HOME is seen as it is")

	d.add("java", "JAVA_HOME", env("JAVA_HOME"))
	d.add("java", "Maven repository", in(".m2"))
	d.add("java", "GRADLE_USER_HOME", or(env("GRADLE_USER_HOME"), in(".gradle")))
	d.add("java", "SDKMAN_DIR", or(env("SDKMAN_DIR"), in(".sdkman")))

	d.pathEntries(env("PATH"))
	for _, p := range readOnly {
		d.add("operator", "sandbox.readOnly", p)
	}
	d.finish()
	return d.tc
}

func (d *discovery) count() int { return len(d.tc.Mounts) }

func (d *discovery) missing(tool string, before int, why string) {
	if len(d.tc.Mounts) == before {
		d.tc.Missing[tool] = why
	}
}

// goToolchain asks the operator's go where its root, module cache and
// GOPATH are. The program is looked up on the operator's PATH, never in
// the workspace, and run outside it with GOTOOLCHAIN=local, so that no
// go.mod or go.work of the workspace can make it fetch or run a
// toolchain of its choosing.
func (d *discovery) goToolchain(ctx context.Context, env Env) {
	goBin, err := lookAbsPath("go", env("PATH"))
	if err != nil || within(goBin, d.ws) {
		d.tc.Missing["go"] = "no `go` on PATH"
		return
	}
	ctx, cancel := context.WithTimeout(ctx, goEnvTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "env", "GOROOT", "GOMODCACHE", "GOPATH")
	// The go command writes its telemetry counters under the user's
	// configuration folder at every start; discovery should leave no trace,
	// so it gets a configuration folder of its own, and the operator's
	// `go env -w` settings by name (GOENV).
	goenv := env("GOENV")
	if goenv == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			goenv = filepath.Join(dir, "go", "env")
		}
	}
	scratch, err := os.MkdirTemp("", "guildhall-goenv-")
	if err != nil {
		d.tc.Missing["go"] = "`go env`: " + err.Error()
		return
	}
	defer os.RemoveAll(scratch)
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "GOWORK=off", "GOENV="+goenv, "XDG_CONFIG_HOME="+scratch)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		d.tc.Missing["go"] = "`go env` failed: " + firstLine(err.Error())
		return
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		d.tc.Missing["go"] = "`go env` printed an unexpected answer"
		return
	}
	d.add("go", "GOROOT", lines[0])
	d.add("go", "GOMODCACHE", lines[1])
	for _, gp := range filepath.SplitList(lines[2]) {
		if filepath.IsAbs(gp) {
			d.add("go", "GOPATH/bin", filepath.Join(gp, "bin"))
		}
	}
}

// lookAbsPath finds prog on path (the operator's PATH), absolute entries
// only: a relative entry ("." or "bin") would find the workspace's.
func lookAbsPath(prog, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// buildPrograms are the programs of builds, checkers and test runners: a
// PATH entry under a home folder that holds one is mounted.
var buildPrograms = []string{
	"go", "gofmt", "gopls", "staticcheck", "golangci-lint",
	"cargo", "rustc", "rustup", "rustfmt", "cargo-clippy",
	"node", "npm", "npx", "yarn", "pnpm", "bun", "deno", "tsc", "eslint", "jest", "vitest",
	"python", "python3", "pip", "pip3", "uv", "poetry", "pdm", "pytest", "tox", "nox", "ruff", "mypy", "black", "pyright",
	"java", "javac", "mvn", "gradle", "kotlinc",
	"make", "cmake", "ninja", "bazel", "just",
}

// pathEntries mounts the PATH entries under a home folder that hold a
// build program, and for each such program that is a link to somewhere
// else under a home, its installation (the folder above its bin/).
func (d *discovery) pathEntries(path string) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || !d.underHome(canonical(dir)) {
			continue
		}
		for _, prog := range buildPrograms {
			p := filepath.Join(dir, prog)
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			d.add("path", "PATH entry", dir)
			if fi.Mode()&os.ModeSymlink != 0 {
				if t, err := filepath.EvalSymlinks(p); err == nil && d.underHome(t) {
					inst := filepath.Dir(t)
					if filepath.Base(inst) == "bin" {
						inst = filepath.Dir(inst)
					}
					d.add("path", "installation of "+prog, inst)
				}
			}
		}
	}
}

func (d *discovery) underHome(p string) bool {
	for _, h := range d.homes {
		if within(p, h) {
			return true
		}
	}
	return false
}

// add records p as a mount when it exists and may be shown: never the
// workspace or a path in it, never a home folder or a folder holding one,
// never a kernel, device or daemon tree, never a denylisted path or a path
// inside one. A path through links is mounted at its target too.
func (d *discovery) add(tool, what, p string) {
	if p == "" || !filepath.IsAbs(p) || len(d.tc.Mounts) >= maxToolchainMounts {
		return
	}
	p = filepath.Clean(p)
	src, err := filepath.EvalSymlinks(p)
	if err != nil {
		return
	}
	if !d.mountable(p) || !d.mountable(src) {
		return
	}
	for _, at := range dedupe([]string{src, p}) {
		if d.seen[at] {
			continue
		}
		d.seen[at] = true
		d.tc.Mounts = append(d.tc.Mounts, Mount{Tool: tool, What: what, Path: at, Src: src})
	}
}

func (d *discovery) mountable(p string) bool {
	if p == "/" || within(p, d.ws) || within(d.ws, p) {
		return false
	}
	for _, h := range d.homes {
		if within(h, p) {
			return false
		}
	}
	for _, sys := range []string{"/proc", "/sys", "/dev", "/run", "/var/run"} {
		if within(p, sys) {
			return false
		}
	}
	_, denied := deniedWithin(d.denied, p)
	return !denied
}

// finish drops mounts inside another (they are shown by it), keeping the
// order they were found in, and lists the denylisted paths inside them.
func (d *discovery) finish() {
	var kept []Mount
	for _, m := range d.tc.Mounts {
		inside := false
		for _, o := range d.tc.Mounts {
			if o.Path != m.Path && within(m.Path, o.Path) && within(m.Src, o.Src) {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, m)
		}
	}
	d.tc.Mounts = kept
	d.tc.remask(d.denied)
}

// remask lists the denylisted paths (denied, existing now) inside the
// mounts, as seen inside. It runs at discovery and again at every start
// of the sandbox, so that a credential file made during the run (a
// `cargo login` in another terminal) is masked from the next start on.
func (t *Toolchains) remask(denied []string) {
	t.Masks, t.masks = nil, nil
	seen := map[string]bool{}
	for _, m := range t.Mounts {
		inside, _ := deniedWithin(denied, m.Src)
		for _, den := range inside {
			rel, err := filepath.Rel(m.Src, den)
			fi, lerr := os.Lstat(den)
			at := filepath.Join(m.Path, rel)
			// A link is masked where it leads (denied lists its target
			// too); masking the link itself would follow it.
			if err != nil || lerr != nil || seen[at] || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			seen[at] = true
			t.Masks = append(t.Masks, at)
			t.masks = append(t.masks, mask{path: at, src: den, dir: fi.IsDir()})
		}
	}
}

// Of returns the mounts of one toolchain.
func (t Toolchains) Of(tool string) []Mount {
	var out []Mount
	for _, m := range t.Mounts {
		if m.Tool == tool {
			out = append(out, m)
		}
	}
	return out
}

// operatorPath is the path of the operator's tool mount named what, with
// rel joined, when that is a folder there; else "".
func (t Toolchains) operatorPath(tool, what, rel string) string {
	for _, m := range t.Of(tool) {
		if m.What == what {
			if p := filepath.Join(m.Path, rel); isDir(p) {
				return p
			}
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
