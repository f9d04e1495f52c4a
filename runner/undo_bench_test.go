package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// BenchmarkUndoWrite is what the undo record adds to a file tool's write
// of a 4 KiB file in a run that has already written files others: the
// first write of a file (its earlier content kept) and a later one.
func BenchmarkUndoWrite(b *testing.B) {
	for _, files := range []int{10, 500} {
		for _, first := range []bool{true, false} {
			b.Run(fmt.Sprintf("files=%d/first=%v", files, first), func(b *testing.B) {
				dir := b.TempDir()
				ws := store.Workspace{Dir: dir, Seal: testSealer(dir)}
				id, err := ws.CreateRun(time.Now())
				if err != nil {
					b.Fatal(err)
				}
				u := openUndo(ws, id)
				data := make([]byte, 4096)
				for i := 0; i < files; i++ {
					rel := fmt.Sprintf("f%d.txt", i)
					u.Keep(rel, "write_file", tools.Prior{Exists: true, Data: data[:i%4096], Size: int64(i % 4096)})
					u.Wrote(rel, data)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					data[0] = byte(i)
					data[1] = byte(i >> 8)
					rel := "f0.txt"
					if first {
						rel = fmt.Sprintf("new%d.txt", i)
						if _, ok := u.Wants(rel); ok {
							u.Keep(rel, "write_file", tools.Prior{Exists: true, Data: data, Size: 4096})
						}
					}
					u.Wrote(rel, data)
				}
			})
		}
	}
}
