package chroma

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

const testStyleXML = `<style name="t">
  <entry type="Background" style="bg:#101010"/>
  <entry type="Keyword" style="bold #ff0000"/>
</style>`

func openString(s string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

func TestDeferredStyleMatchesEagerParse(t *testing.T) {
	eager, err := NewXMLStyle(strings.NewReader(testStyleXML))
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	deferred := NewDeferredXMLStyle("t", func() (io.ReadCloser, error) {
		opened++
		return openString(testStyleXML)()
	})
	if opened != 0 {
		t.Fatal("the definition was read before the style was used")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, want := deferred.Get(Keyword), eager.Get(Keyword); got != want {
				t.Errorf("Get(Keyword) = %v, want %v", got, want)
			}
		}()
	}
	wg.Wait()
	for _, tt := range []TokenType{Background, Text, Keyword, KeywordType, LineNumbers, Comment} {
		if got, want := deferred.Get(tt), eager.Get(tt); got != want {
			t.Errorf("Get(%v) = %v, want %v", tt, got, want)
		}
	}
	if got, want := len(deferred.Types()), len(eager.Types()); got != want {
		t.Errorf("%d types, want %d", got, want)
	}
	b := deferred.Builder()
	b.Add(Comment, "italic")
	built, err := b.Build()
	if err != nil || built.Get(Keyword) != eager.Get(Keyword) {
		t.Errorf("a builder from the deferred style lost its parent's entries: %v", err)
	}
	if opened != 1 {
		t.Errorf("the definition was read %d times, want once", opened)
	}
}

func TestDeferredStyleBadDefinitionPanicsOnUse(t *testing.T) {
	cases := map[string]func() (io.ReadCloser, error){
		"unreadable":    func() (io.ReadCloser, error) { return nil, errors.New("gone") },
		"not xml":       openString("<style name=\"t\"><entry"),
		"unknown type":  openString(`<style name="t"><entry type="NoSuchToken" style="bold"/></style>`),
		"another name":  openString(`<style name="other"></style>`),
		"bad attribute": openString(`<style name="t" colour="red"></style>`),
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			s := NewDeferredXMLStyle("t", open)
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("a bad definition was accepted")
				}
				if !strings.Contains(r.(error).Error(), "style t") {
					t.Errorf("the panic does not name the style: %v", r)
				}
			}()
			s.Get(Keyword)
		})
	}
}
