package store

// A git directory outside the workspace. Developers work in linked
// worktrees (`git worktree add`) and submodule checkouts every day; both
// keep their git directory in another repository's .git, outside the
// checkout. The pointer to it, the workspace's `.git` file, is workspace
// content and so hostile input: a planted one can name any folder on the
// host. This file accepts such a pointer only when the folder it names
// proves, by files git itself keeps there, to be this very workspace's
// worktree or submodule git directory, and never when it lies in a
// credential store, a system folder or Guildhall's own state.

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// gitConfigMax bounds the submodule config file read for core.worktree.
const gitConfigMax = 64 << 10

// resolveLinked checks dir, the existing canonical directory outside the
// workspace ws that ws's .git file names, and returns the layout when it is
// one of:
//
//   - a linked worktree's git directory: it holds HEAD and a commondir
//     file; the common directory is a git directory (HEAD, objects/,
//     refs/) and dir is its worktrees/<name>; and dir's gitdir file, the
//     back-pointer git keeps, names this workspace's .git;
//   - a submodule's git directory: it is a git directory, it lies in
//     <super>/.git/modules/ of a superproject <super> whose working tree
//     holds the workspace, and its config's core.worktree names the
//     workspace.
//
// Neither directory may lie in, or hold, a place on the denylist
// (gitDenied), nor hold the workspace. Everything else is a *GitDirError
// naming the file that failed, with Outside set and Target the directory.
func resolveLinked(ws, dir string) (GitLayout, error) {
	refuse := func(reason string) (GitLayout, error) {
		return GitLayout{}, &GitDirError{Outside: true, Reason: "the .git file's gitdir is outside the workspace and " + reason, Target: dir}
	}
	deny := gitDenied()
	if why := badPlace(ws, dir, deny); why != "" {
		return refuse(why)
	}
	g, err := os.OpenRoot(dir)
	if err != nil {
		return refuse("cannot be opened")
	}
	defer g.Close()
	if !isRegular(g, "HEAD") {
		return refuse("is not a git directory (it has no HEAD file)")
	}
	if _, err := g.Lstat("commondir"); err == nil {
		return linkedWorktree(ws, dir, g, deny)
	}
	if !isGitDir(g) {
		return refuse("is not a git directory (it lacks objects/ or refs/)")
	}
	return linkedSubmodule(ws, dir, g)
}

// linkedWorktree checks a worktree's git directory (see resolveLinked).
func linkedWorktree(ws, dir string, g *os.Root, deny []string) (GitLayout, error) {
	refuse := func(reason string) (GitLayout, error) {
		return GitLayout{}, &GitDirError{Outside: true, Reason: "the .git file's gitdir is outside the workspace: it is a linked worktree's git directory, but " + reason, Target: dir}
	}
	b, err := readPointer(g, "commondir")
	b = bytes.TrimRight(b, "\r\n")
	if err != nil || len(b) == 0 || bytes.IndexByte(b, 0) >= 0 {
		return refuse("its commondir file does not hold a path")
	}
	common, err := filepath.EvalSymlinks(joinGitPath(dir, string(b)))
	if err != nil {
		return refuse("its commondir file names a directory that does not exist")
	}
	if why := badPlace(ws, common, deny); why != "" {
		return refuse("the repository its commondir names " + why)
	}
	c, err := os.OpenRoot(common)
	if err != nil {
		return refuse("the repository its commondir names cannot be opened")
	}
	defer c.Close()
	switch {
	case !isRegular(c, "HEAD") || !isGitDir(c):
		return refuse("its commondir file does not name a git directory (HEAD, objects/ and refs/)")
	case filepath.Dir(dir) != filepath.Join(common, "worktrees"):
		return refuse("it is not in the worktrees/ folder of the repository its commondir names")
	}
	back, err := readPointer(g, "gitdir")
	back = bytes.TrimRight(back, "\r\n")
	if err != nil || len(back) == 0 || bytes.IndexByte(back, 0) >= 0 {
		return refuse("its gitdir file (the worktree's back-pointer) does not hold a path")
	}
	if p, err := filepath.EvalSymlinks(joinGitPath(dir, string(back))); err != nil || p != filepath.Join(ws, ".git") {
		return refuse("its gitdir file (the worktree's back-pointer) names another checkout's .git, not this workspace's")
	}
	return GitLayout{Workspace: ws, GitDir: dir, CommonDir: common, Linked: LinkedWorktree}, nil
}

// linkedSubmodule checks a submodule's git directory (see resolveLinked).
func linkedSubmodule(ws, dir string, g *os.Root) (GitLayout, error) {
	refuse := func(reason string) (GitLayout, error) {
		return GitLayout{}, &GitDirError{Outside: true, Reason: "the .git file's gitdir is outside the workspace and " + reason, Target: dir}
	}
	const marker = string(filepath.Separator) + ".git" + string(filepath.Separator) + "modules" + string(filepath.Separator)
	i := strings.Index(dir, marker)
	if i <= 0 {
		return refuse("is another repository's own git directory, neither a linked worktree's (in a repository's .git/worktrees/) nor a submodule's (in a superproject's .git/modules/)")
	}
	super := dir[:i]
	if fi, err := os.Lstat(filepath.Join(super, ".git")); err != nil || !fi.IsDir() || !within(super, ws) {
		return refuse("is a submodule's git directory of a superproject whose working tree does not hold this workspace")
	}
	cfg, err := readConfigFile(g)
	if err != nil {
		return refuse("is a submodule's git directory whose config cannot be read: " + err.Error())
	}
	wt, ok := coreWorktree(cfg)
	if !ok {
		return refuse("is a submodule's git directory whose config sets no core.worktree naming this workspace")
	}
	if p, err := filepath.EvalSymlinks(joinGitPath(dir, wt)); err != nil || p != ws {
		return refuse("is a submodule's git directory whose config's core.worktree names another checkout, not this workspace")
	}
	return GitLayout{Workspace: ws, GitDir: dir, CommonDir: dir, Linked: LinkedSubmodule}, nil
}

