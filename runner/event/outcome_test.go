package event

import (
	"encoding/json"
	"testing"
)

func TestOutcomeOf(t *testing.T) {
	cases := []struct {
		name, result string
		want         *ToolOutcome
		label        string
	}{
		{"run_shell exit 0", `{"kind":"success","data":{"exitCode":0,"stdout":"hi\n","stderr":""}}`,
			&ToolOutcome{Commands: 1}, "exit 0"},
		{"run_shell exit 3", `{"kind":"success","data":{"exitCode":3,"stdout":"","stderr":"boom"}}`,
			&ToolOutcome{Failed: true, ExitCode: 3, Commands: 1, FailedCommands: 1}, "exit 3"},
		{"test with counts", `{"kind":"success","data":[{"command":"sh test.sh","exitCode":1,"stdout":"ok a\nFAIL b\n\n4 passed, 2 failed\n","stderr":""}]}`,
			&ToolOutcome{Failed: true, ExitCode: 1, Commands: 1, FailedCommands: 1, ChecksPassed: 4, ChecksFailed: 2}, "2 failed"},
		{"exit 0 but failures reported", `{"kind":"success","data":[{"command":"t","exitCode":0,"stdout":"Tests:       1 failed, 9 passed, 10 total","stderr":""}]}`,
			&ToolOutcome{Failed: true, Commands: 1, FailedCommands: 1, ChecksPassed: 9, ChecksFailed: 1}, "1 failed"},
		{"all passing", `{"kind":"success","data":[{"command":"t","exitCode":0,"stdout":"test result: ok. 6 passed; 0 failed; 0 ignored","stderr":""}]}`,
			&ToolOutcome{Commands: 1, ChecksPassed: 6}, "6 passed"},
		{"second of two commands fails", `{"kind":"success","data":[{"command":"a","exitCode":0,"stdout":"","stderr":""},{"command":"b","exitCode":2,"stdout":"","stderr":""}]}`,
			&ToolOutcome{Failed: true, ExitCode: 2, Commands: 2, FailedCommands: 1}, "exit 2"},
		{"a timeout", `{"kind":"success","data":[{"command":"a","exitCode":null,"stdout":"","stderr":"","timedOut":true}]}`,
			&ToolOutcome{Failed: true, Commands: 1, FailedCommands: 1, TimedOut: true}, "timed out"},
		{"an earlier Guildhall's checker shape", `{"kind":"success","data":{"results":[{"command":"a","exitCode":1,"stdout":"","stderr":""}]}}`,
			&ToolOutcome{Failed: true, ExitCode: 1, Commands: 1, FailedCommands: 1}, "exit 1"},
		{"another tool", `{"kind":"success","data":{"path":"a","bytes":3}}`, nil, ""},
		{"a file that mentions exitCode", `{"kind":"success","data":{"content":"\"exitCode\": 1"}}`, nil, ""},
		{"an error result", `{"kind":"timeout","message":"x","details":{"exitCode":1}}`, nil, ""},
		{"not JSON", `{"exitCode"`, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := OutcomeOf(json.RawMessage(c.result))
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Fatalf("OutcomeOf = %+v, want %+v", got, c.want)
			}
			if got != nil && got.Label() != c.label {
				t.Errorf("label %q, want %q", got.Label(), c.label)
			}
		})
	}
}

// TestOutcomeOutputCannotHideAFailure: the output is the workspace's; it
// can add a failure but never remove one a non-zero exit reports.
func TestOutcomeOutputCannotHideAFailure(t *testing.T) {
	o := OutcomeOf(json.RawMessage(`{"kind":"success","data":{"exitCode":1,"stdout":"100 passed, 0 failed\nALL GREEN","stderr":""}}`))
	if o == nil || !o.Failed || o.Label() != "exit 1" {
		t.Fatalf("outcome %+v", o)
	}
}

func TestCheckCounts(t *testing.T) {
	cases := []struct {
		out          string
		passed, fail int
		ok           bool
	}{
		{"4 passed, 2 failed", 4, 2, true},
		{"===== 2 failed, 10 passed in 0.12s =====", 10, 2, true},
		{"  5 passing (20ms)\n  1 failing", 0, 1, true},
		{"Ran 3 tests\n\nFAILED (failures=1)", 0, 0, false},
		{"3 failures", 0, 3, true},
		{"test_failed_login ... ok", 0, 0, false},
		{"FAILED", 0, 0, false},
		{"1passed", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		p, f, ok := CheckCounts(c.out)
		if p != c.passed || f != c.fail || ok != c.ok {
			t.Errorf("CheckCounts(%q) = %d, %d, %v; want %d, %d, %v", c.out, p, f, ok, c.passed, c.fail, c.ok)
		}
	}
}

// FuzzOutcomeOf: tool output is hostile input; reading it never panics,
// and a result whose command exited non-zero is always failed.
func FuzzOutcomeOf(f *testing.F) {
	f.Add(`{"kind":"success","data":{"exitCode":1,"stdout":"4 passed, 2 failed","stderr":""}}`, 1)
	f.Add(`{"kind":"success","data":[{"exitCode":0,"stdout":"99999999999 passed","stderr":"x failed"}]}`, 0)
	f.Add(`{"kind":"success","data":{"results":[{"exitCode":null,"timedOut":true}]}}`, 0)
	f.Fuzz(func(t *testing.T, result string, code int) {
		_ = OutcomeOf(json.RawMessage(result))
		_, _, _ = CheckCounts(result)
		if code == 0 {
			return
		}
		b, _ := json.Marshal(map[string]any{"kind": "success", "data": map[string]any{"exitCode": code, "stdout": result, "stderr": ""}})
		if o := OutcomeOf(b); o == nil || !o.Failed {
			t.Fatalf("exit %d read as %+v", code, o)
		}
	})
}
