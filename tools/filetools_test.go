package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	big := strings.Repeat("x", readFileMaxBytes+100)
	ws, _ := newWS(t, map[string]string{
		"a.txt":   "hello\n",
		"bin.dat": "ab\x00cd",
		"bad.txt": "ok \xff\xfe end",
		"big.txt": big,
	})
	env := testEnv(ws)
	if d := data(t, call(t, env, "read_file", map[string]any{"path": "a.txt"})); d["content"] != "hello\n" {
		t.Errorf("a.txt: %v", d)
	}
	if d := data(t, call(t, env, "read_file", map[string]any{"path": "bin.dat"})); d["binary"] != true || d["size"] != float64(5) {
		t.Errorf("bin.dat: %v", d)
	}
	if d := data(t, call(t, env, "read_file", map[string]any{"path": "bad.txt"})); d["content"] != "ok \uFFFD\uFFFD end" {
		t.Errorf("bad.txt: %q", d["content"])
	}
	d := data(t, call(t, env, "read_file", map[string]any{"path": "big.txt"}))
	c := d["content"].(string)
	if d["truncated"] != true || !strings.Contains(c, "truncated") || strings.Count(c, "x") != readFileMaxBytes {
		t.Errorf("big.txt: truncated=%v len=%d", d["truncated"], len(c))
	}
}

func TestReadFilePartial(t *testing.T) {
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, strings.Repeat("l", i%5)+"#")
	}
	long := strings.Repeat("y", 10_000)
	ws, _ := newWS(t, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n", "long.txt": long + "\nshort\n"})
	env := testEnv(ws)
	cases := []struct {
		offset, limit int
		returned      float64
		first         string
	}{
		{0, 3, 3, "#"},
		{98, 10, 2, "lll#"},
		{200, 5, 0, ""},
		{10, 5000, 90, "#"},
	}
	for _, c := range cases {
		d := data(t, call(t, env, "read_file_partial", map[string]any{"path": "f.txt", "offset": c.offset, "limit": c.limit}))
		if d["returnedLines"] != c.returned || d["totalLines"] != float64(100) {
			t.Errorf("offset %d limit %d: %v", c.offset, c.limit, d)
		}
		if first, _, _ := strings.Cut(d["content"].(string), "\n"); first != c.first {
			t.Errorf("offset %d: first line %q, want %q", c.offset, first, c.first)
		}
	}
	d := data(t, call(t, env, "read_file_partial", map[string]any{"path": "long.txt", "offset": 0, "limit": 2}))
	if c := d["content"].(string); !strings.Contains(c, "line truncated") || len(c) > partialMaxLineChars+100 {
		t.Errorf("long line not capped: %d", len(c))
	}
	if r := call(t, env, "read_file_partial", map[string]any{"path": "f.txt", "offset": 1.5, "limit": 2}); r.Kind != KindInvalidArguments {
		t.Errorf("fractional offset: %v", r)
	}
}

func TestWriteFile(t *testing.T) {
	ws, dir := newWS(t, map[string]string{"old.txt": "old", "sub/x": ""})
	env := testEnv(ws)
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, content string }{
		{"new.txt", "one"},
		{"a/b/c/deep.txt", "deep"},
		{"old.txt", "replaced"},
		{"./sub/../sub/y.txt", "y"},
		{filepath.Join(dir, "abs.txt"), "abs"},
	}
	for _, c := range cases {
		d := data(t, call(t, env, "write_file", map[string]any{"path": c.path, "content": c.content}))
		if d["bytes"] != float64(len(c.content)) || d["path"] != c.path {
			t.Errorf("%s: %v", c.path, d)
		}
	}
	for rel, want := range map[string]string{"new.txt": "one", "a/b/c/deep.txt": "deep", "old.txt": "replaced", "sub/y.txt": "y", "abs.txt": "abs"} {
		if got := readString(t, filepath.Join(dir, rel)); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "old.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
	// No temp files are left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	for _, p := range []string{"sub", ".", ""} {
		if r := call(t, env, "write_file", map[string]any{"path": p, "content": "x"}); !r.Failed() {
			t.Errorf("write to %q succeeded", p)
		}
	}
}

