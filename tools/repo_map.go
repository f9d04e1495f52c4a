package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/internal/runetext"
)

// repo_map limits.
const (
	repoMapMaxFileBytes = 1 << 20
	repoMapMaxChars     = 60_000
	repoMapMaxDeclChars = 200
	repoMapMaxWalk      = 200_000
)

// repoMap is repo_map {path?}: one line per top-level declaration, grouped
// by file, for Go, TypeScript/JavaScript and Python sources. Tests,
// vendored code, build output and hidden directories are left out.
type repoMap struct{}

func (repoMap) Manifest() Manifest { return manifestOf("repo_map") }

// repoMapSkipDir reports directory names never mapped: vendored code,
// build output and test trees.
func repoMapSkipDir(name string) bool {
	switch name {
	case "vendor", "node_modules", "dist", "build", "out", "target", "__tests__", "testdata", "__pycache__":
		return true
	}
	return false
}

func (repoMap) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Path *string `json:"path"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	given := "."
	if a.Path != nil && *a.Path != "" {
		given = *a.Path
	}
	ws := env.Workspace
	rel, err := ws.Resolve(given)
	if err != nil {
		return pathFail(given, err)
	}
	var out strings.Builder
	files, truncated := 0, false
	opt := walkOptions{skipGit: true, skipHidden: true, maxEntries: repoMapMaxWalk,
		skipDir: repoMapSkipDir}
	limited, err := ws.walk(ctx, rel, opt, func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		lang := mapLanguage(p)
		if lang == "" {
			return nil
		}
		data, _, cut, err := ws.readCapped(p, p, repoMapMaxFileBytes)
		if err != nil || cut || looksBinary(data) {
			return nil
		}
		decls := mapDecls(lang, p, data)
		if len(decls) == 0 {
			return nil
		}
		var block strings.Builder
		block.WriteString(p + "\n")
		for _, d := range decls {
			if t, c := runetext.Cut(d, repoMapMaxDeclChars); c {
				d = t + "…"
			}
			block.WriteString("  " + d + "\n")
		}
		if out.Len()+block.Len() > repoMapMaxChars {
			truncated = true
			return fs.SkipAll
		}
		out.WriteString(block.String())
		files++
		return nil
	})
	if err != nil {
		return pathFail(given, err)
	}
	text := out.String()
	if truncated || limited {
		text += "[… truncated: map the subdirectories separately with repo_map {path}]\n"
	}
	return OK(map[string]any{"path": given, "map": text, "files": files, "truncated": truncated || limited})
}

// mapLanguage names the language of a mappable source file, or "".
func mapLanguage(p string) string {
	base := path.Base(p)
	switch ext := path.Ext(base); ext {
	case ".go":
		if !strings.HasSuffix(base, "_test.go") {
			return "go"
		}
	case ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts":
		stem := strings.TrimSuffix(base, ext)
		if !strings.HasSuffix(stem, ".d") && !strings.HasSuffix(stem, ".test") &&
			!strings.HasSuffix(stem, ".spec") && !strings.HasSuffix(stem, ".min") {
			return "js"
		}
	case ".py":
		if !strings.HasPrefix(base, "test_") && !strings.HasSuffix(base, "_test.py") && base != "conftest.py" {
			return "py"
		}
	}
	return ""
}

func mapDecls(lang, name string, src []byte) []string {
	switch lang {
	case "go":
		return goDecls(name, src)
	case "js":
		return lineDecls(src, jsDecl(), func(s string) string {
			if i := strings.IndexAny(s, "{="); i > 0 {
				s = s[:i]
			}
			return s
		})
	case "py":
		return lineDecls(src, pyDecl(), func(s string) string {
			return strings.TrimSuffix(strings.TrimSpace(s), ":")
		})
	}
	return nil
}

// goDecls lists a Go file's top-level declarations with go/parser.
func goDecls(name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil && f == nil {
		return nil
	}
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			sig := *d
			sig.Body, sig.Doc = nil, nil
			out = append(out, oneLine(fset, &sig))
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					out = append(out, "type "+s.Name.Name+" "+typeKind(s.Type))
				case *ast.ValueSpec:
					names := make([]string, len(s.Names))
					for i, n := range s.Names {
						names[i] = n.Name
					}
					out = append(out, d.Tok.String()+" "+strings.Join(names, ", "))
				}
			}
		}
	}
	return out
}

func typeKind(e ast.Expr) string {
	switch e.(type) {
	case *ast.StructType:
		return "struct"
	case *ast.InterfaceType:
		return "interface"
	case *ast.FuncType:
		return "func"
	case *ast.MapType:
		return "map"
	case *ast.ArrayType:
		return "slice"
	case *ast.ChanType:
		return "chan"
	}
	return "= …"
}

func oneLine(fset *token.FileSet, node any) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, node); err != nil {
		return ""
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Declaration lines at column 0. Only the head of the line is kept: up to
// an opening brace, an assignment or a colon.
var (
	jsDecl = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|interface|type|const|let|var|enum|namespace)\s+[A-Za-z_$][\w$]*`)
	})
	pyDecl = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:async\s+)?(?:def|class)\s+[A-Za-z_]\w*`) })
)

func lineDecls(src []byte, re *regexp.Regexp, head func(string) string) []string {
	var out []string
	br := bufio.NewReader(bytes.NewReader(src))
	for {
		line, _, err := readLine(br, 1000)
		if err != nil {
			return out
		}
		if !re.Match(line) {
			continue
		}
		out = append(out, strings.TrimSpace(head(runetext.Decode(line))))
	}
}
