package static_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/web/static"
)

// readmeRow matches a row of vendor/README.md's table: | `file` | ... | `sha256` |.
var readmeRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|.*\\| `([0-9a-f]{64})` \\|\\s*$")

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestVendoredFiles fails on any edit of a vendored file: every file under
// vendor/ must be in the README's table with its sha256.
func TestVendoredFiles(t *testing.T) {
	fsys := static.Files()
	readme, err := fs.ReadFile(fsys, "vendor/README.md")
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, m := range readmeRow.FindAllStringSubmatch(string(readme), -1) {
		recorded[m[1]] = m[2]
	}
	want := []string{"hyperapp.js", "hyperapp.LICENSE", "showdown.js", "showdown.LICENSE",
		"highlight.js", "highlight.js.LICENSE", "github.css"}
	for _, name := range want {
		if _, ok := recorded[name]; !ok {
			t.Errorf("vendor/README.md records no sha256 for %s", name)
		}
	}
	entries, err := fs.ReadDir(fsys, "vendor")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == "README.md" {
			continue
		}
		data, err := fs.ReadFile(fsys, "vendor/"+name)
		if err != nil {
			t.Fatal(err)
		}
		hash, ok := recorded[name]
		if !ok {
			t.Errorf("vendor/%s is not recorded in vendor/README.md", name)
			continue
		}
		if got := sum(data); got != hash {
			t.Errorf("vendor/%s: sha256 %s, README records %s (a vendored file was edited)", name, got, hash)
		}
	}
}

// TestShowdownPatch checks the local-patch banner, and that removing the
// banner and reverting the one patch gives back upstream's file exactly.
func TestShowdownPatch(t *testing.T) {
	fsys := static.Files()
	data, err := fs.ReadFile(fsys, "vendor/showdown.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("/*\r\n * LOCAL PATCH (Guildhall)")) {
		t.Fatalf("vendor/showdown.js does not start with the LOCAL PATCH banner: %q", data[:min(len(data), 80)])
	}
	end := bytes.Index(data, []byte(" */\r\n"))
	if end < 0 {
		t.Fatal("unterminated banner")
	}
	upstream := data[end+len(" */\r\n"):]
	reverts := [][2]string{
		{"// limiter to prevent infinite loop (bounded by the number of hashed spans)", "// limiter to prevent infinite loop (assume 10 as limit for recurse)"},
		{"if (limit === globals.gHtmlSpans.length) {", "if (limit === 10) {"},
		{"console.error('maximum number of span expansions reached!!!');", "console.error('maximum nesting of 10 spans reached!!!');"},
	}
	for _, r := range reverts {
		if bytes.Count(upstream, []byte(r[0])) != 1 {
			t.Fatalf("patched line %q not found exactly once", r[0])
		}
		upstream = bytes.Replace(upstream, []byte(r[0]), []byte(r[1]), 1)
	}
	readme, err := fs.ReadFile(fsys, "vendor/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("Upstream `package/dist/showdown.js` has sha256\\s+`([0-9a-f]{64})`").FindSubmatch(readme)
	if m == nil {
		t.Fatal("vendor/README.md records no upstream showdown sha256")
	}
	if got := sum(upstream); got != string(m[1]) {
		t.Errorf("showdown.js without the patch has sha256 %s, upstream is %s: something besides the patch changed", got, m[1])
	}
}

// htmlSinks are the ways to turn a string into markup. The client never uses
// them: agent text reaches the DOM only as text nodes and allowlisted
// attributes, through the sanitizer.
var htmlSinks = []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
	"createContextualFragment", "setHTMLUnsafe", "parseHTMLUnsafe"}

// TestNoHTMLSinks greps every client source file for the HTML sinks.
func TestNoHTMLSinks(t *testing.T) {
	n := 0
	err := fs.WalkDir(static.Files(), "ts", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".ts") {
			return err
		}
		n++
		data, err := fs.ReadFile(static.Files(), p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, sink := range htmlSinks {
				if strings.Contains(line, sink) {
					t.Errorf("web/static/%s:%d uses %s: build DOM with createElement/textContent/setAttribute (or hyperapp) instead", p, i+1, sink)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("found only %d .ts files under web/static/ts", n)
	}
}
