package webtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/sharedir"
	"github.com/guildhall/guildhall/web/static"
)

// xssSuite is the file that runs the shared XSS corpora; it needs their data.
const xssSuite = "xss.test.ts"

// TestBrowserSuites runs every web/static/ts/**/*.test.ts in Chromium.
func TestBrowserSuites(t *testing.T) {
	var files []string
	err := fs.WalkDir(static.Files(), "ts", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test.ts") {
			files = append(files, strings.TrimPrefix(p, "ts/"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "markdown.test.ts") || !slices.Contains(files, xssSuite) {
		t.Fatalf("test files %v lack markdown.test.ts or %s", files, xssSuite)
	}
	RequireChromium(t)

	suite := Suite{Files: files}
	if dir, ok := copyCorpus(t); ok {
		suite.Data = map[string]string{"/testdata/xss/": dir}
	} else {
		suite.Files = slices.DeleteFunc(files, func(f string) bool { return f == xssSuite })
	}
	Run(t, suite)
}

// copyCorpus copies the shared XSS corpus (../shared/testdata/xss beside the
// checkout) into a temporary directory and returns it. The corpus is not
// committed to this repository. Without it, ok is false (outside CI).
func copyCorpus(t *testing.T) (dir string, ok bool) {
	t.Helper()
	src, err := sharedir.Path("testdata", "xss")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the XSS corpus must be at %s (../shared/testdata/xss beside the checkout) under CI=true: %v", src, err)
		}
		t.Logf("XSS corpus not found at %s, skipping %s: %v", src, xssSuite, err)
		return "", false
	}
	dst := t.TempDir()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || (filepath.Ext(name) != ".json" && name != "README.md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("XSS corpus at %s has %d files, want the README and 3 JSON files", src, n)
	}
	return dst, true
}
