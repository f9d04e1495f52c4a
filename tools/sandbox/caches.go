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
	"os"
	"path/filepath"
	"strings"
)

// buildCache is one writable cache of a workspace.
type buildCache struct {
	env  string // the variable pointed at it
	name string // its folder's name
	path string // canonical host path, bound at the same path inside
}

// cacheKinds are the caches, by variable and folder name. CARGO_TARGET_DIR
// is pointed at its cache only when the command's environment sets it
// outside the workspace (cargo's default, target/ in the workspace, is
// writable already).
var cacheKinds = []struct{ env, name string }{
	{"GOCACHE", "go-build"},
	{"PIP_CACHE_DIR", "pip"},
	{"UV_CACHE_DIR", "uv"},
	{"npm_config_cache", "npm"},
	{"CARGO_TARGET_DIR", "cargo-target"},
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

// goModKind is the module cache a workspace gets when its network allows
// the Go module proxy: the operator's module cache is read-only, and a
// download must go somewhere (goDownloadEnv).
var goModKind = struct{ env, name string }{"GOMODCACHE", "go-mod"}

// ensureCaches creates ws's caches (private to the operator) and returns
// them, with a module cache of its own when goMod. It refuses a cache
// folder inside the workspace or holding it, and a cache path that is not
// the folder it was made as (a link on its way).
func ensureCaches(ws string, goMod bool) ([]buildCache, error) {
	dir, err := WorkspaceCacheDir(ws)
	if err != nil {
		return nil, err
	}
	if within(dir, ws) || within(ws, dir) {
		return nil, fmt.Errorf("the build cache folder %s and the workspace overlap", dir)
	}
	var out []buildCache
	kinds := cacheKinds
	if goMod {
		kinds = append(append(kinds[:0:0], kinds...), goModKind)
	}
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
		path[c.env] = c.path
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
		if !kept[c.env] && c.env != "CARGO_TARGET_DIR" {
			out = append(out, c.env+"="+c.path)
		}
	}
	return out
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
