package sandbox

// Per-workspace build caches. A sandboxed build must not write the
// operator's own caches (a hostile command would poison them for every
// later build on the host), and a cache that starts cold at every run makes
// a small `go test` take twenty seconds. So each workspace gets writable
// caches of its own under Guildhall's cache folder,
// os.UserCacheDir()/guildhall/sandbox-cache/<hash of the workspace path>/,
// bound read-write at their real paths, with the build tools' variables
// pointed there. What a hostile command leaves in them reaches only later
// commands of the same workspace, in the sandbox. docs/operations.md
// describes the folder.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// buildCache is one writable cache of a workspace.
type buildCache struct {
	env  string // the variable pointed at it
	name string // its folder's name
	path string // canonical host path, bound at the same path inside
}

// cacheKind is one writable cache a workspace may get: the variable
// pointed at it ("" for Maven's, which is a property in MAVEN_OPTS), its
// folder's name, and, for a download cache, a host of the registry the
// network must allow for it to be made and what it is, in the report's
// words.
type cacheKind struct{ env, name, host, what string }

// setting is what points the tools at the cache, in the report's words.
func (k cacheKind) setting() string {
	if k.env == "" {
		return "MAVEN_OPTS -Dmaven.repo.local"
	}
	return k.env
}

// cacheKinds are the caches every workspace gets. CARGO_TARGET_DIR is
// pointed at its cache only when the command's environment sets it
// outside the workspace (cargo's default, target/ in the workspace, is
// writable already). Gradle writes its user home at every start (daemon
// registry, native libraries, file hashes), so it gets one of its own,
// reading the operator's dependency cache through GRADLE_RO_DEP_CACHE
// (downloadEnv).
var cacheKinds = []cacheKind{
	{"GOCACHE", "go-build", "", ""},
	{"PIP_CACHE_DIR", "pip", "", ""},
	{"UV_CACHE_DIR", "uv", "", ""},
	{"npm_config_cache", "npm", "", ""},
	{"CARGO_TARGET_DIR", "cargo-target", "", ""},
	{"GRADLE_USER_HOME", "gradle-home", "", ""},
}

// downloadKinds are the caches a workspace gets when its network allows
// the registry they download from. The operator's module cache,
// CARGO_HOME and Maven repository are read-only (a hostile download would
// poison them for the host), and a download must go somewhere: into the
// workspace's own, which downloadEnv points the tool at, with what the
// operator has still read from the operator's where the tool can.
var downloadKinds = []cacheKind{
	{"GOMODCACHE", "go-mod", "proxy.golang.org", "module cache"},
	{"CARGO_HOME", "cargo-home", "index.crates.io", "CARGO_HOME"},
	{"", "m2-repository", "repo.maven.apache.org", "Maven repository"},
}

// WorkspaceCacheDir is the folder of ws's build caches (ws canonical).
func WorkspaceCacheDir(ws string) (string, error) {
	root := hostPaths().cache
	if root == "" {
		return "", errors.New("no cache folder: neither XDG_CACHE_HOME nor HOME is set")
	}
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join(root, "sandbox-cache", hex.EncodeToString(sum[:8])), nil
}