func TestEditFile(t *testing.T) {
	ws, dir := newWS(t, map[string]string{"f.go": "a := 1\nb := 1\nc := 2\n"})
	env := testEnv(ws)
	cases := []struct {
		old, new string
		kind     string
		matches  float64
	}{
		{"zzz", "q", KindInvalidArguments, 0},
		{":= 1", "= 3", KindInvalidArguments, 2},
		{"", "x", KindInvalidArguments, -1},
		{"c := 2", "c := 3", KindSuccess, -1},
	}
	for _, c := range cases {
		r := call(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": c.old, "new_string": c.new})
		if r.Kind != c.kind {
			t.Errorf("%q: kind %s (%s), want %s", c.old, r.Kind, r.Message, c.kind)
		}
		if c.matches >= 0 {
			if m := r.Details.(map[string]any)["matches"]; m != int(c.matches) {
				t.Errorf("%q: matches %v", c.old, m)
			}
			if !strings.Contains(r.Message, "match") {
				t.Errorf("%q: message %q", c.old, r.Message)
			}
		}
	}
	if got := readString(t, filepath.Join(dir, "f.go")); got != "a := 1\nb := 1\nc := 3\n" {
		t.Errorf("content %q", got)
	}
}

func TestListDirectory(t *testing.T) {
	files := map[string]string{"b.txt": "bb", "a.txt": "a", "z/x": "", ".orchestration/runs/r": ""}
	for i := 0; i < listMaxEntries+5; i++ {
		files["many/"+strings.Repeat("f", 1)+string(rune('a'+i%26))+strings.Repeat("0", i/26)] = ""
	}
	ws, _ := newWS(t, files)
	env := testEnv(ws)
	d := data(t, call(t, env, "list_directory", map[string]any{"path": "."}))
	var names []string
	for _, e := range d["entries"].([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "many,z,a.txt,b.txt" {
		t.Errorf("entries %v", names)
	}
	d = data(t, call(t, env, "list_directory", map[string]any{"path": "many"}))
	if d["truncated"] != true || len(d["entries"].([]any)) != listMaxEntries {
		t.Errorf("cap: truncated=%v n=%d", d["truncated"], len(d["entries"].([]any)))
	}
	if r := call(t, env, "list_directory", map[string]any{"path": "a.txt"}); r.Kind != KindInvalidArguments {
		t.Errorf("list a file: %v", r)
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "x/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"x/**", "x/y/z", true},
		{"x/**/z", "x/z", true},
		{"x/**/z", "x/a/b/z", true},
		{"x/**/z", "x/a/b/y", false},
		{"src/{a,b}/*.md", "src/b/r.md", true},
		{"src/{a,b}/*.md", "src/c/r.md", false},
		{"?.txt", "a.txt", true},
		{"[ab].txt", "c.txt", false},
		{"**/**/**/**/**/**/**/**/q", strings.Repeat("d/", 50) + "q", true},
		{"**/**/**/**/**/**/**/**/q", strings.Repeat("d/", 50) + "r", false},
	}
	for _, c := range cases {
		globs, r := compileGlob(c.pattern)
		if r != nil {
			t.Fatalf("%s: %s", c.pattern, r.Message)
		}
		if got := globMatchAny(globs, c.path); got != c.want {
			t.Errorf("%s ~ %s = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	for _, bad := range []string{"", "[", "{a,b", "/abs/*", "../*", ".orchestration/**", "./.Orchestration/*", strings.Repeat("{a,b}", 10)} {
		if _, r := compileGlob(bad); r == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestGlobFilesCap(t *testing.T) {
	files := map[string]string{".git/config": "", "keep/a.txt": ""}
	for i := 0; i < globMaxMatches+10; i++ {
		files["m/"+strings.Repeat("x", 1+i%7)+"/"+string(rune('a'+i%26))+strings.Repeat("1", i/26)+".txt"] = ""
	}
	ws, _ := newWS(t, files)
	env := testEnv(ws)
	d := data(t, call(t, env, "glob_files", map[string]any{"pattern": "**/*.txt"}))
	if d["truncated"] != true || len(d["matches"].([]any)) != globMaxMatches {
		t.Errorf("cap: %v %d", d["truncated"], len(d["matches"].([]any)))
	}
	d = data(t, call(t, env, "glob_files", map[string]any{"pattern": "**/config"}))
	if len(d["matches"].([]any)) != 0 {
		t.Errorf(".git not skipped: %v", d["matches"])
	}
}

func TestSearchTextCaps(t *testing.T) {
	hits := strings.Repeat("hit\n", searchMaxPerFile+20)
	files := map[string]string{
		"bin.dat":  "hit\x00hit\n",
		".git/x":   "hit\n",
		"long.txt": "hit" + strings.Repeat("z", 5000) + "\n",
	}
	for i := 0; i < 12; i++ {
		files["f"+string(rune('a'+i))+".txt"] = hits
	}
	ws, _ := newWS(t, files)
	env := testEnv(ws)
	d := data(t, call(t, env, "search_text", map[string]any{"pattern": "^hit"}))
	ms := d["matches"].([]any)
	if len(ms) != searchMaxTotal || d["truncated"] != true {
		t.Errorf("total cap: %d %v", len(ms), d["truncated"])
	}
	for _, m := range ms {
		p := m.(map[string]any)["path"].(string)
		if p == "bin.dat" || strings.HasPrefix(p, ".git") {
			t.Errorf("searched %s", p)
		}
	}
	if len(d["filesTruncated"].([]any)) == 0 {
		t.Error("no per-file truncation reported")
	}
	d = data(t, call(t, env, "search_text", map[string]any{"pattern": "hit", "paths": []string{"long.txt"}}))
	text := d["matches"].([]any)[0].(map[string]any)["text"].(string)
	if len([]rune(text)) > searchMaxLineChars+30 || !strings.Contains(text, "truncated") {
		t.Errorf("line not capped: %d", len(text))
	}
	if r := call(t, env, "search_text", map[string]any{"pattern": "("}); r.Kind != KindInvalidArguments {
		t.Errorf("bad regexp: %v", r)
	}
}

func TestRepoMap(t *testing.T) {
	ws, _ := newWS(t, map[string]string{
		"pkg/a.go":            "package pkg\n\ntype T struct{}\n\nfunc (t *T) M(x int) (string, error) { return \"\", nil }\n\nconst C, D = 1, 2\n\nvar V = 3\n\ntype I interface{ F() }\n",
		"pkg/a_test.go":       "package pkg\n\nfunc TestX() {}\n",
		"web/app.ts":          "export function run(a: number): void {\n}\nexport class App {\n}\nconst x = 1\nexport interface Props {\n}\n  function nested() {}\n",
		"web/app.test.ts":     "export function testOnly() {}\n",
		"web/types.d.ts":      "export type Decl = string\n",
		"node_modules/m/i.js": "export function vendored() {}\n",
		"dist/out.js":         "function built() {}\n",
		".hidden/h.py":        "def hidden(): pass\n",
		"py/mod.py":           "import os\n\ndef top(a, b=1) -> int:\n    def inner(): pass\nclass K(Base):\n    def method(self): pass\nasync def co():\n    pass\n",
		"py/test_mod.py":      "def test_it(): pass\n",
		"__tests__/t.js":      "function t() {}\n",
		"vendor/v/v.go":       "package v\nfunc Vendored() {}\n",
		"broken.go":           "package x\nfunc Good() {}\nfunc (",
	})
	env := testEnv(ws)
	d := data(t, call(t, env, "repo_map", map[string]any{}))
	m := d["map"].(string)
	for _, want := range []string{"func (t *T) M(x int) (string, error)", "type T struct", "const C, D", "var V", "type I interface",
		"export function run(a: number): void", "export class App", "const x", "export interface Props",
		"def top(a, b=1) -> int", "class K(Base)", "async def co()", "func Good()"} {
		if !strings.Contains(m, want) {
			t.Errorf("map lacks %q:\n%s", want, m)
		}
	}
	for _, bad := range []string{"TestX", "testOnly", "Decl", "vendored", "built", "hidden", "inner", "method", "test_it", "Vendored", "nested"} {
		if strings.Contains(m, bad) {
			t.Errorf("map has %q:\n%s", bad, m)
		}
	}
}
