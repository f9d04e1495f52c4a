package main

// What the sandbox shows the workspace's builds, printed by `guildhall
// check` and at a workspace's first run (headless, or as the console's notes): the toolchains its files
// call for, what is mounted read-only for them, what is missing, and what
// the network allows them to download (tools/sandbox/report.go). Every
// line carries host and workspace paths, so each is sanitized.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// printToolchains prints the sandbox's view of ws's toolchains under p,
// one sanitized line each, prefixed "  " under the sandbox line.
func printToolchains(ctx context.Context, out io.Writer, p sandbox.Policy, ws string) {
	if !p.Confined() {
		return
	}
	canon, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return
	}
	projects := sandbox.DetectProjects(canon)
	if len(projects) == 0 && len(p.ReadOnly()) == 0 {
		return // nothing to say, and no go env to run
	}
	tc := sandbox.DiscoverToolchains(ctx, os.Getenv, canon, p.ReadOnly())
	for _, line := range tc.Report(p, canon, os.Getenv("PATH"), projects) {
		fmt.Fprintln(out, "  "+render.SanitizeLine(line))
	}
}

// noteToolchains is the console's form of printToolchains at a
// workspace's first run: each line a note, shown on the notes dialog (N),
// since the lines printed before the screen opens scroll away.
func noteToolchains(ctx context.Context, notes noter, p sandbox.Policy, ws string) {
	if !firstRun(ws) {
		return
	}
	var b strings.Builder
	printToolchains(ctx, &b, p, ws)
	for _, line := range strings.Split(b.String(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			notes.note("sandbox: " + line)
		}
	}
}

// firstRun reports whether ws has no run recorded yet.
func firstRun(ws string) bool {
	entries, err := os.ReadDir(filepath.Join(ws, ".orchestration", "runs"))
	return err != nil || len(entries) == 0
}
