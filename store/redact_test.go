package store

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRedactorRemovesEveryWrittenForm(t *testing.T) {
	key := `sk-"quote"\back<tag>&amp-0123456789`
	r := NewRedactor(key, "short", "")
	plain, _ := json.Marshal(map[string]string{"body": "echo: " + key + " end"})
	inputs := map[string]string{
		"raw":          "Authorization: Bearer " + key,
		"json escaped": string(plain),
		"twice":        key + key,
	}
	for what, in := range inputs {
		out := string(r.Redact([]byte(in)))
		if strings.Contains(out, "0123456789") || !strings.Contains(out, Redacted) {
			t.Errorf("%s: %q → %q", what, in, out)
		}
		if got := r.RedactString(in); got != out {
			t.Errorf("%s: RedactString %q, Redact %q", what, got, out)
		}
	}
	// Values too short to be keys are left alone, and so is other text.
	if out := string(r.Redact([]byte("short text"))); out != "short text" {
		t.Errorf("short value redacted: %q", out)
	}
	var nilR *Redactor
	if out := string(nilR.Redact([]byte(key))); out != key {
		t.Errorf("nil redactor changed %q", out)
	}
}

func TestMetaAndStateAreRedacted(t *testing.T) {
	const key = "sk-operator-secret-value-42"
	dir := t.TempDir()
	ws := sealedWorkspace(dir)
	ws.Redact = NewRedactor(key)
	id := "run-20260101-120000"
	if _, err := ws.CreateRun(mustTime("2026-01-01T12:00:00Z")); err != nil {
		t.Fatal(err)
	}
	m := &Meta{RunID: id, Task: "t", Status: StatusError, Error: &MetaError{Kind: "llm_unavailable", Message: "401: bad key " + key}}
	if err := ws.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteState(id, []byte(`{"runId":"`+id+`","note":"`+key+`"}`)); err != nil {
		t.Fatal(err)
	}
	got, err := ws.ReadMeta(id)
	if err != nil || got.Foreign || strings.Contains(got.Error.Message, key) {
		t.Fatalf("meta %+v %v", got, err)
	}
	b, sealed, err := ws.ReadState(id)
	if err != nil || !sealed || strings.Contains(string(b), key) {
		t.Fatalf("state %s sealed=%v %v", b, sealed, err)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// With adds secrets without changing the redactor it extends, and a
// secret holding another is replaced whole (longest first).
func TestRedactorWith(t *testing.T) {
	base := NewRedactor("provider-key-123")
	more := base.With("tok-secret-987", "Bearer tok-secret-987")
	in := `{"a":"provider-key-123","h":"Bearer tok-secret-987","t":"tok-secret-987"}`
	if got := more.RedactString(in); got != `{"a":"[redacted]","h":"[redacted]","t":"[redacted]"}` {
		t.Errorf("extended: %s", got)
	}
	if got := base.RedactString(in); got != `{"a":"[redacted]","h":"Bearer tok-secret-987","t":"tok-secret-987"}` {
		t.Errorf("the base changed: %s", got)
	}
	var none *Redactor
	if got := none.With("short", "long-enough-secret").RedactString("short long-enough-secret"); got != "short [redacted]" {
		t.Errorf("from nil: %s", got)
	}
}
