package tools

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// Secrets planted outside the workspace and in .orchestration. No file tool
// may ever return one.
const (
	outsideSecret     = "TOP-SECRET-OUTSIDE"
	bookkeepingSecret = "BOOKKEEPING-SECRET"
)

// hostileFixture builds a workspace full of traps next to an outside
// directory holding secrets.
func hostileFixture(t *testing.T) (ws *Workspace, wsDir, outside string) {
	t.Helper()
	ws, wsDir = newWS(t, map[string]string{
		"dir/ok.txt": "fine\n",
		"main.go":    "package main\n\nfunc Inside() {}\n",
		".orchestration/runs/run-20250101-120000/log.jsonl": `{"type":"x","payload":"` + bookkeepingSecret + `"}` + "\n",
		".orchestration/plan.go":                            "package p\n\nfunc BookkeepingSecretFunc() {}\n// " + bookkeepingSecret + "\n",
	})
	outside = filepath.Join(filepath.Dir(wsDir), "outside")
	for name, content := range map[string]string{
		"secret.txt":     outsideSecret + "\n",
		"sub/secret.txt": outsideSecret + "\n",
		"leak.go":        "package leak\n\nfunc OutsideSecretFunc() {}\n// " + outsideSecret + "\n",
	} {
		p := filepath.Join(outside, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"linkout":        outside,
		"linkrel":        "../outside",
		"linkfile":       filepath.Join(outside, "secret.txt"),
		"passwd":         "/etc/passwd",
		"c1":             "c2",
		"c2":             "dir/c3",
		"dir/c3":         "../linkfile",
		"loop1":          "loop2",
		"loop2":          "loop1",
		"proc":           "/proc/self/root",
		"sub/deeplink":   "../../outside",
		"orchlink":       ".orchestration",
		"dir/orchparent": "../.orchestration/runs",
	}
	for link, target := range links {
		mustSymlink(t, target, filepath.Join(wsDir, link))
	}
	if err := syscall.Mkfifo(filepath.Join(wsDir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, wsDir, outside
}

// hostilePaths are traversal attempts; every one must fail closed.
func hostilePaths(wsDir, outside string) []string {
	return []string{
		"../outside/secret.txt",
		"../../etc/passwd",
		strings.Repeat("../", 40) + "etc/passwd",
		"dir/../../outside/secret.txt",
		"./../outside",
		"~/../../outside/secret.txt",
		filepath.Join(outside, "secret.txt"),
		outside,
		"/etc/passwd",
		"//etc/passwd",
		"/proc/self/root/etc/passwd",
		"/proc/self/cwd/secret.txt",
		"linkout/secret.txt",
		"linkout",
		"linkout/",
		"linkout/sub/secret.txt",
		"linkrel/secret.txt",
		"linkfile",
		"passwd",
		"c1",
		"loop1",
		"fifo",
		"proc/etc/passwd",
		"sub/deeplink/secret.txt",
		"dir/../linkout/sub/secret.txt",
		"dir/ok.txt\x00/../../outside/secret.txt",
		"\u2024\u2024/outside/secret.txt",
		"\uff0e\uff0e/outside/secret.txt",
		"\uff0e\uff0e",
		"dir/\u2025/x",
		strings.Repeat("a/", 2100) + "x",
		".orchestration",
		"./.orchestration/runs",
		".orchestration/",
		"x/../.orchestration",
		".Orchestration/runs",
		".ORCHESTRATION",
		"dir/../.orchestration/runs/run-20250101-120000/log.jsonl",
		"orchlink/runs/run-20250101-120000/log.jsonl",
		"orchlink",
		"dir/orchparent/run-20250101-120000/log.jsonl",
		filepath.Join(wsDir, ".orchestration", "plan.go"),
		filepath.Join(wsDir, "..", "outside", "secret.txt"),
	}
}

// forbiddenOutput is text that proves a tool reached outside or into
// .orchestration.
var forbiddenOutput = []string{outsideSecret, bookkeepingSecret, "OutsideSecretFunc", "BookkeepingSecretFunc", "root:x:0"}

func TestHostilePathsFailClosedForEveryFileTool(t *testing.T) {
	ws, wsDir, outside := hostileFixture(t)
	env := testEnv(ws)
	paths := hostilePaths(wsDir, outside)
	if len(paths) < 30 {
		t.Fatalf("only %d hostile paths", len(paths))
	}
	before := snapshot(t, outside)

	// Each tool with the arguments a hostile path becomes, and whether it
	// must fail outright (tools that take one path) or may answer with
	// nothing (tools that search).
	type use struct {
		tool     string
		args     func(p string) map[string]any
		mustFail bool
	}
	uses := []use{
		{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }, true},
		{"read_file_partial", func(p string) map[string]any { return map[string]any{"path": p, "offset": 0, "limit": 50} }, true},
		{"edit_file", func(p string) map[string]any {
			return map[string]any{"path": p, "old_string": "NEVER-PRESENT-7f3a", "new_string": "x"}
		}, true},
		{"list_directory", func(p string) map[string]any { return map[string]any{"path": p} }, true},
		{"repo_map", func(p string) map[string]any { return map[string]any{"path": p} }, false},
		{"search_text", func(p string) map[string]any {
			return map[string]any{"pattern": "SECRET|root:|Func", "paths": []string{p}}
		}, false},
		{"glob_files", func(p string) map[string]any { return map[string]any{"pattern": p} }, false},
		{"glob_files", func(p string) map[string]any { return map[string]any{"pattern": p + "/**"} }, false},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "PWNED"} }, true},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p + "/pwned.txt", "content": "PWNED"} }, true},
	}
	for _, u := range uses {
		for _, p := range paths {
			if u.tool == "write_file" && strings.Contains(p, "passwd") {
				// Never aim a write at the host's real /etc/passwd; the
				// outside directory cases exercise the same paths.
				continue
			}
			r := call(t, env, u.tool, u.args(p))
			out := resultJSON(t, r)
			name := u.tool + " " + showPath(p)
			if leak := contains(out, forbiddenOutput...); leak != "" {
				t.Errorf("%s: result leaks %q: %s", name, leak, out)
			}
			if u.mustFail && !r.Failed() {
				t.Errorf("%s: succeeded: %s", name, out)
			}
			if !r.Failed() {
				assertEmptyAnswer(t, name, r)
			}
			if u.tool == "edit_file" && strings.Contains(r.Message, "old_string") {
				t.Errorf("%s: path was accepted (got to matching): %s", name, r.Message)
			}
			// Messages never reveal a host path the caller did not write.
			for _, host := range []string{wsDir, outside, filepath.Dir(wsDir)} {
				if strings.Contains(r.Message, host) && !strings.Contains(p, host) {
					t.Errorf("%s: message reveals host path: %s", name, r.Message)
				}
			}
		}
	}
	if after := snapshot(t, outside); after != before {
		t.Errorf("outside directory changed:\nbefore %s\nafter  %s", before, after)
	}
	if got := readString(t, filepath.Join(wsDir, ".orchestration", "plan.go")); strings.Contains(got, "PWNED") {
		t.Error(".orchestration was written")
	}
	// Nothing named pwned.txt anywhere under the workspace's parent.
	filepath.WalkDir(filepath.Dir(wsDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "pwned.txt" && !strings.HasPrefix(p, wsDir+"/") {
			t.Errorf("write escaped to %s", p)
		}
		return nil
	})
}

