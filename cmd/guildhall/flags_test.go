package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/runner"
)

// TestEachCommandHasOnlyItsFlags: a command's --help lists the shared
// flags it reads and no other (issue 29, point 9): runs takes no
// --continue, attach no --script. Every command that reads the workspace
// takes --workspace.
func TestEachCommandHasOnlyItsFlags(t *testing.T) {
	root := newRootCmd(keyring{}, false)
	own := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		own[c.CommandPath()] = names
		if c.HasPersistentFlags() && c.PersistentFlags().HasAvailableFlags() {
			t.Errorf("%s has persistent flags: every subcommand would list them", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	for path, tc := range map[string]struct{ has, not []string }{
		"guildhall":               {has: []string{"workspace", "effort", "continue", "web", "base-url", "script", "sandbox", "max-wall"}},
		"guildhall run":           {has: []string{"workspace", "effort", "continue", "web", "provider", "base-url", "model", "json"}},
		"guildhall runs":          {has: []string{"workspace"}, not: []string{"continue", "script", "effort", "provider", "web", "sandbox", "max-wall"}},
		"guildhall attach":        {has: []string{"workspace", "effort"}, not: []string{"script", "continue", "provider", "web", "sandbox"}},
		"guildhall show":          {has: []string{"workspace"}, not: []string{"continue", "effort", "script"}},
		"guildhall resume":        {has: []string{"workspace", "provider", "base-url", "model", "web", "sandbox"}, not: []string{"continue", "effort"}},
		"guildhall check":         {has: []string{"workspace", "guild", "deployment", "sandbox"}, not: []string{"continue", "effort", "web", "max-wall"}},
		"guildhall queue add":     {has: []string{"workspace", "effort", "continue", "log-level"}, not: []string{"script", "web", "provider"}},
		"guildhall queue rm":      {has: []string{"workspace"}, not: []string{"effort", "script"}},
		"guildhall demo":          {has: []string{"web", "sandbox"}, not: []string{"workspace", "continue", "script"}},
		"guildhall records adopt": {has: []string{"workspace", "yes"}, not: []string{"script", "continue"}},
		"guildhall bench":         {has: []string{"guild", "model", "provider", "effort"}, not: []string{"continue", "web", "workspace"}},
	} {
		names, ok := own[path]
		if !ok {
			t.Errorf("no command %s", path)
			continue
		}
		for _, f := range tc.has {
			if !slices.Contains(names, f) {
				t.Errorf("%s lacks --%s", path, f)
			}
		}
		for _, f := range tc.not {
			if slices.Contains(names, f) {
				t.Errorf("%s --help lists --%s, which it does not use", path, f)
			}
		}
	}
	var help strings.Builder
	root.SetOut(&help)
	root.SetArgs([]string{"runs", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(help.String(), "--continue") || !strings.Contains(help.String(), "--workspace") {
		t.Errorf("runs --help:\n%s", help.String())
	}
}

// TestBadEffortIsReportedBeforeTheProbe: `run --effort turbo x` against
// an endpoint that accepts and never answers says what is wrong with the
// effort (exit 2) without connecting to the endpoint at all, and so does a
// bad --log-level.
func TestBadEffortIsReportedBeforeTheProbe(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("effort")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			defer c.Close() // silent: never answers
		}
	}()
	base := "http://" + ln.Addr().String() + "/v1"
	for _, tc := range []struct{ flag, value, want string }{
		{"--effort", "turbo", `--effort "turbo" is not one of quick, standard, thorough`},
		{"--log-level", "loud", `--log-level "loud" is not one of full, standard`},
	} {
		res := h.run(ws, 0, "run", "--workspace", ws, "--base-url", base, tc.flag, tc.value, "--no-input", "x")
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s %s: %s", tc.flag, tc.value, res)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the endpoint was probed %d times before the bad flag was reported", n)
	}
}

// TestReadmeDeploymentIsValid: the README's minimal operator
// deployment.json parses, and its apiBase is the endpoint check reports.
func TestReadmeDeploymentIsValid(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "deployment file, `~/.config/guildhall/deployment.json` (minimal")
	_, rest, ok2 := strings.Cut(rest, "```json\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README shows no minimal operator deployment.json")
	}
	d, err := runner.ParseDeploymentOnto(nil, "README.md", []byte(block))
	if err != nil {
		t.Fatalf("the README's deployment.json: %v\n%s", err, block)
	}
	if d.Model.APIBase != "http://127.0.0.1:11434/v1" || d.Model.Provider != "openai" {
		t.Errorf("parsed %+v", d.Model)
	}
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "guildhall"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "guildhall", "deployment.json"), []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	res := runCLI(t, "", "check", "--workspace", t.TempDir())
	if res.code != 0 || !strings.Contains(res.stdout, "endpoint http://127.0.0.1:11434/v1") {
		t.Errorf("check with the README's file: %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}
