package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyWorkspaceResolvesLinkChains plays a suite author who hides an
// escape in links that each look inside on their own: the copy must be
// refused, naming the link, while links that really stay inside (a
// node_modules/.bin launcher, a loop, a dangling link) are copied.
func TestCopyWorkspaceResolvesLinkChains(t *testing.T) {
	type link struct{ name, target string }
	cases := []struct {
		name  string
		dirs  []string
		links []link
		bad   string // the link the refusal must name; "" when the copy is fine
	}{
		{"a chain through a link to the root", []string{"c"}, []link{{"b", "."}, {"a", "b/c/../.."}}, "a"},
		{"dot-dot after a link to a shallower folder", []string{"x"}, []link{{"x/y", ".."}, {"z", "x/y/.."}}, "z"},
		{"a dangling component through a link", nil, []link{{"s", "."}, {"g", "s/missing/../.."}}, "g"},
		{"a chain three links long", []string{"d1/d2"}, []link{{"d1/d2/up", "../.."}, {"hop", "d1/d2/up"}, {"out", "hop/.."}}, "out"},
		{"a link inside a linked folder", []string{"real"}, []link{{"real/up", ".."}, {"alias", "real"}, {"leak", "alias/up/.."}}, "leak"},
		{"a launcher inside node_modules", []string{"node_modules/pkg/bin", "node_modules/.bin"}, []link{{"node_modules/.bin/tool", "../pkg/bin"}, {"bin", "node_modules/.bin/tool/../../pkg"}}, ""},
		{"a loop", nil, []link{{"l1", "l2"}, {"l2", "l1"}, {"self", "self"}}, ""},
		{"a dangling link inside", nil, []link{{"later", "build/out"}}, ""},
		{"dot-dot that comes back in", []string{"sub/deep"}, []link{{"d", "sub/deep"}, {"e", "d/../.."}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := t.TempDir()
			for _, d := range c.dirs {
				if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, l := range c.links {
				if err := os.Symlink(l.target, filepath.Join(src, l.name)); err != nil {
					t.Fatal(err)
				}
			}
			dst := filepath.Join(t.TempDir(), "ws")
			err := CopyWorkspace(src, dst)
			if c.bad == "" {
				if err != nil {
					t.Fatalf("a self-contained benchmark was refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.bad+" is a link out of the benchmark") {
				t.Fatalf("CopyWorkspace = %v, want a refusal naming %s", err, c.bad)
			}
			// The suite is refused when it is loaded, before anything runs.
			if err := os.WriteFile(filepath.Join(src, EvalFile), []byte(`{"taskType": "coding", "description": "x", "validation": {"command": "true"}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadBenchmark(src); err == nil || !strings.Contains(err.Error(), c.bad+" is a link out of the benchmark") {
				t.Errorf("LoadBenchmark = %v, want a refusal naming %s", err, c.bad)
			}
		})
	}
}

// TestCheckLinksRefusesAbsoluteTargets: a link to an absolute path leaves
// the copy wherever it points, directly or at the end of a chain (the
// copy refuses the direct one earlier; the whole check must too).
func TestCheckLinksRefusesAbsoluteTargets(t *testing.T) {
	for name, links := range map[string][][2]string{
		"direct":  {{"abs", "/etc"}},
		"chained": {{"first", "second"}, {"second", "/etc"}},
	} {
		dir := t.TempDir()
		for _, l := range links {
			if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
				t.Fatal(err)
			}
		}
		err := checkLinks(dir, nil)
		if err == nil || !strings.Contains(err.Error(), "-> /etc") {
			t.Errorf("%s: checkLinks = %v", name, err)
		}
	}
	// The copy's own records are not part of the workspace: a link there
	// is left out, not refused.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, ".orchestration", "x")); err != nil {
		t.Fatal(err)
	}
	if err := checkLinks(dir, notCopied); err != nil {
		t.Errorf("a link under .orchestration: %v", err)
	}
}
