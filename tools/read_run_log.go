package tools

import (
	"context"
	"encoding/json"

	"github.com/guildhall/guildhall/internal/runetext"
	"github.com/guildhall/guildhall/store"
)

// Run-log limits.
const (
	runLogMaxLimit     = 200
	runLogDefaultLimit = 50
	runLogPayloadChars = 2000
)

// readRunLog is read_run_log {offset?, limit?}: a page of the current run's
// log.jsonl. An event's index is its line number, stable across pages; a
// torn last line (a write cut short) is skipped.
type readRunLog struct{}

func (readRunLog) Manifest() Manifest { return manifestOf("read_run_log") }

// logEvent is one log line as returned to a role. Payload is the raw JSON
// when short, else a string cut to runLogPayloadChars.
type logEvent struct {
	Index            int64  `json:"index"`
	Timestamp        string `json:"timestamp,omitempty"`
	Type             string `json:"type"`
	Payload          any    `json:"payload,omitempty"`
	PayloadTruncated bool   `json:"payloadTruncated,omitempty"`
}

func (readRunLog) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Offset *float64 `json:"offset"`
		Limit  *float64 `json:"limit"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	offset, r := intArg(a.Offset, 0, 0, 1<<40, "offset")
	if r != nil {
		return *r
	}
	limit, r := intArg(a.Limit, runLogDefaultLimit, 1, runLogMaxLimit, "limit")
	if r != nil {
		return *r
	}
	events := []logEvent{}
	var total int64
	err := scanRunLog(ctx, env, func(seq int64, rec []byte) error {
		total = seq + 1
		if seq >= int64(offset) && len(events) < limit {
			events = append(events, toLogEvent(seq, rec))
		}
		return nil
	})
	if err != nil {
		return logFail(err)
	}
	next := int64(offset) + int64(len(events))
	if len(events) > 0 {
		next = events[len(events)-1].Index + 1
	}
	return OK(map[string]any{"events": events, "offset": offset, "nextOffset": next, "hasMore": next < total})
}

// scanRunLog calls fn for each well-formed line of the current run's log.
func scanRunLog(ctx context.Context, env *Env, fn func(seq int64, rec []byte) error) error {
	root, err := runRoot(env, env.RunID, false)
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := openRunFile(root, store.LogFile)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = store.ScanLog(f, func(seq int64, rec []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(seq, rec)
	})
	return err
}

func logFail(err error) Result {
	r := runFail("run log", err)
	if r.Kind == KindNotFound {
		return Fail(KindUnavailable, "this run has no log yet")
	}
	return r
}

func toLogEvent(seq int64, rec []byte) logEvent {
	var line struct {
		Timestamp string          `json:"timestamp"`
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(rec, &line)
	ev := logEvent{Index: seq, Timestamp: line.Timestamp, Type: line.Type}
	if len(line.Payload) == 0 {
		return ev
	}
	if len(line.Payload) <= runLogPayloadChars {
		ev.Payload = line.Payload
		return ev
	}
	text, _ := capChars(runetext.Decode(line.Payload), runLogPayloadChars)
	ev.Payload, ev.PayloadTruncated = text, true
	return ev
}
