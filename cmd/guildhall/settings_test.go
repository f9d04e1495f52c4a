package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/store"
)

func TestSettingsCLI(t *testing.T) {
	ws := t.TempDir()
	w := []string{"--workspace", ws}
	steps := []struct {
		args       []string
		code       int
		wantOut    []string
		wantErr    string
		wantStored store.Settings
	}{
		{nil, 0, []string{"effort     standard  (built-in default)", "log level  full      (built-in default)"}, "", store.Settings{}},
		{[]string{"--effort", "thorough"}, 0, []string{"saved", "effort     thorough  (project setting)", "log level  full      (built-in default)"}, "", store.Settings{Effort: "thorough"}},
		{[]string{"--log-level", "standard"}, 0, []string{"effort     thorough  (project setting)", "log level  standard  (project setting)"}, "", store.Settings{Effort: "thorough", LogLevel: "standard"}},
		{[]string{"--effort", "max"}, exitUsage, nil, `--effort: effort "max" is not one of quick, standard, thorough`, store.Settings{Effort: "thorough", LogLevel: "standard"}},
		{[]string{"--log-level", "debug"}, exitUsage, nil, `log level "debug" is not one of full, standard`, store.Settings{Effort: "thorough", LogLevel: "standard"}},
		{[]string{"--effort", ""}, 0, []string{"effort     standard  (built-in default)", "log level  standard  (project setting)"}, "", store.Settings{LogLevel: "standard"}},
	}
	for _, s := range steps {
		res := runCLI(t, "", append([]string{"settings"}, append(s.args, w...)...)...)
		if res.code != s.code {
			t.Fatalf("settings %v: exit %d, want %d\n%s%s", s.args, res.code, s.code, res.stdout, res.stderr)
		}
		for _, want := range s.wantOut {
			if !strings.Contains(res.stdout, want) {
				t.Fatalf("settings %v printed\n%s\nwant a line %q", s.args, res.stdout, want)
			}
		}
		if s.wantErr != "" && !strings.Contains(res.stderr, s.wantErr) {
			t.Fatalf("settings %v: stderr %q lacks %q", s.args, res.stderr, s.wantErr)
		}
		if got := (store.Workspace{Dir: ws}).ReadSettings(); got != s.wantStored {
			t.Fatalf("settings %v stored %+v, want %+v", s.args, got, s.wantStored)
		}
	}
}

func TestSettingsCLIMalformedFile(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, store.OrchestrationDir, store.SettingsFile)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte(`{"effort": "qui`), 0o644)
	res := runCLI(t, "", "settings", "--workspace", ws)
	if res.code != 0 || !strings.Contains(res.stderr, "malformed") || !strings.Contains(res.stdout, "(built-in default)") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, "", "settings", "--workspace", ws, "--effort", "quick")
	if res.code != 0 || (store.Workspace{Dir: ws}).ReadSettings().Effort != "quick" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
