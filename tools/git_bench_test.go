package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/store"
)

// BenchmarkGitRepoCheck measures what every git tool call now pays before
// its first command: the layout, the git-directory walk and the config
// listing, on a repository of 2,000 files in 200 commits (loose objects,
// as the tools leave them with gc off).
func BenchmarkGitRepoCheck(b *testing.B) {
	env, _ := benchGitRepo(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := openGitRepo(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitUncommittedChanges is a whole git_uncommitted_changes call.
func BenchmarkGitUncommittedChanges(b *testing.B) {
	env, dir := benchGitRepo(b)
	if err := os.WriteFile(filepath.Join(dir, "f0000.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	tool := Builtins()["git_uncommitted_changes"]
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if r := tool.Call(ctx, env, []byte(`{}`)); r.Failed() {
			b.Fatal(r.Message)
		}
	}
}

func benchGitRepo(b *testing.B) (*Env, string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	gittest.Run(b, dir, "init", "-q", "-b", "main")
	for c := 0; c < 200; c++ {
		for f := 0; f < 10; f++ {
			name := filepath.Join(dir, fmt.Sprintf("f%04d.txt", c*10+f))
			if err := os.WriteFile(name, []byte(fmt.Sprintf("%d\n", c)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		gittest.Run(b, dir, "add", "-A")
		gittest.Run(b, dir, "commit", "-q", "-m", fmt.Sprint(c))
	}
	ws, err := OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	return testEnv(ws), dir
}

// BenchmarkGitTreeWalk is the git-directory walk alone.
func BenchmarkGitTreeWalk(b *testing.B) {
	env, _ := benchGitRepo(b)
	layout, err := store.ResolveGitLayout(env.Workspace.canon)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if err := checkGitTree(ctx, layout); err != nil {
			b.Fatal(err)
		}
	}
}
