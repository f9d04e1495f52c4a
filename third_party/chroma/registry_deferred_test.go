package chroma

import (
	"sync"
	"sync/atomic"
	"testing"
)

func testLexer(name string, aliases ...string) Lexer {
	return MustNewLexer(&Config{Name: name, Aliases: aliases, Filenames: []string{"*." + name}}, func() Rules {
		return Rules{"root": {{Pattern: `.+`, Type: Text}}}
	})
}

func TestDeferredRegistryLoadsOnceAtFirstLookup(t *testing.T) {
	var loads atomic.Int32
	fromLoad := testLexer("shared", "s")
	reg := NewDeferredLexerRegistry(func(r *LexerRegistry) {
		loads.Add(1)
		r.Register(fromLoad)
		r.Register(testLexer("onlyload"))
		// load may look up what it registered without waiting on itself.
		if r.Get("shared") != fromLoad {
			t.Error("load could not look up its own lexer")
		}
	})
	early := reg.Register(testLexer("shared", "s"))
	reg.Register(testLexer("early"))
	if n := loads.Load(); n != 0 {
		t.Fatalf("Register ran the load %d times; it must wait for a lookup", n)
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if reg.Get("onlyload") == nil {
				t.Error("a concurrent lookup missed a lexer of the load")
			}
		}()
	}
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("the load ran %d times, want once", n)
	}

	// As in an eager registry filled by load first: the later registration
	// of a name wins, and the order is load's lexers, then the early ones.
	if got := reg.Get("shared"); got != early {
		t.Errorf("Get(shared) is the load's lexer; the one registered later must win")
	}
	if got := reg.Get("s"); got != early {
		t.Errorf("Get by alias is the load's lexer; the one registered later must win")
	}
	var names []string
	for _, l := range reg.Lexers {
		names = append(names, l.Config().Name)
	}
	want := []string{"shared", "onlyload", "early"}
	if len(names) != len(want) {
		t.Fatalf("Lexers = %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("Lexers = %v, want %v", names, want)
		}
	}
	if got := reg.Match("x.early"); got == nil || got.Config().Name != "early" {
		t.Errorf("Match(x.early) = %v", got)
	}
	if got := reg.Names(false); len(got) != 3 {
		t.Errorf("Names = %v, want 3 names", got)
	}
	// The early lexers point at the registry for delegation, not at the
	// load's scratch one.
	if got := reg.Get("onlyload").(*RegexLexer).registry; got != reg {
		t.Errorf("a loaded lexer's registry is %p, want the registry %p", got, reg)
	}
}

func TestDeferredRegistryRegisterAfterLoad(t *testing.T) {
	reg := NewDeferredLexerRegistry(func(r *LexerRegistry) { r.Register(testLexer("a")) })
	_ = reg.Get("a")
	late := reg.Register(testLexer("a"))
	if reg.Get("a") != late || len(reg.Lexers) != 1 {
		t.Fatalf("a lexer registered after the load did not replace its namesake: %d lexers", len(reg.Lexers))
	}
}
