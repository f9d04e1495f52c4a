package tools

// The git tools against hostile repositories. Each case is a repository an
// attacker ships: filter drivers under every name shape git accepts, brought
// in directly or through includes; a git directory, common directory or
// file inside it that leads out of the workspace; a work tree, object store
// or remote elsewhere. Every git tool runs on it, and the case then checks
// what the operator relies on: the marker program (a workspace script that
// writes a file outside) never ran, files outside the workspace (a real
// repository among them) keep their checksums and modes and nothing
// appeared there, no tool result shows what is outside, and a refused
// repository gets a clear permission_denied message.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/internal/treesum"
)

// trapSecret is in files outside the workspace; no tool result may show it.
const trapSecret = "OUTSIDE-GIT-SECRET-7d1f"

// gitTrap is one hostile repository and its surroundings.
type gitTrap struct {
	t       *testing.T
	root    string // everything of this case
	ws      string // the workspace (canonical)
	outside string // files outside the workspace; checksummed
	repo    string // a real repository outside, with a commit
	marker  string // must never exist
	script  string // a workspace program that creates marker
	sums    map[string]string
}

func newGitTrap(t *testing.T) *gitTrap {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &gitTrap{t: t, root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"),
		marker: filepath.Join(root, "marker")}
	tr.repo = filepath.Join(tr.outside, "repo")
	tr.write(filepath.Join(tr.outside, "secret.txt"), trapSecret+"\n", 0o600)
	tr.write(filepath.Join(tr.outside, "tool.sh"), "#!/bin/sh\necho outside\n", 0o755)
	tr.mkdir(tr.repo)
	// No templates: an outside reinitialisation would add files.
	gittest.Run(t, tr.repo, "init", "-q", "-b", "main", "--template=")
	tr.write(filepath.Join(tr.repo, "secret.txt"), trapSecret+"\n", 0o644)
	gittest.Run(t, tr.repo, "add", "secret.txt")
	gittest.Run(t, tr.repo, "commit", "-q", "-m", "outside")
	tr.mkdir(tr.ws)
	tr.script = filepath.Join(tr.ws, "tools", "evil.sh")
	tr.write(tr.script, "#!/bin/sh\necho \"ran: $0 $*\" >> "+tr.marker+"\ncat\n", 0o755)
	return tr
}

func (tr *gitTrap) mkdir(dir string) {
	tr.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *gitTrap) write(path, content string, mode os.FileMode) {
	tr.t.Helper()
	tr.mkdir(filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *gitTrap) symlink(target, link string) {
	tr.t.Helper()
	tr.mkdir(filepath.Dir(link))
	_ = os.RemoveAll(link)
	if err := os.Symlink(target, link); err != nil {
		tr.t.Fatal(err)
	}
}

// wsRepo makes the workspace a repository on main with a.txt and
// .gitattributes committed, then changes a.txt so that staging and diffing
// hash it again (and run any clean filter).
func (tr *gitTrap) wsRepo(attributes string) {
	tr.t.Helper()
	gittest.Run(tr.t, tr.ws, "init", "-q", "-b", "main")
	tr.write(filepath.Join(tr.ws, "a.txt"), "one\n", 0o644)
	tr.write(filepath.Join(tr.ws, ".gitattributes"), attributes, 0o644)
	gittest.Run(tr.t, tr.ws, "add", "-A")
	gittest.Run(tr.t, tr.ws, "commit", "-q", "-m", "first")
	tr.changeWork()
}

func (tr *gitTrap) changeWork() {
	tr.write(filepath.Join(tr.ws, "a.txt"), "two\n", 0o644)
	tr.write(filepath.Join(tr.ws, "new.txt"), "new\n", 0o644)
}

// appendConfig appends raw text to a config file of the workspace repo.
func (tr *gitTrap) appendConfig(path, text string) {
	tr.t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tr.t.Fatal(err)
	}
}

