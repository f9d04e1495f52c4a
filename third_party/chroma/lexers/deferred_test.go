package lexers

import (
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/alecthomas/chroma/v2"
)

// TestLinkingDoesNotLoad runs the test binary again to look at the registry
// of a process that has only initialised the package: the embedded XML
// lexers must not be read until a lookup (Guildhall fork, see README.md).
func TestLinkingDoesNotLoad(t *testing.T) {
	if os.Getenv("CHROMA_PROBE_REGISTRY") == "1" {
		os.Stdout.WriteString(strconv.Itoa(len(GlobalLexerRegistry.Lexers)))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLinkingDoesNotLoad$")
	cmd.Env = append(os.Environ(), "CHROMA_PROBE_REGISTRY=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	early, err := strconv.Atoi(string(out))
	if err != nil {
		t.Fatalf("probe printed %q", out)
	}
	xml, _ := fs.Glob(embedded, "embedded/*.xml")
	if early >= len(xml) {
		t.Fatalf("%d lexers were registered at initialisation; the %d embedded ones must wait for a lookup", early, len(xml))
	}
}

func TestEmbeddedLexersAreFound(t *testing.T) {
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil || len(paths) < 100 {
		t.Fatalf("%d embedded lexers: %v", len(paths), err)
	}
	for _, path := range paths {
		want := chroma.MustNewXMLLexer(embedded, path).Config().Name
		got := Get(want)
		if got == nil || got.Config().Name != want {
			t.Errorf("Get(%q) = %v", want, got)
		}
	}
	if n := len(Names(false)); n < len(paths) {
		t.Errorf("%d names for %d embedded lexers", n, len(paths))
	}
}

// The lexers that Go code registers at initialisation replace their XML
// namesakes, as they do upstream where the XML ones are registered first.
func TestGoLexersWinOverTheirXMLNamesakes(t *testing.T) {
	for name, want := range map[string]chroma.Lexer{
		"common-lisp": CommonLisp, "Common Lisp": CommonLisp,
		"elisp": EmacsLisp, "EmacsLisp": EmacsLisp,
		"go": Go,
	} {
		if got := Get(name); got != want {
			t.Errorf("Get(%q) is not the lexer Go code registered", name)
		}
	}
	if got := Match("main.go"); got != Go {
		t.Errorf("Match(main.go) = %v", got)
	}
}

// The analysers upstream sets from init functions are set at the load.
func TestAnalysersAreSetAtLoad(t *testing.T) {
	if got := Analyse("$ORIGIN example.com.\n@ IN SOA ns1 admin 1 2 3 4 5\n"); got == nil || got.Config().Name != "dns" {
		t.Errorf("a zone file analyses as %v, want dns", got)
	}
	if got := Analyse("definition user {}\nrelation viewer: user\npermission view = viewer\n"); got == nil || got.Config().Name != "Zed" {
		t.Errorf("a Zed schema analyses as %v, want Zed", got)
	}
	mysql, ok := Get("mysql").(chroma.Analyser)
	if !ok || mysql.AnalyseText("SELECT `a` FROM `b`") <= 0 {
		t.Error("the MySQL analyser is not set")
	}
}
