package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/guildhall/guildhall/internal/runetext"
)

// search_run_log limits.
const (
	searchLogMaxLimit     = 50
	searchLogDefaultLimit = 20
	searchLogContext      = 300
)

// searchRunLog is search_run_log {query, type?, limit?}: events of the
// current run's log whose raw line contains query (case-insensitive), each
// with an excerpt around the first match.
type searchRunLog struct{}

func (searchRunLog) Manifest() Manifest { return manifestOf("search_run_log") }

type logMatch struct {
	Index     int64  `json:"index"`
	Timestamp string `json:"timestamp,omitempty"`
	Type      string `json:"type"`
	Excerpt   string `json:"excerpt"`
}

func (searchRunLog) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Query string   `json:"query"`
		Type  *string  `json:"type"`
		Limit *float64 `json:"limit"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if a.Query == "" {
		return Fail(KindInvalidArguments, "query is empty")
	}
	limit, r := intArg(a.Limit, searchLogDefaultLimit, 1, searchLogMaxLimit, "limit")
	if r != nil {
		return *r
	}
	needle := bytes.ToLower([]byte(a.Query))
	matches := []logMatch{}
	truncated := false
	err := scanRunLog(ctx, env, func(seq int64, rec []byte) error {
		ev := toLogEvent(seq, rec)
		if a.Type != nil && ev.Type != *a.Type {
			return nil
		}
		lower := bytes.ToLower(rec)
		at := bytes.Index(lower, needle)
		if at < 0 {
			return nil
		}
		src := rec
		if len(lower) != len(rec) { // case mapping changed byte offsets
			src = lower
		}
		if len(matches) == limit {
			truncated = true
			return errStopScan
		}
		matches = append(matches, logMatch{Index: seq, Timestamp: ev.Timestamp, Type: ev.Type,
			Excerpt: excerpt(src, at, len(needle))})
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return logFail(err)
	}
	return OK(map[string]any{"matches": matches, "truncated": truncated})
}

// excerpt is the text around a match, at most searchLogContext bytes either
// side, trimmed to whole characters.
func excerpt(rec []byte, at, n int) string {
	start := max(at-searchLogContext, 0)
	end := min(at+n+searchLogContext, len(rec))
	s := strings.ToValidUTF8(string(rec[start:end]), "")
	if start > 0 {
		s = "…" + s
	}
	if end < len(rec) {
		s += "…"
	}
	out, _ := runetext.Cut(s, runLogPayloadChars)
	return out
}

// errStopScan ends a log scan early once the limit is reached.
var errStopScan = errors.New("stop")