// filterConfig is a [filter "<name>"] section whose every command runs the
// marker script. The name is quoted as git's config syntax wants (only '"'
// and '\' are escaped); its bytes are kept as they are.
func (tr *gitTrap) filterConfig(name string) string {
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name)
	return fmt.Sprintf("[filter \"%s\"]\n\tclean = %s clean\n\tsmudge = %s smudge\n\tprocess = %s process\n\trequired = true\n",
		quoted, tr.script, tr.script, tr.script)
}

// snapshot records the checksums of everything outside the workspace.
func (tr *gitTrap) snapshot() { tr.sums = treeSums(tr.t, tr.outside) }

// expect runs every git tool on the trapped workspace, checks the answers
// against want and that nothing outside changed, and returns the answers.
func (tr *gitTrap) expect(want gitWant) map[string]Result {
	tr.t.Helper()
	tr.snapshot()
	results := tr.runGitSteps()
	want.check(tr.t, results)
	tr.assertSafe(results)
	return results
}

func (tr *gitTrap) assertSafe(results map[string]Result) {
	tr.t.Helper()
	if b, err := os.ReadFile(tr.marker); err == nil {
		tr.t.Errorf("a repository-chosen program ran: %s", b)
	}
	now := treeSums(tr.t, tr.outside)
	for p, sum := range tr.sums {
		if now[p] != sum {
			tr.t.Errorf("%s changed outside the workspace: %s → %s", p, sum, now[p])
		}
	}
	for p := range now {
		if _, ok := tr.sums[p]; !ok {
			tr.t.Errorf("%s appeared outside the workspace", p)
		}
	}
	for tool, r := range results {
		b, _ := json.Marshal(r)
		if s := string(b); strings.Contains(s, trapSecret) || strings.Contains(s, tr.outside) {
			tr.t.Errorf("%s showed what is outside the workspace: %s", tool, s)
		}
	}
	tr.assertNoSecretInside()
}

// assertNoSecretInside checks that nothing copied an outside file's content
// into the workspace, where the file tools would show it.
func (tr *gitTrap) assertNoSecretInside() {
	tr.t.Helper()
	_ = filepath.WalkDir(tr.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), trapSecret) {
			tr.t.Errorf("an outside file's content was copied into the workspace: %s", p)
		}
		return nil
	})
}

