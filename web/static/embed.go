// Package static holds the browser client's files: the vendored libraries
// under vendor/ (served verbatim) and the client's TypeScript sources under
// ts/ (bundled to JavaScript at serve time by package web/assets).
//
// Files that the console adds later (index.html, style sheets) need their own
// pattern in the go:embed directive below.
package static

import (
	"embed"
	"io/fs"
)

//go:embed vendor ts index.html css
var files embed.FS

// Files returns the embedded client tree, rooted at web/static: paths look
// like "vendor/showdown.js" and "ts/markdown.ts". The tree is read-only.
func Files() fs.FS { return files }
