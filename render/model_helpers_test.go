package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// loadLog reads a log.jsonl fixture the way a replay does: blank lines are
// ignored, and lines that are not an event envelope are counted and skipped.
func loadLog(t testing.TB, name string) (events []event.Event, badLines int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "model", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var seq int64
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(line, &e); err != nil {
			badLines++
			continue
		}
		e.Seq = seq
		seq++
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events, badLines
}

func replay(events []event.Event) *Model {
	m := NewModel()
	for _, e := range events {
		m.Apply(e)
	}
	return m
}

// goldenView is what the golden files hold: the serialisable model plus
// every operation's details body.
type goldenView struct {
	Model   ModelState      `json:"model"`
	Details []goldenDetails `json:"details"`
}

type goldenDetails struct {
	ID      string `json:"id"`
	Details string `json:"details"`
}

func renderGolden(t testing.TB, m *Model) []byte {
	t.Helper()
	v := goldenView{Model: m.State()}
	for _, op := range m.Operations {
		if d, _ := m.OperationDetails(op.ID); d.Details != "" {
			v.Details = append(v.Details, goldenDetails{ID: op.ID, Details: d.Details})
		}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// opLine is an operation as a reader of the sequence view sees it.
func opLine(op Operation) string {
	s := string(op.Kind) + " " + op.Source + " -> " + op.Destination + " [" + op.Stack + "]"
	if op.Outcome != "" {
		s += " " + op.Outcome
	}
	if op.ErrorKind != "" {
		s += "/" + op.ErrorKind
	}
	return s
}

func opLines(m *Model) []string {
	out := make([]string, len(m.Operations))
	for i, op := range m.Operations {
		out[i] = opLine(op)
	}
	return out
}

func participantIDs(m *Model) []string {
	out := make([]string, len(m.Participants))
	for i, p := range m.Participants {
		out[i] = p.ID
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mkEvent builds an event for table tests.
func mkEvent(t testing.TB, sec int, typ event.Type, payload any) event.Event {
	t.Helper()
	e, err := event.New(time.Date(2025, 3, 14, 9, 0, sec, 0, time.UTC), typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// synthRun generates a run of children delegated by one orchestrator: per
// child an agent_call, a role_start, toolsPer rounds of model call + tool
// call + result, a final model call and role_finished — 10 operations and
// 20 events per child with toolsPer=4. With leaveOpen the last child never
// finishes, so the run is live.
func synthRun(children, toolsPer int, leaveOpen bool) []event.Event {
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	var out []event.Event
	n := 0
	add := func(typ event.Type, payload any) {
		b, _ := json.Marshal(payload)
		out = append(out, event.Event{Seq: int64(n), Timestamp: base.Add(time.Duration(n) * 10 * time.Millisecond), Type: typ, Payload: b})
		n++
	}
	add(event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-090000", Task: "synthetic", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "synthetic"})
	for c := 0; c < children; c++ {
		id := "coder-1-" + strconv.Itoa(c+2)
		add(event.AgentCall, event.AgentCallPayload{Parent: "orchestrator", ParentID: "orchestrator-0-1", Child: "coder", Depth: 1, Task: "step " + strconv.Itoa(c)})
		add(event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: id, Depth: 1, Task: "Implement step " + strconv.Itoa(c) + " of the plan.", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
		for k := 0; k < toolsPer; k++ {
			add(event.LLMCallStart, event.LLMCallStartPayload{Role: "coder", RoleID: id})
			add(event.LLMCall, event.LLMCallPayload{Role: "coder", RoleID: id, Usage: event.Usage{PromptTokens: 1000 + k, CompletionTokens: 50, TotalTokens: 1050 + k, CachedPromptTokens: 800}, ElapsedMs: 1200})
			cid := "c" + strconv.Itoa(k)
			add(event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: id, Tool: "read_file", CallID: cid, Arguments: `{"path":"pkg/file` + strconv.Itoa(k) + `.go"}`})
			add(event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: id, Tool: "read_file", CallID: cid, Kind: "success", Result: json.RawMessage(`{"kind":"success","data":{"content":"package pkg\n"}}`), ElapsedMs: 3})
		}
		if leaveOpen && c == children-1 {
			break
		}
		add(event.LLMCall, event.LLMCallPayload{Role: "coder", RoleID: id, Usage: event.Usage{TotalTokens: 1100}, ElapsedMs: 900})
		add(event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: id, Depth: 1, Status: "success", Summary: "Done with step " + strconv.Itoa(c) + ".", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
	}
	return out
}