// treeSums hashes every entry under root with its mode; links by target.
func treeSums(t *testing.T, root string) map[string]string {
	t.Helper()
	sums, err := treesum.Of(root)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// gitSteps are every git tool, in an order where each has work to do.
var gitSteps = []struct {
	tool string
	args map[string]any
}{
	{"git_uncommitted_changes", map[string]any{}},
	{"git_set_base", map[string]any{}},
	{"git_changes_since_base", map[string]any{}},
	{"git_branch", map[string]any{"name": "guildhall-checkpoint"}},
	{"git_commit", map[string]any{"message": "checkpoint"}},
	{"git_init", map[string]any{}},
}

// runGitSteps runs every git tool once on the trap's workspace.
func (tr *gitTrap) runGitSteps() map[string]Result {
	tr.t.Helper()
	ws, err := OpenWorkspace(tr.ws)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer ws.Close()
	env := testEnv(ws)
	// A base already recorded, so that git_changes_since_base reaches the
	// repository even where git_set_base is refused.
	env.Meta = &fakeMeta{base: strings.Repeat("0", 40)}
	results := map[string]Result{}
	for _, s := range gitSteps {
		results[s.tool] = call(tr.t, env, s.tool, s.args)
		if b, err := os.ReadFile(tr.marker); err == nil {
			tr.t.Errorf("%s ran a repository-chosen program: %s", s.tool, b)
			_ = os.Remove(tr.marker)
		}
	}
	return results
}

// gitWant is what every git tool must answer on a case.
type gitWant struct {
	ok     bool   // every tool succeeds
	refuse string // every tool is refused (permission_denied) with this in its message
}

func (w gitWant) check(t *testing.T, results map[string]Result) {
	t.Helper()
	for _, s := range gitSteps {
		r := results[s.tool]
		switch {
		case w.ok && r.Failed():
			t.Errorf("%s failed: %s: %s", s.tool, r.Kind, r.Message)
		case w.refuse != "" && (r.Kind != KindPermissionDenied || !strings.Contains(r.Message, w.refuse)):
			t.Errorf("%s: want permission_denied with %q, got %s: %s", s.tool, w.refuse, r.Kind, r.Message)
		}
	}
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// TestGitNeutralisesEveryFilterShape configures a filter driver under each
// name shape git accepts in a subsection, assigns it to every file, and
// brings it in directly or through an include of each kind. No tool may run
// it, and every tool still works (the driver is neutralised, not refused),
// except for a name the listing cannot carry exactly, which is refused.
func TestGitNeutralisesEveryFilterShape(t *testing.T) {
	requireGit(t)
	names := []struct {
		label, name string
		refuse      string
	}{
		{"equals", "a=b", ""},
		{"equals only", "=", ""},
		{"equals twice with dots", "x=y.clean=z", ""},
		{"trailing equals", "evil=", ""},
		{"empty", "", ""},
		{"dots", "x.y.z", ""},
		{"named like a key", "clean", ""},
		{"quote", `q"t`, ""},
		{"backslash", `b\s`, ""},
		{"bracket", "a]b[", ""},
		{"upper case", "EVIL", ""},
		{"unicode", "ünï∂", ""},
		{"not UTF-8", "\xff\xfe", "not valid UTF-8"},
	}
	deliveries := []struct {
		label string
		plant func(tr *gitTrap, section string)
	}{
		{"config", func(tr *gitTrap, section string) {
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), section)
		}},
		{"include.path", func(tr *gitTrap, section string) {
			tr.write(filepath.Join(tr.ws, "conf", "filters.inc"), section, 0o644)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), "[include]\n\tpath = ../conf/filters.inc\n")
		}},
		{"nested include", func(tr *gitTrap, section string) {
			tr.write(filepath.Join(tr.ws, "conf", "deep.inc"), section, 0o644)
			tr.write(filepath.Join(tr.ws, "conf", "first.inc"), "[include]\n\tpath = deep.inc\n", 0o644)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), "[include]\n\tpath = "+filepath.Join(tr.ws, "conf", "first.inc")+"\n")
		}},
		{"includeIf gitdir", func(tr *gitTrap, section string) {
			tr.write(filepath.Join(tr.ws, ".git", "gd.inc"), section, 0o644)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), "[includeIf \"gitdir:**\"]\n\tpath = gd.inc\n")
		}},
		{"includeIf onbranch", func(tr *gitTrap, section string) {
			tr.write(filepath.Join(tr.ws, ".git", "ob.inc"), section, 0o644)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), "[includeIf \"onbranch:**\"]\n\tpath = ob.inc\n")
		}},
		{"includeIf hasconfig", func(tr *gitTrap, section string) {
			tr.write(filepath.Join(tr.ws, ".git", "hc.inc"), section, 0o644)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"),
				"[remote \"origin\"]\n\turl = https://example.invalid/r.git\n[includeIf \"hasconfig:remote.*.url:https://**\"]\n\tpath = hc.inc\n")
		}},
	}
	for _, n := range names {
		for _, d := range deliveries {
			t.Run(n.label+"/"+d.label, func(t *testing.T) {
				tr := newGitTrap(t)
				tr.wsRepo("* filter=" + n.name + "\n")
				d.plant(tr, tr.filterConfig(n.name))
				tr.expect(gitWant{ok: n.refuse == "", refuse: n.refuse})
			})
		}
	}
}