// kindsFor is the caches of a workspace whose network lets commands reach
// a host when allows says so.
func kindsFor(allows func(host string) bool) []cacheKind {
	kinds := append([]cacheKind(nil), cacheKinds...)
	for _, k := range downloadKinds {
		if allows(k.host) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// ensureCaches creates ws's caches of kinds (private to the operator) and
// returns them. It refuses a cache folder inside the workspace or holding
// it, and a cache path that is not the folder it was made as (a link on
// its way).
func ensureCaches(ws string, kinds []cacheKind) ([]buildCache, error) {
	dir, err := WorkspaceCacheDir(ws)
	if err != nil {
		return nil, err
	}
	if within(dir, ws) || within(ws, dir) {
		return nil, fmt.Errorf("the build cache folder %s and the workspace overlap", dir)
	}
	var out []buildCache
	for _, k := range kinds {
		p := filepath.Join(dir, k.name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("create the build cache %s: %w", p, err)
		}
		if c, err := filepath.EvalSymlinks(p); err != nil || c != p {
			return nil, fmt.Errorf("the build cache %s is not the folder it was made as (a link on its way?)", p)
		}
		out = append(out, buildCache{env: k.env, name: k.name, path: p})
	}
	return out, nil
}

// cacheEnv points env's cache variables at the workspace's caches: each
// replaced, or added when env lacks it, except where env names a folder
// the command may write anyway (writable: the workspace, an operator's
// writable path, such as the benchmark harness's shared build cache),
// which is kept. CARGO_TARGET_DIR is only ever replaced, never added:
// cargo's default, target/ in the workspace, is writable already.
func cacheEnv(env []string, caches []buildCache, writable func(string) bool) []string {
	if len(caches) == 0 {
		return env
	}
	path := map[string]string{}
	for _, c := range caches {
		if c.env != "" {
			path[c.env] = c.path
		}
	}
	kept := map[string]bool{}
	out := make([]string, 0, len(env)+len(caches))
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if _, ours := path[name]; !ours {
			out = append(out, kv)
			continue
		}
		if !filepath.IsAbs(val) || writable(filepath.Clean(val)) {
			// A relative path is the workspace's (the command's folder).
			out = append(out, kv)
			kept[name] = true
		} else if name == "CARGO_TARGET_DIR" {
			out = append(out, name+"="+path[name])
			kept[name] = true
		}
	}
	for _, c := range caches {
		if c.env != "" && !kept[c.env] && c.env != "CARGO_TARGET_DIR" {
			out = append(out, c.env+"="+c.path)
		}
	}
	return out
}

// downloadEnv points the tools at the workspace's download caches, where
// env points at them (a variable naming a folder the command may write
// anyway was kept by cacheEnv): go takes what the operator's module cache
// holds from it (goDownloadEnv); Maven gets its local repository in
// MAVEN_OPTS, with the operator's as a read-only tail (Maven 3.9 and
// later read it; older ones download again); Gradle reads the operator's
// dependency cache as its read-only cache. tc is where the operator's
// are.
func downloadEnv(env []string, caches []buildCache, tc Toolchains) []string {
	for _, c := range caches {
		switch c.name {
		case "go-mod":
			if slices.Contains(env, c.env+"="+c.path) {
				env = goDownloadEnv(env, tc.operatorPath("go", "GOMODCACHE", ""))
			}
		case "m2-repository":
			env = mavenEnv(env, c.path, tc.operatorPath("java", "Maven repository", "repository"))
		case "gradle-home":
			if ro := tc.operatorPath("java", "GRADLE_USER_HOME", "caches"); ro != "" && slices.Contains(env, c.env+"="+c.path) {
				env = setDefault(env, "GRADLE_RO_DEP_CACHE", ro)
			}
		}
	}
	return env
}

// goDownloadEnv lets go download modules into the workspace's own module
// cache while still using the operator's, read-only: GOPROXY is the
// operator's cache's download folder first (file://, no network), then
// what it was (the default when unset); -modcacherw keeps the workspace's
// cache removable. env already has GOMODCACHE pointed at the workspace's.
// A GOPROXY of "off" stays off.
func goDownloadEnv(env []string, operatorModCache string) []string {
	proxy, flags := "https://proxy.golang.org,direct", ""
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "GOPROXY":
			proxy = val
		case "GOFLAGS":
			flags = val
		default:
			out = append(out, kv)
		}
	}
	if proxy != "off" && operatorModCache != "" {
		proxy = "file://" + filepath.Join(operatorModCache, "cache", "download") + "," + proxy
	}
	return append(out, "GOPROXY="+proxy, "GOFLAGS="+strings.TrimSpace(flags+" -modcacherw"))
}

// mavenEnv adds the workspace's local repository (and the operator's, as
// its read-only tail, when there is one) to MAVEN_OPTS, unless MAVEN_OPTS
// names a local repository already.
func mavenEnv(env []string, repo, operatorRepo string) []string {
	opts := ""
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MAVEN_OPTS="); ok {
			opts = v
			continue
		}
		out = append(out, kv)
	}
	if !strings.Contains(opts, "-Dmaven.repo.local=") {
		opts = strings.TrimSpace(opts + " -Dmaven.repo.local=" + repo)
		if operatorRepo != "" {
			opts += " -Dmaven.repo.local.tail=" + operatorRepo
		}
	}
	return append(out, "MAVEN_OPTS="+opts)
}

// setDefault adds name=val to env unless env sets name.
func setDefault(env []string, name, val string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return env
		}
	}
	return append(env, name+"="+val)
}

// cargoConfigs are the files of CARGO_HOME cargo reads its configuration
// from (registries, mirrors, build flags); the registry token is in
// credentials.toml, which is on the denylist and never copied.
var cargoConfigs = []string{"config.toml", "config"}

// seedCargoHome gives the workspace's CARGO_HOME (home) a copy of the
// operator's cargo configuration (from operatorHome, "" when there is
// none), made again at every start: a command of the workspace may change
// the copy, as it may change the workspace's own .cargo/config.toml, and
// what it changed must not outlive the run's next start. Each file is
// written beside its place and renamed over it, so that a link left there
// is replaced, never followed; a configuration the operator removed is
// removed.
func seedCargoHome(home, operatorHome string) error {
	for _, name := range cargoConfigs {
		dst := filepath.Join(home, name)
		var data []byte
		if operatorHome != "" {
			b, err := os.ReadFile(filepath.Join(operatorHome, name))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("read the cargo configuration: %w", err)
			}
			data = b
		}
		if data == nil {
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove the workspace's cargo configuration: %w", err)
			}
			continue
		}
		tmp, err := os.CreateTemp(home, ".config-*")
		if err != nil {
			return fmt.Errorf("copy the cargo configuration: %w", err)
		}
		_, werr := tmp.Write(data)
		if err := errors.Join(werr, tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("copy the cargo configuration: %w", err)
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("copy the cargo configuration: %w", err)
		}
	}
	return nil
}
