package assets

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// namespace is the esbuild namespace of files read from the client tree.
const namespace = "guildhall-static"

// BuildError is a failed TypeScript build: the entry point and esbuild's
// messages, each as "file:line:column: text".
type BuildError struct {
	Entry    string
	Messages []string
}

func (e *BuildError) Error() string {
	return "build " + e.Entry + ":\n" + strings.Join(e.Messages, "\n")
}

// build bundles the entry point src ("ts/app.ts") into one ES module.
func (a *Assets) build(src string) ([]byte, error) {
	a.mu.Lock()
	a.builds++
	a.mu.Unlock()

	// The bundle is served at the entry's path minus "ts/"; external vendor
	// imports are rewritten relative to that URL.
	servedDir := path.Dir(strings.TrimPrefix(src, "ts/"))
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{src},
		Bundle:      true,
		Write:       false,
		Format:      api.FormatESModule,
		Platform:    api.PlatformBrowser,
		Target:      api.ES2022,
		Charset:     api.CharsetUTF8,
		LogLevel:    api.LogLevelSilent,
		Plugins:     []api.Plugin{a.plugin(servedDir)},
	})
	if len(res.Errors) > 0 {
		return nil, &BuildError{Entry: src, Messages: formatMessages(res.Errors)}
	}
	if len(res.OutputFiles) != 1 {
		return nil, &BuildError{Entry: src, Messages: []string{fmt.Sprintf("esbuild produced %d files, want 1", len(res.OutputFiles))}}
	}
	return res.OutputFiles[0].Contents, nil
}

func formatMessages(msgs []api.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if m.Location == nil {
			out = append(out, "error: "+m.Text)
			continue
		}
		l := m.Location
		out = append(out, fmt.Sprintf("%s:%d:%d: error: %s", l.File, l.Line, l.Column+1, m.Text))
	}
	return out
}

// plugin resolves and loads every module from the client tree. Only relative
// imports exist: a bare import ("lodash") is an error, as there is no
// node_modules. An import of a vendored file stays external.
func (a *Assets) plugin(servedDir string) api.Plugin {
	return api.Plugin{
		Name: "guildhall-static",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
				if args.Kind == api.ResolveEntryPoint {
					return api.OnResolveResult{Path: args.Path, Namespace: namespace}, nil
				}
				if !strings.HasPrefix(args.Path, "./") && !strings.HasPrefix(args.Path, "../") {
					return api.OnResolveResult{}, fmt.Errorf("import %q: only relative imports of files under web/static are allowed (vendor a library under vendor/)", args.Path)
				}
				p := path.Join(path.Dir(args.Importer), args.Path)
				if strings.HasPrefix(p, "vendor/") {
					if path.Ext(p) != ".js" || !exists(a.fsys, p) {
						return api.OnResolveResult{}, fmt.Errorf("import %q: no vendored ES module %s", args.Path, p)
					}
					return api.OnResolveResult{Path: relativeURL(servedDir, p), External: true}, nil
				}
				resolved, ok := a.resolveSource(p)
				if !ok {
					return api.OnResolveResult{}, fmt.Errorf("import %q: no file %s(.ts) under web/static", args.Path, p)
				}
				return api.OnResolveResult{Path: resolved, Namespace: namespace}, nil
			})
			b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: namespace}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
				data, err := fs.ReadFile(a.fsys, args.Path)
				if err != nil {
					return api.OnLoadResult{}, err
				}
				contents := string(data)
				loader := api.LoaderTS
				if path.Ext(args.Path) == ".js" {
					loader = api.LoaderJS
				}
				return api.OnLoadResult{Contents: &contents, Loader: loader}, nil
			})
		},
	}
}

// resolveSource finds the source file of an import path: as written, with
// the TypeScript convention ".js" meaning ".ts", with ".ts" added, or as a
// directory's index.ts.
func (a *Assets) resolveSource(p string) (string, bool) {
	candidates := []string{p}
	if strings.HasSuffix(p, ".js") {
		candidates = append(candidates, strings.TrimSuffix(p, ".js")+".ts")
	}
	candidates = append(candidates, p+".ts", p+"/index.ts")
	for _, c := range candidates {
		if strings.HasPrefix(c, "ts/") && exists(a.fsys, c) {
			return c, true
		}
	}
	return "", false
}

// relativeURL is the URL of target relative to a document in dir, both paths
// of the served tree ("." for its root).
func relativeURL(dir, target string) string {
	if dir == "." {
		return "./" + target
	}
	return strings.Repeat("../", strings.Count(dir, "/")+1) + target
}