// TestGitLegacyFilterSpellingIsNeutralised: the legacy [filter.Name]
// spelling, lower-cased by git, is neutralised under git's spelling; and a
// repository whose other config is not valid UTF-8 still works (only a
// filter driver name that is not is refused).
func TestGitLegacyFilterSpellingIsNeutralised(t *testing.T) {
	requireGit(t)
	tr := newGitTrap(t)
	tr.wsRepo("* filter=old\n")
	tr.appendConfig(filepath.Join(tr.ws, ".git", "config"),
		"[filter.OLD]\n\tclean = "+tr.script+"\n\trequired = true\n[branch \"caf\xe9\"]\n\tremote = origin\n")
	tr.expect(gitWant{ok: true})
}

// TestGitRefusesConfigThatReachesOutside: includes of files outside the
// workspace (by absolute path, by a relative path that climbs out, through
// a link, by the home folder) are refused before git reads them, and so are
// hooks configured in config, which core.hooksPath does not turn off.
func TestGitRefusesConfigThatReachesOutside(t *testing.T) {
	requireGit(t)
	cases := []struct {
		name   string
		plant  func(tr *gitTrap) string // returns the text appended to .git/config
		refuse string
	}{
		{"absolute include", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			return "[include]\n\tpath = " + filepath.Join(tr.outside, "evil.inc") + "\n"
		}, "outside the workspace"},
		{"relative include climbing out", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			return "[include]\n\tpath = ../../outside/evil.inc\n"
		}, "outside the workspace"},
		{"include through a link inside", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			tr.symlink(filepath.Join(tr.outside, "evil.inc"), filepath.Join(tr.ws, "conf", "link.inc"))
			return "[include]\n\tpath = ../conf/link.inc\n"
		}, "outside the workspace"},
		{"include after a link and ..", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			tr.mkdir(filepath.Join(tr.outside, "d"))
			tr.symlink(filepath.Join(tr.outside, "d"), filepath.Join(tr.ws, "d"))
			tr.write(filepath.Join(tr.ws, "evil.inc"), "", 0o644) // what a lexical reading would find
			return "[include]\n\tpath = " + tr.ws + "/d/../evil.inc\n"
		}, "outside the workspace"},
		{"conditional include outside", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			return "[includeIf \"gitdir:**\"]\n\tpath = " + filepath.Join(tr.outside, "evil.inc") + "\n"
		}, "outside the workspace"},
		{"nested include outside", func(tr *gitTrap) string {
			tr.write(filepath.Join(tr.outside, "evil.inc"), tr.filterConfig("evil"), 0o644)
			tr.write(filepath.Join(tr.ws, ".git", "first.inc"), "[include]\n\tpath = "+filepath.Join(tr.outside, "evil.inc")+"\n", 0o644)
			return "[include]\n\tpath = first.inc\n"
		}, "outside the workspace"},
		{"home include", func(tr *gitTrap) string {
			home := filepath.Join(tr.outside, "home")
			tr.write(filepath.Join(home, "evil.inc"), tr.filterConfig("evil"), 0o644)
			tr.t.Setenv("HOME", home)
			return "[include]\n\tpath = ~/evil.inc\n"
		}, "home folder"},
		{"config hook", func(tr *gitTrap) string {
			return "[hook \"lint\"]\n\tevent = post-commit\n\tcommand = " + tr.script + "\n"
		}, "configures a hook"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newGitTrap(t)
			tr.wsRepo("* filter=evil\n")
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), c.plant(tr))
			tr.expect(gitWant{refuse: c.refuse})
		})
	}
}

