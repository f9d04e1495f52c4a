package sandbox

// What the sandbox will show a workspace's builds, in words, for
// `guildhall check` and a workspace's first run: for each toolchain the
// project's files call for, what is mounted read-only, what is missing,
// and whether the network lets it download what is not installed. A
// build that cannot work in the box is then known before the first
// command fails. The lines carry paths of the host and the workspace;
// the caller sanitizes them for the terminal.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Project is one toolchain a workspace's files call for.
type Project struct {
	Tool   string // "go", "rust", "node", "python", "java"
	Marker string // the file that says so: "go.mod", ...
}

// projectMarkers are the files that name a toolchain, in report order.
var projectMarkers = []Project{
	{"go", "go.mod"}, {"rust", "Cargo.toml"}, {"node", "package.json"},
	{"python", "pyproject.toml"}, {"python", "requirements.txt"}, {"python", "setup.py"},
	{"java", "pom.xml"}, {"java", "build.gradle"}, {"java", "build.gradle.kts"},
}

// ecosystems are, per toolchain, its programs, the preset its downloads
// need, a host of that preset, and the command that downloads.
var ecosystems = map[string]struct {
	programs []string
	preset   string
	host     string
	fetch    string
}{
	"go":     {[]string{"go"}, "go", "proxy.golang.org", "`go mod download`"},
	"rust":   {[]string{"cargo"}, "crates", "index.crates.io", "`cargo fetch`"},
	"node":   {[]string{"node", "npm"}, "npm", "registry.npmjs.org", "`npm ci`"},
	"python": {[]string{"python3", "pip", "uv"}, "pypi", "pypi.org", "`pip install`"},
	"java":   {[]string{"java", "mvn", "gradle"}, "maven", "repo.maven.apache.org", "fetching dependencies"},
}

// DetectProjects lists the toolchains ws's top-level files call for, one
// entry per toolchain (its first marker). Only regular files count.
func DetectProjects(ws string) []Project {
	var out []Project
	seen := map[string]bool{}
	for _, m := range projectMarkers {
		if seen[m.Tool] {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(ws, m.Marker)); err == nil && fi.Mode().IsRegular() {
			seen[m.Tool] = true
			out = append(out, m)
		}
	}
	return out
}

// Report describes, one line each, what the sandbox of policy p shows
// the projects of ws, with t the toolchains found: the mounts of each,
// what is missing, the network's word on downloads; then the operator's
// read-only paths, the masked credential stores, and the build caches.
// Without a project or an operator's path there is nothing to say.
// path, when set, is the operator's PATH, to say where a program outside
// HOME comes from.
func (t Toolchains) Report(p Policy, ws, path string, projects []Project) []string {
	if len(projects) == 0 && len(t.Of("operator")) == 0 {
		return nil
	}
	var out []string
	for _, pr := range projects {
		out = append(out, t.projectLine(p, ws, path, pr))
	}
	if ms := t.Of("operator"); len(ms) > 0 {
		out = append(out, "sandbox.readOnly: "+mountList(ms)+" mounted read-only")
	}
	if len(t.Masks) > 0 {
		out = append(out, "masked inside them (credentials): "+strings.Join(t.Masks, ", "))
	}
	if dir, err := WorkspaceCacheDir(ws); err == nil {
		kinds := policyCaches(p)
		names := make([]string, 0, len(kinds))
		for _, k := range kinds {
			names = append(names, k.setting())
		}
		out = append(out, fmt.Sprintf("build caches (writable, this workspace's own): %s (%s)", dir, strings.Join(names, ", ")))
	}
	return out
}

func (t Toolchains) projectLine(p Policy, ws, path string, pr Project) string {
	eco := ecosystems[pr.Tool]
	head := pr.Tool + " (" + pr.Marker + "): "
	var parts []string
	if ms := t.Of(pr.Tool); len(ms) > 0 {
		parts = append(parts, mountList(ms)+" mounted read-only")
	} else if why := t.Missing[pr.Tool]; why != "" {
		parts = append(parts, "missing: "+why)
	}
	found := false
	for _, prog := range eco.programs {
		if bin, err := lookAbsPath(prog, path); err == nil {
			parts = append(parts, prog+" is "+bin)
			found = true
			break
		}
	}
	if !found {
		parts = append(parts, "missing: no "+strings.Join(eco.programs, ", ")+" on PATH")
	}
	switch pr.Tool {
	case "node":
		if isDir(filepath.Join(ws, "node_modules")) {
			parts = append(parts, "node_modules present")
		} else {
			parts = append(parts, "no node_modules yet")
		}
	case "python":
		for _, v := range []string{".venv", "venv"} {
			if isDir(filepath.Join(ws, v)) {
				parts = append(parts, "workspace venv "+v)
				break
			}
		}
	}
	parts = append(parts, networkWords(p, eco.preset, eco.host, eco.fetch))
	return head + strings.Join(parts, "; ")
}

// downloadCacheOf is what the download cache fed from host is
// (downloadKinds), or "" where downloads go to a build cache (npm, pip).
func downloadCacheOf(host string) string {
	for _, k := range downloadKinds {
		if k.host == host {
			return k.what
		}
	}
	return ""
}

// networkWords says whether the network lets fetch download.
func networkWords(p Policy, preset, host, fetch string) string {
	switch {
	case p.Network() == NetworkOff:
		return fmt.Sprintf("network off: %s needs \"network\": \"allowlist\" and sandbox.allow [%q]", fetch, preset)
	case hostAllowed(p, host) && downloadCacheOf(host) != "":
		return fmt.Sprintf("network allowlist: %s may download (%s allowed) into the workspace's own %s", fetch, host, downloadCacheOf(host))
	case hostAllowed(p, host):
		return fmt.Sprintf("network allowlist: %s may download (%s allowed)", fetch, host)
	default:
		return fmt.Sprintf("network allowlist: %s needs sandbox.allow [%q]", fetch, preset)
	}
}

// mountList is "GOROOT /usr/local/go and GOMODCACHE /home/you/go/pkg/mod".
func mountList(ms []Mount) string {
	words := make([]string, 0, len(ms))
	for _, m := range ms {
		w := m.What + " " + m.Path
		if m.Src != m.Path {
			w += " (-> " + m.Src + ")"
		}
		words = append(words, w)
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
