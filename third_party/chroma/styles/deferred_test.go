package styles

import (
	"encoding/xml"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/alecthomas/chroma/v2"
)

// Every embedded style, parsed on first use, is the style upstream parses
// at initialisation.
func TestDeferredStylesMatchEagerParse(t *testing.T) {
	files, err := fs.ReadDir(embedded, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(Registry) != len(files) {
		t.Errorf("%d styles registered for %d files", len(Registry), len(files))
	}
	for _, file := range files {
		r, err := embedded.Open(file.Name())
		if err != nil {
			t.Fatal(err)
		}
		eager, err := chroma.NewXMLStyle(r)
		_ = r.Close()
		if err != nil {
			t.Fatalf("%s: %v", file.Name(), err)
		}
		deferred := Get(eager.Name)
		if deferred.Name != eager.Name {
			t.Errorf("%s: Get(%q) is %q", file.Name(), eager.Name, deferred.Name)
			continue
		}
		want, _ := xml.Marshal(eager)
		got, err := xml.Marshal(deferred)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: deferred style differs:\n got %s\nwant %s", file.Name(), got, want)
		}
	}
	if Fallback == nil || Fallback.Name != "swapoff" {
		t.Errorf("Fallback = %v", Fallback)
	}
}

func TestStyleNameRejectsWhatItCannotReadPlainly(t *testing.T) {
	fsys := fstest.MapFS{
		"ok.xml":        {Data: []byte(`<style name="ok">` + strings.Repeat(" ", 500))},
		"short.xml":     {Data: []byte(`<style name="s"/>`)},
		"decl.xml":      {Data: []byte(`<?xml version="1.0"?><style name="d">`)},
		"empty.xml":     {Data: []byte(`<style name="">`)},
		"entity.xml":    {Data: []byte(`<style name="a&amp;b">`)},
		"unclosed.xml":  {Data: []byte(`<style name="` + strings.Repeat("x", 200))},
		"nothing.xml":   {Data: nil},
		"otherattr.xml": {Data: []byte(`<style id="x" name="y">`)},
	}
	for path, want := range map[string]string{"ok.xml": "ok", "short.xml": "s"} {
		if got, err := styleName(fsys, path); err != nil || got != want {
			t.Errorf("styleName(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"decl.xml", "empty.xml", "entity.xml", "unclosed.xml", "nothing.xml", "otherattr.xml", "missing.xml"} {
		if got, err := styleName(fsys, path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("styleName(%s) = %q, %v; want an error naming the file", path, got, err)
		}
	}
}