// assertEmptyAnswer checks a successful search-type answer found nothing.
func assertEmptyAnswer(t *testing.T, name string, r Result) {
	t.Helper()
	b, _ := json.Marshal(r.Data)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, key := range []string{"matches", "entries"} {
		if v, ok := m[key].([]any); ok && len(v) > 0 {
			t.Errorf("%s: expected no %s, got %v", name, key, v)
		}
	}
	if v, ok := m["map"].(string); ok && v != "" {
		t.Errorf("%s: expected an empty map, got %q", name, v)
	}
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out = append(out, rel+"="+string(b))
		} else {
			out = append(out, rel+"/")
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "|")
}

func TestHostilePathErrorKinds(t *testing.T) {
	ws, wsDir, outside := hostileFixture(t)
	env := testEnv(ws)
	cases := []struct {
		path string
		kind string
		msg  string
	}{
		{"../outside/secret.txt", KindPermissionDenied, "outside the workspace"},
		{"linkout/secret.txt", KindPermissionDenied, "outside the workspace"},
		{"linkfile", KindPermissionDenied, "outside the workspace"},
		{filepath.Join(outside, "secret.txt"), KindPermissionDenied, "outside the workspace"},
		{"/proc/self/root/etc/passwd", KindPermissionDenied, "outside the workspace"},
		{".orchestration", KindPermissionDenied, ".orchestration"},
		{"x/../.orchestration", KindPermissionDenied, ".orchestration"},
		{"./.orchestration/runs", KindPermissionDenied, ".orchestration"},
		{"orchlink/runs", KindPermissionDenied, ".orchestration"},
		{"dir", KindInvalidArguments, "is a directory"},
		{"fifo", KindInvalidArguments, "not a regular file"},
		{"missing.txt", KindNotFound, "not found"},
		{"a\x00b", KindInvalidArguments, "NUL"},
		{"loop1", KindError, "symbolic links"},
		{strings.Repeat("a/", 2100), KindInvalidArguments, "too long"},
	}
	for _, c := range cases {
		r := call(t, env, "read_file", map[string]any{"path": c.path})
		if r.Kind != c.kind || !strings.Contains(r.Message, c.msg) {
			t.Errorf("read_file %s: got %s %q, want %s containing %q", showPath(c.path), r.Kind, r.Message, c.kind, c.msg)
		}
	}
	// An absolute path inside the workspace is accepted.
	r := call(t, env, "read_file", map[string]any{"path": filepath.Join(wsDir, "dir", "ok.txt")})
	if d := data(t, r); d["content"] != "fine\n" {
		t.Errorf("absolute inside path: %v", d)
	}
}

