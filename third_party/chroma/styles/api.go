package styles

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles.
//
// Guildhall fork: the embedded styles are registered by name at package
// initialisation, but each is parsed only when first used (see README.md).
var Registry = func() map[string]*chroma.Style {
	registry := map[string]*chroma.Style{}
	// Register all embedded styles.
	files, err := fs.ReadDir(embedded, ".")
	if err != nil {
		panic(err)
	}
	for _, file := range files {
		if file.IsDir() {
			continue
		}
		path := file.Name()
		name, err := styleName(embedded, path)
		if err != nil {
			panic(err)
		}
		registry[name] = chroma.NewDeferredXMLStyle(name, func() (io.ReadCloser, error) {
			return embedded.Open(path)
		})
	}
	return registry
}()

// nameAttr is how every embedded style begins.
var nameAttr = []byte(`<style name="`)

// styleName reads a style's name from the start of its embedded definition,
// which names it before anything else; parsing the whole definition is what
// the deferral avoids.
func styleName(fsys fs.FS, path string) (string, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head [128]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	rest, ok := bytes.CutPrefix(head[:n], nameAttr)
	end := bytes.IndexByte(rest, '"')
	if !ok || end <= 0 || bytes.ContainsAny(rest[:end], "&<") {
		return "", fmt.Errorf("%s: does not begin with %s followed by a plain name", path, nameAttr)
	}
	return string(rest[:end]), nil
}

// Fallback style. Reassign to change the default fallback style.
var Fallback = Registry["swapoff"]

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