// joinGitPath resolves a path git wrote in a file of dir: absolute as it
// is, relative to dir otherwise (joined without cleaning, so ".." applies
// after the links before it).
func joinGitPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return dir + string(filepath.Separator) + p
}

// isRegular reports whether name is a regular file in root (not a link).
func isRegular(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// isGitDir reports whether root holds objects/ and refs/ folders (not
// links), with HEAD what makes git take a folder for a git directory.
func isGitDir(root *os.Root) bool {
	for _, name := range []string{"objects", "refs"} {
		if fi, err := root.Lstat(name); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// readConfigFile reads dir's config, a small regular file.
func readConfigFile(g *os.Root) ([]byte, error) {
	return readSmallFile(g, "config", gitConfigMax, "it cannot be opened", "64 KiB")
}

// coreWorktree finds core.worktree in a config file the way git writes it
// for a submodule (`[core]` then `worktree = <path>`), taking the last one.
// It understands sections, comments, quotes and the escapes \" \\ \t \n;
// anything it cannot read with certainty (a continued line, another
// escape) makes it report none, which refuses the layout.
func coreWorktree(cfg []byte) (string, bool) {
	inCore := false
	value, found := "", false
	for _, raw := range strings.Split(string(cfg), "\n") {
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "", false
			}
			inCore = strings.EqualFold(strings.TrimSpace(line[1:end]), "core")
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if !inCore {
			continue
		}
		key, rest, hasValue := strings.Cut(line, "=")
		if !strings.EqualFold(strings.TrimSpace(key), "worktree") {
			continue
		}
		if !hasValue {
			return "", false
		}
		v, ok := configValue(strings.TrimSpace(rest))
		if !ok {
			return "", false
		}
		value, found = v, true
	}
	return value, found && value != ""
}

// configValue decodes one config value: quotes removed, escapes applied,
// a comment outside quotes dropped, trailing blanks outside quotes trimmed.
func configValue(s string) (string, bool) {
	var b strings.Builder
	quoted := false
	pending := "" // blanks kept only if more text follows
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
			continue
		case c == '\\':
			if i+1 >= len(s) {
				return "", false // a continued line
			}
			i++
			switch s[i] {
			case '"', '\\':
				c = s[i]
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			default:
				return "", false
			}
		case !quoted && (c == '#' || c == ';'):
			return b.String(), !quoted
		case !quoted && (c == ' ' || c == '\t'):
			pending += string(c)
			continue
		}
		b.WriteString(pending)
		pending = ""
		b.WriteByte(c)
	}
	return b.String(), !quoted
}

// badPlace says why the canonical directory p may not serve as a git
// directory of the workspace ws, or "": it holds the workspace, or it is,
// lies in or holds a place on deny.
func badPlace(ws, p string, deny []string) string {
	if p == ws || within(p, ws) {
		return "holds the workspace itself"
	}
	if p == "/" {
		return "is the root folder"
	}
	for _, d := range deny {
		if p == d || within(d, p) || within(p, d) {
			return "is in (or holds) a place the git tools never touch: a credential store, a system folder, or Guildhall's own configuration and state"
		}
	}
	return ""
}

// credentialStores are the places, relative to a home folder, that hold
// an account's credentials, keys and tokens, or a browser's profiles.
var credentialStores = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials",
	".npmrc", ".pypirc", ".password-store", ".mozilla", ".pki",
	".config/gcloud", ".config/gh", ".config/hub", ".config/git/credentials",
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
	".local/share/keyrings", ".cache/guildhall",
}

// systemPlaces are folders no worktree or submodule lives in, whose
// contents the git tools must never touch.
var systemPlaces = []string{"/etc", "/proc", "/sys", "/dev", "/run", "/var/run", "/boot"}

// gitDenied lists the canonical host paths a git directory outside the
// workspace may not be, lie in, or hold: the credential stores of the
// operator's home folders ($HOME and the account's), Guildhall's own
// configuration, state and cache (XDG or their defaults), the session's
// runtime folder, and system folders.
func gitDenied() []string {
	var homes []string
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		homes = append(homes, h)
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		homes = append(homes, u.HomeDir)
	}
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		out = append(out, filepath.Clean(p))
		if c, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, c)
		}
	}
	for _, h := range homes {
		for _, rel := range credentialStores {
			add(filepath.Join(h, rel))
		}
	}
	xdg := func(env, fallback string) {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			add(filepath.Join(v, "guildhall"))
		}
		for _, h := range homes {
			add(filepath.Join(h, fallback, "guildhall"))
		}
	}
	xdg("XDG_CONFIG_HOME", ".config")
	xdg("XDG_STATE_HOME", filepath.Join(".local", "state"))
	xdg("XDG_CACHE_HOME", ".cache")
	add(os.Getenv("XDG_RUNTIME_DIR"))
	for _, p := range systemPlaces {
		add(p)
	}
	return out
}