// TestGitRefusesGitDirectoryOutside: every way the workspace's git
// directory, or its common directory, can lie outside the workspace. The
// tools refuse with the explanation, and the repository outside (its
// index, HEAD, refs, branch, config) is left exactly as it was.
func TestGitRefusesGitDirectoryOutside(t *testing.T) {
	requireGit(t)
	cases := []struct {
		name  string
		plant func(tr *gitTrap)
	}{
		{".git file with an absolute gitdir", func(tr *gitTrap) {
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: "+filepath.Join(tr.repo, ".git")+"\n", 0o644)
		}},
		{".git file with a relative gitdir climbing out", func(tr *gitTrap) {
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: ../outside/repo/.git\r\n", 0o644)
		}},
		{".git file climbing out after a link", func(tr *gitTrap) {
			tr.mkdir(filepath.Join(tr.outside, "a"))
			tr.symlink(filepath.Join(tr.outside, "a"), filepath.Join(tr.ws, "l"))
			tr.mkdir(filepath.Join(tr.ws, "repo", ".git")) // what a lexical reading would find
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: l/../repo/.git\n", 0o644)
		}},
		{".git symbolic link to the outside repository", func(tr *gitTrap) {
			tr.symlink(filepath.Join(tr.repo, ".git"), filepath.Join(tr.ws, ".git"))
		}},
		{".git symbolic link to an outside .git file", func(tr *gitTrap) {
			tr.write(filepath.Join(tr.outside, "gitfile"), "gitdir: "+filepath.Join(tr.repo, ".git")+"\n", 0o644)
			tr.symlink(filepath.Join(tr.outside, "gitfile"), filepath.Join(tr.ws, ".git"))
		}},
		{".git file to an inside gitdir whose commondir is absolute", func(tr *gitTrap) {
			gd := filepath.Join(tr.ws, "meta", "wt")
			tr.write(filepath.Join(gd, "HEAD"), "ref: refs/heads/main\n", 0o644)
			tr.write(filepath.Join(gd, "commondir"), filepath.Join(tr.repo, ".git")+"\n", 0o644)
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: meta/wt\n", 0o644)
		}},
		{"commondir climbing out", func(tr *gitTrap) {
			tr.wsRepo("")
			tr.write(filepath.Join(tr.ws, ".git", "commondir"), "../../outside/repo/.git\n", 0o644)
		}},
		{"commondir as a link to an outside file", func(tr *gitTrap) {
			tr.wsRepo("")
			tr.write(filepath.Join(tr.outside, "cd"), filepath.Join(tr.repo, ".git")+"\n", 0o644)
			tr.symlink(filepath.Join(tr.outside, "cd"), filepath.Join(tr.ws, ".git", "commondir"))
		}},
		{"a real linked worktree of another checkout", func(tr *gitTrap) {
			other := filepath.Join(tr.outside, "other-wt")
			gittest.Run(tr.t, tr.repo, "worktree", "add", "-q", "-b", "wt", other)
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: "+filepath.Join(tr.repo, ".git", "worktrees", "other-wt")+"\n", 0o644)
		}},
		{"a real submodule's git directory, from outside its superproject", func(tr *gitTrap) {
			super := filepath.Join(tr.outside, "super")
			tr.mkdir(super)
			gittest.Run(tr.t, super, "init", "-q", "-b", "main")
			gittest.Run(tr.t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", tr.repo, "lib")
			tr.write(filepath.Join(tr.ws, ".git"), "gitdir: "+filepath.Join(super, ".git", "modules", "lib")+"\n", 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newGitTrap(t)
			c.plant(tr)
			tr.changeWork()
			tr.snapshot()
			results := tr.runGitSteps()
			gitWant{refuse: "outside the workspace"}.check(t, results)
			for tool, r := range results {
				if !strings.Contains(r.Message, "Open the repository's main checkout") {
					t.Errorf("%s does not explain the refusal: %s", tool, r.Message)
				}
			}
			tr.assertSafe(results)
		})
	}
}

// TestGitRefusesLinksOutOfTheGitDirectory: a git directory inside the
// workspace whose files lead out: git writes COMMIT_EDITMSG and appends to
// reflogs through links and hard links, creates objects and refs in linked
// directories, rewrites a linked index or config, and reads linked
// excludes. Each is refused before git runs.
func TestGitRefusesLinksOutOfTheGitDirectory(t *testing.T) {
	requireGit(t)
	victim := func(tr *gitTrap) string {
		p := filepath.Join(tr.outside, "victim.txt")
		tr.write(p, "an outside file\n", 0o600)
		return p
	}
	moveOut := func(tr *gitTrap, rel string) {
		dst := filepath.Join(tr.outside, "moved-"+filepath.Base(rel))
		if err := os.Rename(filepath.Join(tr.ws, ".git", rel), dst); err != nil {
			tr.t.Fatal(err)
		}
		tr.symlink(dst, filepath.Join(tr.ws, ".git", rel))
	}
	hardlink := func(tr *gitTrap, rel string) {
		p := filepath.Join(tr.ws, ".git", rel)
		tr.mkdir(filepath.Dir(p))
		_ = os.Remove(p)
		if err := os.Link(victim(tr), p); err != nil {
			tr.t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		plant  func(tr *gitTrap)
		refuse string
	}{
		{"COMMIT_EDITMSG linked out", func(tr *gitTrap) {
			tr.symlink(victim(tr), filepath.Join(tr.ws, ".git", "COMMIT_EDITMSG"))
		}, "symbolic link to a place outside"},
		{"COMMIT_EDITMSG hard-linked out", func(tr *gitTrap) { hardlink(tr, "COMMIT_EDITMSG") }, "hard links"},
		{"reflog linked out", func(tr *gitTrap) {
			tr.symlink(victim(tr), filepath.Join(tr.ws, ".git", "logs", "HEAD"))
		}, "symbolic link to a place outside"},
		{"reflog hard-linked out", func(tr *gitTrap) { hardlink(tr, "logs/refs/heads/main") }, "hard links"},
		{"logs directory moved out", func(tr *gitTrap) { moveOut(tr, "logs") }, "symbolic link to a place outside"},
		{"objects directory moved out", func(tr *gitTrap) { moveOut(tr, "objects") }, "symbolic link to a place outside"},
		{"refs/heads moved out", func(tr *gitTrap) { moveOut(tr, "refs/heads") }, "symbolic link to a place outside"},
		{"index moved out", func(tr *gitTrap) { moveOut(tr, "index") }, "symbolic link to a place outside"},
		{"config moved out", func(tr *gitTrap) {
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), tr.filterConfig("evil"))
			moveOut(tr, "config")
		}, "symbolic link to a place outside"},
		{"info/exclude linked out", func(tr *gitTrap) {
			tr.symlink(filepath.Join(tr.outside, "secret.txt"), filepath.Join(tr.ws, ".git", "info", "exclude"))
		}, "symbolic link to a place outside"},
		{"info linked out", func(tr *gitTrap) {
			tr.mkdir(filepath.Join(tr.outside, "info"))
			tr.symlink(filepath.Join(tr.outside, "info"), filepath.Join(tr.ws, ".git", "info"))
		}, "symbolic link to a place outside"},
		{"dangling link to a file outside", func(tr *gitTrap) {
			tr.symlink(filepath.Join(tr.outside, "created-by-git"), filepath.Join(tr.ws, ".git", "COMMIT_EDITMSG"))
		}, "leads nowhere"},
		{"link inside to a directory whose file links out", func(tr *gitTrap) {
			if err := os.RemoveAll(filepath.Join(tr.ws, ".git", "logs")); err != nil {
				tr.t.Fatal(err)
			}
			tr.mkdir(filepath.Join(tr.ws, "shared", "logs"))
			tr.symlink(victim(tr), filepath.Join(tr.ws, "shared", "logs", "HEAD"))
			tr.symlink("../shared/logs", filepath.Join(tr.ws, ".git", "logs"))
		}, "symbolic link to a place outside"},
		{"FIFO at info/attributes", func(tr *gitTrap) {
			if err := syscall.Mkfifo(filepath.Join(tr.ws, ".git", "info", "attributes"), 0o644); err != nil {
				tr.t.Fatal(err)
			}
		}, "FIFO"},
		{"alternates to the outside repository", func(tr *gitTrap) {
			tr.write(filepath.Join(tr.ws, ".git", "objects", "info", "alternates"), filepath.Join(tr.repo, ".git", "objects")+"\n", 0o644)
		}, "alternates"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newGitTrap(t)
			tr.wsRepo("")
			c.plant(tr)
			tr.expect(gitWant{refuse: c.refuse})
		})
	}
}