func TestListingsHideBookkeeping(t *testing.T) {
	ws, _, _ := hostileFixture(t)
	env := testEnv(ws)
	d := data(t, call(t, env, "list_directory", map[string]any{}))
	for _, e := range d["entries"].([]any) {
		if name := e.(map[string]any)["name"]; name == ".orchestration" {
			t.Error("list_directory shows .orchestration")
		}
	}
	for _, pattern := range []string{"**", "**/*", ".*/**", "*/runs/**", "**/*.jsonl", "**/plan.go"} {
		d := data(t, call(t, env, "glob_files", map[string]any{"pattern": pattern}))
		b, _ := json.Marshal(d["matches"])
		out := string(b)
		if strings.Contains(out, ".orchestration") || strings.Contains(out, "log.jsonl") || strings.Contains(out, "plan.go") {
			t.Errorf("glob %q reveals bookkeeping: %s", pattern, out)
		}
		if strings.Contains(out, "secret.txt") || strings.Contains(out, "leak.go") {
			t.Errorf("glob %q follows a symlink out: %s", pattern, out)
		}
	}
	out := resultJSON(t, call(t, env, "search_text", map[string]any{"pattern": "SECRET|Func|root:"}))
	if leak := contains(out, forbiddenOutput...); leak != "" {
		t.Errorf("search_text over the workspace leaks %q: %s", leak, out)
	}
	out = resultJSON(t, call(t, env, "repo_map", map[string]any{}))
	if leak := contains(out, forbiddenOutput...); leak != "" {
		t.Errorf("repo_map leaks %q: %s", leak, out)
	}
	if !strings.Contains(out, "func Inside()") {
		t.Errorf("repo_map misses main.go: %s", out)
	}
}
