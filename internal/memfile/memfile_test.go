package memfile

import (
	"io"
	"testing"
)

func TestFileReadsAndStats(t *testing.T) {
	f := New("guild/prompts/coder.md", []byte("# Coder\n"))
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Name() != "coder.md" || st.Size() != 8 || st.IsDir() || st.Mode().Perm() != 0o444 {
		t.Errorf("stat = %q %d dir=%v mode=%v, want coder.md 8 false 0444", st.Name(), st.Size(), st.IsDir(), st.Mode())
	}
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "# Coder\n" {
		t.Errorf("read %q, %v", b, err)
	}
}