// TestGitStaysInTheWorkspace: repositories that point git at other places:
// core.worktree naming a folder outside (the tools pin the work tree, so
// they work on the workspace and never list or commit the outside files),
// hooks linked outside (never consulted, never written), a clone sharing the outside repository's objects (its
// HEAD's content is outside: refused), and a partial clone whose lazy fetch
// would start an ext:: helper or a configured upload-pack (every transport
// is off: the fetch fails, nothing runs).
func TestGitStaysInTheWorkspace(t *testing.T) {
	requireGit(t)
	t.Run("core.worktree outside", func(t *testing.T) {
		tr := newGitTrap(t)
		tr.wsRepo("")
		gittest.Run(t, tr.ws, "config", "core.worktree", tr.outside)
		tr.expect(gitWant{ok: true})
		if got := gittest.Run(t, tr.ws, "--work-tree=.", "ls-files"); strings.Contains(got, "secret") || !strings.Contains(got, "new.txt") {
			t.Errorf("the commit holds %q, want the workspace's files", got)
		}
	})
	t.Run("hooks linked out", func(t *testing.T) {
		// The hooks folder, and a hook in it, lead outside; git never looks
		// there, and reinitialising copies no sample hook into it.
		tr := newGitTrap(t)
		tr.wsRepo("")
		hooks := filepath.Join(tr.outside, "hooks")
		for _, hook := range []string{"pre-commit", "post-commit", "reference-transaction", "post-index-change"} {
			tr.write(filepath.Join(hooks, hook), "#!/bin/sh\necho "+hook+" >> "+tr.marker+"\n", 0o755)
		}
		if err := os.RemoveAll(filepath.Join(tr.ws, ".git", "hooks")); err != nil {
			t.Fatal(err)
		}
		tr.symlink(hooks, filepath.Join(tr.ws, ".git", "hooks"))
		tr.expect(gitWant{ok: true})
	})
	t.Run("shared clone of the outside repository", func(t *testing.T) {
		tr := newGitTrap(t)
		_ = os.RemoveAll(tr.ws)
		gittest.Run(t, tr.root, "clone", "-q", "--shared", tr.repo, tr.ws)
		tr.write(filepath.Join(tr.ws, "secret.txt"), "changed\n", 0o644)
		tr.expect(gitWant{refuse: "alternates"})
	})
	for _, remote := range []struct{ name, config string }{
		{"ext helper", "[remote \"origin\"]\n\turl = ext::sh -c touch% MARKER\n\tpromisor = true\n[protocol \"ext\"]\n\tallow = always\n"},
		{"local upload-pack", "[remote \"origin\"]\n\turl = OUTSIDE\n\tuploadpack = sh -c 'touch MARKER' #\n\tpromisor = true\n[protocol \"file\"]\n\tallow = always\n"},
	} {
		t.Run("lazy fetch through "+remote.name, func(t *testing.T) {
			tr := newGitTrap(t)
			tr.wsRepo("")
			blob := gittest.Run(t, tr.ws, "rev-parse", "HEAD:a.txt")
			if err := os.Remove(filepath.Join(tr.ws, ".git", "objects", blob[:2], blob[2:])); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, tr.ws, "config", "core.repositoryformatversion", "1")
			gittest.Run(t, tr.ws, "config", "extensions.partialClone", "origin")
			cfg := strings.ReplaceAll(strings.ReplaceAll(remote.config, "MARKER", tr.marker), "OUTSIDE", tr.repo)
			tr.appendConfig(filepath.Join(tr.ws, ".git", "config"), cfg)
			tr.snapshot()
			results := tr.runGitSteps()
			if r := results["git_uncommitted_changes"]; !r.Failed() {
				t.Errorf("the diff against a missing object succeeded: %v", r)
			}
			tr.assertSafe(results)
		})
	}
}

