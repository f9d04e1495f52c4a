package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSwapFileKeepsTheLatestVersionWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	// Versions that grow and shrink, so a missing truncate would leave the
	// tail of a longer version behind.
	versions := [][]byte{
		[]byte(`{"v":1,"pad":"` + strings.Repeat("a", 9000) + `"}`),
		[]byte(`{"v":2}`),
		[]byte(`{"v":3,"pad":"` + strings.Repeat("b", 300) + `"}`),
		[]byte(`{"v":4,"pad":"` + strings.Repeat("c", 20000) + `"}`),
		[]byte(`{"v":5}`),
	}
	for i, v := range versions {
		if err := SwapFile(path, v, 0o644); err != nil {
			t.Fatalf("SwapFile #%d: %v", i+1, err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("after write #%d the record is %.40q (err %v), want %.40q", i+1, got, err, v)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("record mode after write #%d: %v %v", i+1, fi.Mode(), err)
		}
	}
	if err := RemoveSwapped(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, SparePath(path)} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists after RemoveSwapped (err %v)", filepath.Base(p), err)
		}
	}
	if err := RemoveSwapped(path); err != nil {
		t.Errorf("RemoveSwapped of a removed record: %v", err)
	}
}

// A reader racing the writer sees one complete version or another, never a
// torn or empty file: what resume relies on after a kill -9.
func TestSwapFileReadersNeverSeeATornVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	small, large := []byte(`{"v":"small"}`), []byte(`{"v":"`+strings.Repeat("x", 64<<10)+`"}`)
	if err := SwapFile(path, small, 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var bad []byte
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(path)
			if err != nil || (!bytes.Equal(got, small) && !bytes.Equal(got, large)) {
				bad = append([]byte(nil), got...)
				return
			}
		}
	}()
	for i := 0; i < 400; i++ {
		v := small
		if i%2 == 0 {
			v = large
		}
		if err := SwapFile(path, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatalf("a reader saw a torn record of %d bytes: %.60q", len(bad), bad)
	}
}

func BenchmarkSwapFile(b *testing.B)    { benchmarkRewrite(b, SwapFile) }
func BenchmarkReplaceFile(b *testing.B) { benchmarkRewrite(b, ReplaceFile) }

// benchmarkRewrite rewrites a 20 kB state file with write, as a run does
// its checkpoint every turn.
func benchmarkRewrite(b *testing.B, write func(path string, data []byte, perm os.FileMode) error) {
	path := filepath.Join(b.TempDir(), StateFile)
	data := bytes.Repeat([]byte("x"), 20000)
	for b.Loop() {
		if err := write(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
