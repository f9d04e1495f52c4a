package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testKey is the records key of the store tests' operator.
var testKey = bytes.Repeat([]byte{7}, 32)

// sealedWorkspace is a workspace whose records are sealed with testKey.
func sealedWorkspace(dir string) Workspace {
	return Workspace{Dir: dir, Seal: NewSealer(testKey, dir)}
}

func TestSealRoundTripsAndBindsEverything(t *testing.T) {
	s := NewSealer(testKey, "/ws")
	bodies := []string{`{}`, `{ }`, "{\n  \"runId\": \"run-20260101-000000\",\n  \"task\": \"x\"\n}", `{"a":{"b":[1,2]}}`}
	for _, body := range bodies {
		sealed := s.Seal(SealMeta, "run-1", []byte(body))
		if !json.Valid(sealed) {
			t.Fatalf("sealed %q is not JSON: %s", body, sealed)
		}
		if !s.Check(SealMeta, "run-1", sealed) {
			t.Errorf("%q: its own seal does not check", body)
		}
		// The record stays what readers expect.
		var m map[string]any
		_ = json.Unmarshal(sealed, &m)
		if _, ok := m["guildhallMac"]; !ok {
			t.Errorf("%q: no MAC member in %s", body, sealed)
		}
		others := map[string]bool{
			"another kind":      s.Check(SealState, "run-1", sealed),
			"another name":      s.Check(SealMeta, "run-2", sealed),
			"another workspace": NewSealer(testKey, "/ws2").Check(SealMeta, "run-1", sealed),
			"another key":       NewSealer(bytes.Repeat([]byte{8}, 32), "/ws").Check(SealMeta, "run-1", sealed),
			"no key":            (*Sealer)(nil).Check(SealMeta, "run-1", sealed),
			"empty key":         NewSealer(nil, "/ws").Check(SealMeta, "run-1", sealed),
		}
		for what, ok := range others {
			if ok {
				t.Errorf("%q: the seal checks under %s", body, what)
			}
		}
	}
}