// TestGitInitLeavesAnOutsideRepositoryAlone: git_init in a workspace whose
// .git file points at a repository outside neither reinitialises nor
// touches it, and says why.
func TestGitInitLeavesAnOutsideRepositoryAlone(t *testing.T) {
	requireGit(t)
	tr := newGitTrap(t)
	tr.write(filepath.Join(tr.ws, ".git"), "gitdir: "+filepath.Join(tr.repo, ".git")+"\n", 0o644)
	tr.snapshot()
	ws, err := OpenWorkspace(tr.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	r := call(t, testEnv(ws), "git_init", map[string]any{})
	if r.Kind != KindPermissionDenied || !strings.Contains(r.Message, "the .git file's gitdir is outside the workspace") {
		t.Errorf("git_init: %s: %s", r.Kind, r.Message)
	}
	tr.assertSafe(map[string]Result{"git_init": r})
}

// TestGitInitMakesItsOwnDirectory: a fresh git_init creates <ws>/.git
// itself, so the repository is the workspace's; a .git symbolic link
// planted to an outside folder is refused rather than initialised.
func TestGitInitMakesItsOwnDirectory(t *testing.T) {
	requireGit(t)
	tr := newGitTrap(t)
	empty := filepath.Join(tr.outside, "empty")
	tr.mkdir(empty)
	tr.symlink(empty, filepath.Join(tr.ws, ".git"))
	tr.snapshot()
	ws, err := OpenWorkspace(tr.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	env := testEnv(ws)
	if r := call(t, env, "git_init", map[string]any{}); r.Kind != KindPermissionDenied {
		t.Errorf("git_init through a link out: %s: %s", r.Kind, r.Message)
	}
	tr.assertSafe(nil)
	if err := os.Remove(filepath.Join(tr.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	d := data(t, call(t, env, "git_init", map[string]any{}))
	if d["reinitialized"] != false {
		t.Errorf("fresh init: %v", d)
	}
	if fi, err := os.Lstat(filepath.Join(tr.ws, ".git", "HEAD")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf(".git/HEAD: %v %v", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(tr.ws, ".git", "info", "exclude"))
	if !strings.Contains(string(b), "/.orchestration/") {
		t.Errorf("exclude: %q", b)
	}
	if d := data(t, call(t, env, "git_init", map[string]any{})); d["reinitialized"] != true {
		t.Errorf("second init: %v", d)
	}
}

// TestGitSkippedExcludeIsANote: a repository whose info/exclude is a link
// to a file inside the workspace keeps working; the link is left alone,
// the commit still leaves .orchestration out, and the result says why the
// exclude was not written.
func TestGitSkippedExcludeIsANote(t *testing.T) {
	requireGit(t)
	tr := newGitTrap(t)
	tr.wsRepo("")
	tr.write(filepath.Join(tr.ws, ".orchestration", "runs", "r", "log.jsonl"), "{}\n", 0o644)
	tr.write(filepath.Join(tr.ws, "my-excludes"), "*.tmp\n", 0o644)
	tr.symlink("../../my-excludes", filepath.Join(tr.ws, ".git", "info", "exclude"))
	ws, err := OpenWorkspace(tr.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	d := data(t, call(t, testEnv(ws), "git_commit", map[string]any{"message": "m"}))
	if note, _ := d["note"].(string); !strings.Contains(note, "info/exclude is a symbolic link") {
		t.Errorf("note: %v", d)
	}
	if out := gittest.Run(t, tr.ws, "ls-files"); strings.Contains(out, ".orchestration") {
		t.Errorf(".orchestration committed: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.ws, "my-excludes")); string(b) != "*.tmp\n" {
		t.Errorf("the linked exclude file changed: %q", b)
	}
}
