package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/guildhall/guildhall/internal/mcptest"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain gives the whole test binary its own operator state, runtime
// and configuration folders, so that no test reads or writes the real
// user's trust decisions, records key, configuration or discovery files,
// and tests run in-process (runCLI) see a fresh operator. XDG_CACHE_HOME
// is left alone: the go command keeps its build cache there.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	dir, err := os.MkdirTemp("", "guildhall-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, sub := range map[string]string{
		"XDG_STATE_HOME":  "state",
		"XDG_CONFIG_HOME": "config",
		"XDG_RUNTIME_DIR": "runtime", // --web's attach discovery files
	} {
		p := dir + "/" + sub
		if err := os.MkdirAll(p, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(name, p)
	}
	code := m.Run()
	os.RemoveAll(dir)
	mcptest.Cleanup()
	probe.Remove()
	os.Exit(code)
}