// TestSealRefusesEveryTamperedForm tries what a repository could ship: an
// unsealed record, a record with a MAC member it made up, a sealed record
// edited by one byte anywhere, moved members, whitespace changes, a second
// MAC member, truncation, and a MAC copied from another record.
func TestSealRefusesEveryTamperedForm(t *testing.T) {
	s := NewSealer(testKey, "/ws")
	body := []byte(`{"runId":"run-1","status":"running","task":"safe"}`)
	sealed := s.Seal(SealMeta, "run-1", body)
	other := s.Seal(SealMeta, "run-1", []byte(`{"runId":"run-1","status":"success"}`))
	forms := map[string][]byte{
		"unsealed":         body,
		"made-up MAC":      []byte(`{"guildhallMac":"` + strings.Repeat("ab", 32) + `","runId":"run-1"}`),
		"short MAC":        []byte(`{"guildhallMac":"abcd","runId":"run-1"}`),
		"non-hex MAC":      []byte(`{"guildhallMac":"` + strings.Repeat("zz", 32) + `","runId":"run-1"}`),
		"copied MAC":       append(append([]byte{}, other[:sealedHead]...), sealed[sealedHead:]...),
		"leading space":    append([]byte(" "), sealed...),
		"space inside":     bytes.Replace(sealed, []byte(`"status":`), []byte(`"status": `), 1),
		"task changed":     bytes.Replace(sealed, []byte(`safe`), []byte(`evil`), 1),
		"member appended":  append(bytes.TrimSuffix(sealed, []byte("}")), []byte(`,"x":1}`)...),
		"truncated":        sealed[:len(sealed)-1],
		"only the MAC":     sealed[:sealedHead],
		"second MAC first": append([]byte(`{"guildhallMac":"`+strings.Repeat("00", 32)+`",`), sealed[1:]...),
		"empty":            nil,
	}
	for i := 0; i < len(sealed); i++ {
		b := append([]byte{}, sealed...)
		b[i] ^= 0x01
		forms["bit flipped at "+string(rune('0'+i%10))+"/"+itoa(i)] = b
	}
	for what, data := range forms {
		if s.Check(SealMeta, "run-1", data) {
			t.Errorf("%s: accepted %q", what, data)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestMetaReadsForeignUnlessSealedHere(t *testing.T) {
	dir := t.TempDir()
	ws := sealedWorkspace(dir)
	id := "run-20260101-120000"
	if err := os.MkdirAll(filepath.Join(ws.Runs(), id), 0o755); err != nil {
		t.Fatal(err)
	}
	m := &Meta{RunID: id, Task: "t", Status: StatusRunning, StartedAt: time.Now().UTC()}
	if err := ws.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	got, err := ws.ReadMeta(id)
	if err != nil || got.Foreign {
		t.Fatalf("own meta: %+v %v", got, err)
	}
	for what, w := range map[string]Workspace{
		"no sealer":      {Dir: dir},
		"another key":    {Dir: dir, Seal: NewSealer(bytes.Repeat([]byte{9}, 32), dir)},
		"another folder": {Dir: dir, Seal: NewSealer(testKey, dir+"-moved")},
	} {
		got, err := w.ReadMeta(id)
		if err != nil || !got.Foreign {
			t.Errorf("%s: foreign=%v err=%v", what, got != nil && got.Foreign, err)
		}
	}
	// A planted meta.json is foreign, and Guildhall will not rewrite it
	// (rewriting would seal it).
	path := filepath.Join(ws.Runs(), id, MetaFile)
	if err := os.WriteFile(path, []byte(`{"runId":"`+id+`","status":"running","task":"planted"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ws.ReadMeta(id)
	if err != nil || !got.Foreign || got.Task != "planted" {
		t.Fatalf("planted meta: %+v %v", got, err)
	}
	if err := ws.WriteMeta(got); err == nil || !strings.Contains(err.Error(), "foreign") {
		t.Errorf("rewriting a foreign meta: %v", err)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("guildhallMac")) {
		t.Errorf("the foreign meta was sealed: %s", b)
	}
}

// TestPlantedQueueItemsNeverRun plants items in a queue Guildhall also
// writes: a whole planted file, an item added beside sealed ones, an item
// whose seal was copied from another item, and a sealed item edited to run
// another task. None is dispatched; each is listed as foreign; every
// change but removal is refused; the planted bytes survive rewrites
// unsealed.
func TestPlantedQueueItemsNeverRun(t *testing.T) {
	q, ws := testQueue(t)
	ctx := context.Background()
	mine, err := q.Add(ctx, QueueSpec{Task: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(q.Path())
	lines := strings.Split(string(b), "\n")
	sealedLine := strings.TrimSpace(lines[1])
	planted := []string{
		`{"id":"q-1-1","task":"rm -rf ~","status":"waiting","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`,
		strings.Replace(sealedLine, `"id":"`+mine.ID+`"`, `"id":"q-2-1"`, 1),
		strings.Replace(sealedLine, `"task":"mine"`, `"task":"evil"`, 1),
	}
	// The edited copy of mine replaces it; the others join it.
	file := "{\"items\": [\n  " + strings.Join(planted, ",\n  ") + "\n]}\n"
	if err := os.WriteFile(q.Path(), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := q.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if !it.Foreign {
			t.Errorf("item %s (%q) is not foreign", it.ID, it.Task)
		}
	}
	if w, _ := q.Waiting(); len(w) != 0 {
		t.Errorf("waiting: %v", ids(w))
	}
	if it, ok, err := q.ClaimNext(ctx); ok || err != nil {
		t.Errorf("claimed %+v %v", it, err)
	}
	for name, op := range map[string]func() error{
		"edit":    func() error { s := "x"; _, err := q.Edit(ctx, "q-1-1", QueueEdit{Task: &s}); return err },
		"move":    func() error { _, err := q.MoveTo(ctx, "q-1-1", 0); return err },
		"requeue": func() error { _, err := q.Requeue(ctx, "q-1-1"); return err },
		"finish":  func() error { _, err := q.Finish(ctx, "q-1-1", QueueOutcome{RunStatus: StatusSuccess}); return err },
	} {
		if err := op(); err == nil || !strings.Contains(err.Error(), "foreign") {
			t.Errorf("%s on a foreign item: %v", name, err)
		}
	}
	// A change to the queue leaves the planted bytes as they were.
	if _, err := q.Add(ctx, QueueSpec{Task: "second"}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(q.Path())
	for _, p := range planted {
		if !strings.Contains(string(after), p) {
			t.Errorf("planted item rewritten; want %s in\n%s", p, after)
		}
	}
	if w, _ := q.Waiting(); len(w) != 1 || w[0].Task != "second" {
		t.Errorf("waiting after add: %+v", w)
	}
	// Removal is the one change a foreign item takes.
	if _, err := q.Cancel(ctx, "q-1-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Get("q-1-1"); err == nil {
		t.Error("the removed foreign item is still there")
	}
	_ = ws
}
