package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// asSeen is a result as the model reads it: the JSON of the whole result.
func asSeen(t *testing.T, r Result) map[string]any {
	t.Helper()
	return asJSON(t, r)
}

// TestCheckersAnswerInTheOriginalsShape: data is the array of
// {command, exitCode, stdout, stderr} the original system's prompts read,
// and a failure's details carry the failing command and the entries so
// far.
func TestCheckersAnswerInTheOriginalsShape(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	for _, name := range []string{"typecheck", "test"} {
		seen := asSeen(t, call(t, env, name, map[string]any{"commands": []string{"echo one", "exit 3", "echo three >&2"}}))
		rs, ok := seen["data"].([]any)
		if seen["kind"] != "success" || !ok || len(rs) != 3 {
			t.Fatalf("%s: data is not an array of three entries: %v", name, seen)
		}
		want := []map[string]any{
			{"command": "echo one", "exitCode": 0.0, "stdout": "one\n", "stderr": ""},
			{"command": "exit 3", "exitCode": 3.0, "stdout": "", "stderr": ""},
			{"command": "echo three >&2", "exitCode": 0.0, "stdout": "", "stderr": "three\n"},
		}
		for i, r := range rs {
			e := r.(map[string]any)
			if len(e) != 4 {
				t.Errorf("%s entry %d has fields beyond command, exitCode, stdout, stderr: %v", name, i, e)
			}
			for k, v := range want[i] {
				if e[k] != v {
					t.Errorf("%s entry %d: %s = %#v, want %#v", name, i, k, e[k], v)
				}
			}
		}

		seen = asSeen(t, call(t, env, name, map[string]any{"commands": []string{"echo a", "sleep 100", "touch never"}, "timeoutSeconds": 0.5}))
		details, _ := seen["details"].(map[string]any)
		entries, _ := details["results"].([]any)
		if seen["kind"] != KindTimeout || details["command"] != "sleep 100" || len(entries) != 2 {
			t.Fatalf("%s timeout: %v", name, seen)
		}
		last := entries[1].(map[string]any)
		if last["timedOut"] != true || last["exitCode"] != nil {
			t.Errorf("%s: the timed-out entry is not marked with a null exit code: %v", name, last)
		}
		if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
			t.Errorf("%s ran past a timeout", name)
		}
		for _, bad := range []any{make([]string, 17), []string{}, []string{"true", "  "}} {
			if r := call(t, env, name, map[string]any{"commands": bad}); r.Kind != KindInvalidArguments {
				t.Errorf("%s: commands %q accepted: %v", name, bad, r)
			}
		}
	}
}
