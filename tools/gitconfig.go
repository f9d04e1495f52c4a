package tools

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Bounds on the repository config the tools read.
const (
	gitConfigMaxChars = 1 << 20
	gitMaxIncludes    = 32
)

// gitConfigEntry is one setting of `git config --null --list --show-origin`.
type gitConfigEntry struct {
	origin string // "file:<path>", "command line:", ...
	key    string // section and name lower-cased, subsection as written
	value  string
}

// configPolicy reads the repository's config the way the commands will and
// returns the settings that neutralise every filter driver it names, or a
// refusal. Before anything else reads an included file, every include
// directive is checked: a config file outside the workspace is never read.
//
// Filter drivers are neutralised rather than refused, so that a repository
// with, say, git-lfs configured can still be committed to: its clean,
// smudge and process commands become empty and required becomes false. The
// driver's name is carried whole (gitSetting), whatever bytes it holds.
//
// Hooks configured in config (hook.<name>.command, git 2.54 and later) are
// refused: core.hooksPath does not turn them off.
func (r *gitRepo) configPolicy(ctx context.Context) ([]gitSetting, error) {
	if err := r.checkIncludes(ctx); err != nil {
		return nil, err
	}
	entries, err := r.listConfig(ctx)
	if err != nil {
		return nil, err
	}
	var out []gitSetting
	seen := map[string]bool{}
	origins := map[string]bool{}
	for _, e := range entries {
		origin, ok := strings.CutPrefix(e.origin, "file:")
		if !ok {
			continue // the settings this package passes
		}
		if !origins[origin] {
			if err := r.checkOrigin(origin); err != nil {
				return nil, err
			}
			origins[origin] = true
		}
		section, sub, hasSub := splitConfigKey(e.key)
		switch {
		case section == "hook":
			return nil, refusal("the repository's config configures a hook (%s), which git may run whatever core.hooksPath says", showPath(e.key))
		case section != "filter" || !hasSub || seen[sub]:
			continue
		case strings.ContainsRune(sub, utf8.RuneError):
			// The listing reaches this process decoded as UTF-8; a name
			// that was not valid UTF-8 could not be matched exactly.
			return nil, refusal("the repository's config names a filter driver that is not valid UTF-8")
		}
		seen[sub] = true
		out = append(out,
			gitSetting{"filter." + sub + ".clean", ""},
			gitSetting{"filter." + sub + ".smudge", ""},
			gitSetting{"filter." + sub + ".process", ""},
			gitSetting{"filter." + sub + ".required", "false"})
	}
	return out, nil
}

// splitConfigKey splits a canonical key into its section and subsection:
// the subsection is everything between the first and the last dot, as git
// parses it, and may itself hold dots.
func splitConfigKey(key string) (section, sub string, hasSub bool) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", false
	}
	if first == last {
		return key[:first], "", false
	}
	return key[:first], key[first+1 : last], true
}

// listConfig lists the repository's effective config, includes followed.
func (r *gitRepo) listConfig(ctx context.Context, extra ...string) ([]gitConfigEntry, error) {
	args := append([]string{"config", "--null", "--list", "--show-origin"}, extra...)
	res, err := r.raw(ctx, gitConfigMaxChars, args...)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, &gitError{Kind: KindError, Msg: "the repository's config cannot be read: " + gitMessage(r.env, res)}
	}
	if res.stdoutCut {
		return nil, refusal("the repository's config is larger than %d characters, too large to check", gitConfigMaxChars)
	}
	entries, ok := parseGitConfig(res.Stdout)
	if !ok {
		return nil, &gitError{Kind: KindError, Msg: "the repository's config listing could not be understood"}
	}
	return entries, nil
}

// parseGitConfig parses `--null --show-origin` output: origin NUL, then key
// NUL (a key without a value) or key LF value NUL.
func parseGitConfig(out string) ([]gitConfigEntry, bool) {
	if out == "" {
		return nil, true
	}
	if !strings.HasSuffix(out, "\x00") {
		return nil, false
	}
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	if len(fields)%2 != 0 {
		return nil, false
	}
	entries := make([]gitConfigEntry, 0, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		key, value, _ := strings.Cut(fields[i+1], "\n")
		entries = append(entries, gitConfigEntry{origin: fields[i], key: key, value: value})
	}
	return entries, true
}

// checkIncludes follows the include directives of the repository's config
// without letting git read them: each file is listed with --no-includes,
// and every include.path and includeIf.<condition>.path it holds must name
// a file inside the workspace or the repository's checked git directories
// (store.GitLayout.Holds; whatever the condition) before that file is
// listed in turn.
func (r *gitRepo) checkIncludes(ctx context.Context) error {
	queue := []string{""} // "": the repository's own config files
	listed := map[string]bool{}
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		extra := []string{"--no-includes"}
		if file != "" {
			extra = append(extra, "--file", file)
		}
		entries, err := r.listConfig(ctx, extra...)
		if err != nil {
			return err
		}
		for _, e := range entries {
			origin, ok := strings.CutPrefix(e.origin, "file:")
			if !ok || !isIncludeKey(e.key) {
				continue
			}
			target, err := r.includeTarget(origin, e.key, e.value)
			if err != nil {
				return err
			}
			if target == "" || listed[target] {
				continue
			}
			if listed[target] = true; len(listed) > gitMaxIncludes {
				return refusal("the repository's config includes more than %d files", gitMaxIncludes)
			}
			queue = append(queue, target)
		}
	}
	return nil
}

func isIncludeKey(key string) bool {
	return key == "include.path" || (strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"))
}

// includeTarget resolves an include path the way git does (relative to the
// including file, joined without cleaning so ".." applies after links) and
// returns the canonical file, "" when it does not exist (git skips it), or
// a refusal when it is, or could be, outside the workspace.
//
// A refusal names the directive and the file holding it, not the path it
// includes, which may be a host path.
func (r *gitRepo) includeTarget(origin, key, path string) (string, error) {
	ws := r.layout.Workspace
	where := showPath(key) + " in " + showPath(hideWorkspace(r.env, hideGitDirs(r.layout, origin)))
	switch {
	case path == "":
		return "", nil
	case strings.HasPrefix(path, "~"), strings.HasPrefix(path, "%("):
		return "", refusal("the repository's config includes a file named by a home folder or the install prefix, outside the workspace (%s)", where)
	case strings.ContainsRune(path, utf8.RuneError), strings.ContainsRune(origin, utf8.RuneError):
		return "", refusal("the repository's config includes a file whose name is not valid UTF-8 (%s)", where)
	}
	if !filepath.IsAbs(path) {
		base := origin
		if !filepath.IsAbs(base) {
			base = ws + string(filepath.Separator) + base
		}
		path = filepath.Dir(base) + string(filepath.Separator) + path
	}
	target, err := filepath.EvalSymlinks(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && r.layout.Holds(filepath.Clean(path)):
		return "", nil
	case err != nil, !r.layout.Holds(target):
		return "", refusal("the repository's config includes a file outside the workspace (%s)", where)
	}
	return target, nil
}

// checkOrigin refuses a config setting read from a file outside the
// workspace and the repository's checked git directories (a belt to
// checkIncludes' braces: a config file that is a link out is also refused
// by checkGitTree).
func (r *gitRepo) checkOrigin(origin string) error {
	p := origin
	if !filepath.IsAbs(p) {
		p = r.layout.Workspace + string(filepath.Separator) + p
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil || !r.layout.Holds(target) || strings.ContainsRune(origin, utf8.RuneError) {
		return refusal("the repository's config reads a file outside the workspace, or one whose path is not valid UTF-8")
	}
	return nil
}
