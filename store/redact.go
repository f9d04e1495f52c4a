package store

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Redacted replaces a secret value in the records.
const Redacted = "[redacted]"

// minSecretLen is the shortest value redacted: shorter ones would match
// ordinary text.
const minSecretLen = 8

// Redactor removes known secret values — the provider keys this process
// holds — from what is written to the records and shown to clients. A
// provider's error body can echo the key it was sent; it must not reach
// log.jsonl, meta.json or the checkpoint. Each secret is matched as written
// and as it appears inside a JSON string (escaped). A nil Redactor redacts
// nothing.
type Redactor struct {
	forms [][]byte
}

// NewRedactor returns a redactor of the given secret values; values
// shorter than 8 bytes are ignored.
func NewRedactor(secrets ...string) *Redactor {
	return (*Redactor)(nil).With(secrets...)
}

// With returns a redactor of r's secrets and these; r is not changed (nil
// is a redactor of none). A run adds the secrets of its deployment (the
// MCP servers' env and header values) to the process's keys.
func (r *Redactor) With(secrets ...string) *Redactor {
	out := &Redactor{}
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= minSecretLen && !seen[s] {
			seen[s] = true
			out.forms = append(out.forms, []byte(s))
		}
	}
	if r != nil {
		for _, f := range r.forms {
			add(string(f))
		}
	}
	for _, s := range secrets {
		add(s)
		b, _ := json.Marshal(s) // escaped as encoding/json writes it
		add(string(b[1 : len(b)-1]))
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		add(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(buf.String(), `"`), "\n"), `"`))
	}
	// Longest first: a secret that contains another is replaced whole.
	sort.SliceStable(out.forms, func(i, j int) bool { return len(out.forms[i]) > len(out.forms[j]) })
	return out
}

// Redact returns b with every secret replaced by [redacted]. When b holds
// none, b itself is returned.
func (r *Redactor) Redact(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, f := range r.forms {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(Redacted))
		}
	}
	return b
}

// RedactString is Redact for a string.
func (r *Redactor) RedactString(s string) string {
	if r == nil {
		return s
	}
	for _, f := range r.forms {
		if strings.Contains(s, string(f)) {
			s = strings.ReplaceAll(s, string(f), Redacted)
		}
	}
	return s
}
