package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRunEchoFirstCallRealBinary is BenchmarkRunEchoFirstCall with
// the guildhall binary as the helper (GUILDHALL_BIN), whose start includes
// the whole program's package initialisation.
func BenchmarkRunEchoFirstCallRealBinary(b *testing.B) {
	bin := os.Getenv("GUILDHALL_BIN")
	if bin == "" {
		b.Skip("set GUILDHALL_BIN to a built guildhall")
	}
	needBwrap(b)
	p, _ := NewPolicy(Config{})
	host := NewHost().WithExecutable(bin)
	for b.Loop() {
		b.StopTimer()
		ws := filepath.Join(b.TempDir(), "ws")
		_ = os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755)
		sb, err := host.Open(Options{Policy: p, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := sb.Run(context.Background(), Script{Dir: ws, Command: "echo hi", Timeout: 5 * time.Second, MaxChars: 100})
		if err != nil || res.Stdout != "hi\n" {
			b.Fatal(res, err)
		}
		b.StopTimer()
		_ = sb.Close()
		b.StartTimer()
	}
}
