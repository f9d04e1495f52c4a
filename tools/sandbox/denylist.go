package sandbox

// The credential denylist: the places under a home folder where the
// operator's keys, tokens and sessions live. HOME is masked in every
// sandbox as a whole, so the list matters wherever part of a home is
// shown again: a toolchain mount (toolchains.go), an operator's
// sandbox.readOnly entry, or a writable path (CheckWritable). A path on
// the list is never mounted; a mount that contains one has it masked (an
// empty read-only tmpfs over a folder, /dev/null over a file), and a mount
// inside one is dropped. docs/security.md lists the same entries.

import (
	"os"
	"path/filepath"
)

// homeSecrets are the denylisted paths, relative to a home folder.
var homeSecrets = []string{
	// Keys and cloud, cluster and registry credentials.
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".config/gcloud", ".config/gh",
	".netrc", ".git-credentials", ".password-store", ".pgpass",
	// Package registries' tokens: npm's and PyPI's configuration files,
	// cargo's registry token, Maven's server passwords and Gradle's
	// properties (signing keys, repository passwords).
	".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
	// Keyrings and browser profiles (cookies, saved passwords).
	".local/share/keyrings", ".mozilla", ".config/google-chrome", ".config/chromium",
	".config/BraveSoftware",
}

// denied lists the denylisted paths that exist on this host, each as
// written and, when it is a link, also its target: the credential stores
// under every home folder, Guildhall's own state, configuration and cache
// folders and the user runtime folder (agent sockets).
func (h host) denied() []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if _, err := os.Lstat(p); err != nil {
			return
		}
		out = append(out, p)
		if c, err := filepath.EvalSymlinks(p); err == nil && c != p {
			out = append(out, c)
		}
	}
	for _, home := range h.homes {
		for _, s := range homeSecrets {
			add(filepath.Join(home, s))
		}
	}
	for _, p := range []string{h.runtimeDir, h.state, h.config, h.cache} {
		add(p)
	}
	return dedupe(out)
}

// deniedWithin are the entries of denied that lie inside dir (dir itself
// excluded), and whether dir lies inside one of them (or is one).
func deniedWithin(denied []string, dir string) (inside []string, isDenied bool) {
	for _, d := range denied {
		switch {
		case within(dir, d):
			return nil, true
		case within(d, dir):
			inside = append(inside, d)
		}
	}
	return inside, false
}
