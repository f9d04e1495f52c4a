package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// glob_files limits: matches returned, entries walked, brace expansions.
const (
	globMaxMatches    = 1000
	globMaxWalk       = 200_000
	globMaxAlternates = 64
)

// globFiles is glob_files {pattern}: workspace files whose relative path
// matches a glob. `*` and `?` stay within one path segment, `**` spans any
// number of segments, [...] is a class, {a,b} is alternation. Symlinks are
// never followed into directories, and .git and .orchestration are skipped.
type globFiles struct{}

func (globFiles) Manifest() Manifest { return manifestOf("glob_files") }

func (globFiles) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Pattern string `json:"pattern"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	globs, r := compileGlob(a.Pattern)
	if r != nil {
		return *r
	}
	ws := env.Workspace
	var matches []string
	truncated := false
	limited, err := ws.walk(ctx, ".", walkOptions{skipGit: true, maxEntries: globMaxWalk}, func(rel string, d fs.DirEntry) error {
		if rel == "." || d.IsDir() || !globMatchAny(globs, rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symlink is listed only when it leads to a regular file
			// inside the workspace; os.Root refuses any other.
			fi, err := ws.root.Stat(rel)
			if err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		}
		if len(matches) >= globMaxMatches {
			truncated = true
			return fs.SkipAll
		}
		matches = append(matches, rel)
		return nil
	})
	if err != nil {
		return pathFail(a.Pattern, err)
	}
	sort.Strings(matches)
	if matches == nil {
		matches = []string{}
	}
	return OK(map[string]any{"pattern": a.Pattern, "matches": matches, "truncated": truncated || limited})
}

// compileGlob validates a pattern and splits it into segment lists, one per
// brace alternative.
func compileGlob(pattern string) ([][]string, *Result) {
	bad := func(reason string) ([][]string, *Result) {
		r := Fail(KindInvalidArguments, fmt.Sprintf("pattern %s: %s", showPath(pattern), reason))
		return nil, &r
	}
	switch {
	case pattern == "":
		return bad("empty")
	case strings.IndexByte(pattern, 0) >= 0:
		return bad(reasonNUL)
	case len(pattern) > maxPathLen:
		return bad("too long")
	case strings.HasPrefix(pattern, "/"):
		r := Fail(KindPermissionDenied, fmt.Sprintf("pattern %s: absolute patterns are outside the workspace; use a workspace-relative pattern", showPath(pattern)))
		return nil, &r
	}
	alts, err := expandBraces(pattern, globMaxAlternates)
	if err != "" {
		return bad(err)
	}
	var out [][]string
	for _, alt := range alts {
		for strings.HasPrefix(alt, "./") {
			alt = alt[2:]
		}
		segs := strings.Split(alt, "/")
		for i, s := range segs {
			if s == ".." {
				r := Fail(KindPermissionDenied, fmt.Sprintf("pattern %s: %s", showPath(pattern), reasonOutside))
				return nil, &r
			}
			if confusableDots(s) {
				r := Fail(KindPermissionDenied, fmt.Sprintf("pattern %s: %s", showPath(pattern), reasonConfusable))
				return nil, &r
			}
			if i == 0 && isBookkeeping(s) {
				r := Fail(KindPermissionDenied, fmt.Sprintf("pattern %s: %s", showPath(pattern), reasonBookkeeping))
				return nil, &r
			}
			if s != "**" {
				if _, err := path.Match(s, ""); err != nil {
					return bad("malformed [...] class")
				}
			}
		}
		out = append(out, segs)
	}
	return out, nil
}

// expandBraces expands {a,b} alternation (nested allowed) up to max results.
func expandBraces(p string, max int) ([]string, string) {
	depth, open := 0, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var parts []string
			start, d := open+1, 0
			for j := open + 1; j < i; j++ {
				switch p[j] {
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						parts = append(parts, p[start:j])
						start = j + 1
					}
				}
			}
			parts = append(parts, p[start:i])
			var out []string
			for _, part := range parts {
				rest, err := expandBraces(p[:open]+part+p[i+1:], max)
				if err != "" {
					return nil, err
				}
				out = append(out, rest...)
				if len(out) > max {
					return nil, fmt.Sprintf("more than %d {…} alternatives", max)
				}
			}
			return out, ""
		}
	}
	if depth != 0 {
		return nil, "unclosed {"
	}
	return []string{p}, ""
}

func globMatchAny(globs [][]string, rel string) bool {
	name := strings.Split(rel, "/")
	for _, g := range globs {
		if globMatch(g, name) {
			return true
		}
	}
	return false
}

// globMatch matches path segments against pattern segments, `**` matching
// zero or more whole segments. It is a dynamic programme over (pattern,
// name) positions, so it runs in O(len(pat)·len(name)) whatever the `**`s.
func globMatch(pat, name []string) bool {
	// ok[j] reports whether pat[i:] matches name[j:], computed from the end.
	ok := make([]bool, len(name)+1)
	ok[len(name)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		next := make([]bool, len(name)+1)
		if pat[i] == "**" {
			next[len(name)] = ok[len(name)]
			for j := len(name) - 1; j >= 0; j-- {
				next[j] = ok[j] || next[j+1]
			}
		} else {
			for j := len(name) - 1; j >= 0; j-- {
				if ok[j+1] {
					m, _ := path.Match(pat[i], name[j])
					next[j] = m
				}
			}
		}
		ok = next
	}
	return ok[0]
}
