package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/webtest"
)

// TestBrowserSaysATerminatedRunOnce: the result of a run the operator
// terminated says "The operator terminated the run." once — not in the
// modal's run label, nor again as the error under the same summary — and
// without the framing line, which speaks of technical details it has
// none of. A failed run with technical details keeps the framing line
// above them.
func TestBrowserSaysATerminatedRunOnce(t *testing.T) {
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	const said = "The operator terminated the run."
	fixture := filepath.Join("..", "render", "testdata", "model", "delegation.jsonl")
	id := addPastRunFile(t, sess.ws, fixture, func(m *store.Meta) {
		m.Status = store.StatusInterrupted
		m.Result = &store.MetaResult{Status: "error", Summary: said, Error: &store.MetaError{Kind: "interrupted", Message: said}}
	})
	if err := os.WriteFile(filepath.Join(sess.ws.Runs(), id, store.SummaryFile), []byte(said+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url := serveFake(t, sess, "terminated")
	page := webtest.OpenPage(t, browser, time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the result modal", `document.querySelector(".result-modal .result-summary") !== null`)
	text := page.Eval(`document.querySelector(".result-modal").textContent`)
	if n := strings.Count(text, said); n != 1 {
		t.Errorf("the result says %q %d times, want once:\n%s", said, n, text)
	}
	if label := page.Eval(`document.querySelector(".result-modal .modal-runlabel").textContent`); label != "Run Add a --verbose flag to the CLI that prints each step." {
		t.Errorf("the modal's run label %q, want the task's line", label)
	}
	if n := page.Eval(`String(document.querySelectorAll(".result-modal .framing").length)`); n != "0" {
		t.Errorf("%s framing lines with no technical details below", n)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}

	// With technical details, the framing line introduces them.
	sess2 := newFakeSession(t)
	addPastRunFile(t, sess2.ws, fixture, func(m *store.Meta) {
		m.Status = store.StatusError
		m.Result = &store.MetaResult{Status: "error", Summary: "The model endpoint failed.",
			Error: &store.MetaError{Kind: "llm_unavailable", Message: "The model endpoint failed.", Detail: []byte(`"HTTP 502 from the endpoint"`)}}
	})
	_, url2 := serveFake(t, sess2, "detail")
	page2 := webtest.OpenPage(t, browser, time.Minute)
	defer page2.Close()
	page2.Do(chromedp.Navigate(url2))
	page2.Poll("the result modal", `document.querySelector(".result-modal details.technical") !== null`)
	if got := page2.Eval(`(document.querySelector(".result-modal .framing") || {}).textContent || ""`); !strings.Contains(got, "technical details below") {
		t.Errorf("framing line %q above the technical details", got)
	}
	if n := strings.Count(page2.Eval(`document.querySelector(".result-modal").textContent`), "The model endpoint failed."); n != 1 {
		t.Errorf("the failure is said %d times, want once", n)
	}
	for _, p := range page2.Close() {
		t.Errorf("console: %s", p)
	}
}
