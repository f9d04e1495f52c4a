package headless

import (
	"os"
	"testing"
)

// /dev/null is a character device but not a terminal: answers read from it
// are "stdin", and a prompt that needs a terminal is not shown.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("IsTerminal(/dev/null) = true")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(r) {
		t.Fatal("IsTerminal(a pipe) = true")
	}
}
