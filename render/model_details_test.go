package render

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tool arguments and results are rendered when read; what a reader gets
// must be what rendering them at once gives, at every size, and HasDetails
// must not claim a body that renders empty.
func TestDeferredDetailsRenderLikeEagerOnes(t *testing.T) {
	big := `{"content":"` + strings.Repeat("line\\n", deferMax) + `"}`
	for _, raw := range []string{
		`{"path":"main.go","content":"package main\n<script>"}`,
		`not json at all`,
		"  \n\t ",
		"",
		big,
	} {
		args := argumentsDetails(raw)
		if got, want := args.markdown(), argumentDetails(raw); got != want {
			t.Errorf("arguments %.30q: deferred renders %.60q, eager %.60q", raw, got, want)
		}
		if args.empty() != (argumentDetails(raw) == "") {
			t.Errorf("arguments %.30q: empty() = %v", raw, args.empty())
		}
		res := resultsDetails(json.RawMessage(raw))
		if got, want := res.markdown(), resultDetails(json.RawMessage(raw)); got != want {
			t.Errorf("result %.30q: deferred renders %.60q, eager %.60q", raw, got, want)
		}
		if res.empty() != (resultDetails(json.RawMessage(raw)) == "") {
			t.Errorf("result %.30q: empty() = %v", raw, res.empty())
		}
	}
	if d := resultsDetails(json.RawMessage(big)); d.kind != detailsText || len(d.text) > 2*detailsJSONCap {
		t.Errorf("a result over deferMax is kept as %d bytes of kind %d, want the capped text", len(d.text), d.kind)
	}
}
