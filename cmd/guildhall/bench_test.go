package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// BenchmarkProcess100ToolTurns measures the whole `guildhall run` process
// doing 100 tool turns (50 read_file, 50 run_shell "echo …") against an
// instantly answering OpenAI-compatible server: CPU time (user+system of
// guildhall and its children), wall time and peak RSS.
func BenchmarkProcess100ToolTurns(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "guildhall")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	var cpu, wall time.Duration
	var rss int64
	for i := 0; i < b.N; i++ {
		f := fakellm.New()
		var turns []fakellm.Reply
		for t := 0; t < 100; t++ {
			if t%2 == 0 {
				turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "read_file", Args: map[string]string{"path": "notes.txt"}}}})
			} else {
				turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "run_shell", Args: map[string]string{"command": "echo turn"}}}})
			}
		}
		turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})
		f.Queue("solo", turns...)
		ws := b.TempDir()
		guild := filepath.Join(ws, "guild")
		_ = os.MkdirAll(filepath.Join(guild, "prompts"), 0o755)
		_ = os.WriteFile(filepath.Join(guild, "guild.json"), []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":["read_file","run_shell","finish"]}}}`), 0o644)
		_ = os.WriteFile(filepath.Join(guild, "prompts", "solo.md"), []byte("[role:solo] Work alone."), 0o644)
		_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("some notes\n"), 0o644)
		cmd := exec.Command(bin, "run", "--workspace", ws, "--base-url", f.BaseURL(), "--model", "fake-model", "--no-input", "--json", "do 100 turns")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(start)
		f.Close()
		if err != nil {
			b.Fatalf("run: %v\n%s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss {
			rss = ru.Maxrss
		}
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/run")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/run")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
}
