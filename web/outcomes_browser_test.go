package web

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/webtest"
)

// TestBrowserShowsOutcomesAsTheyAre opens, over the real server, a run
// whose coder ran a command that exited 1 ("1 passed, 1 failed") and was
// then stopped by an operator plan change: the flow graph draws the coder
// stopped (■ interrupted) and its Shell node with the failure (✗1); its
// inspector lists the coder's call as failed with the command's output;
// the sequence view reads the failed return as failed and the coder's as
// interrupted.
func TestBrowserShowsOutcomesAsTheyAre(t *testing.T) {
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	addPastRunFile(t, sess.WS, filepath.Join("..", "render", "testdata", "model", "planchange.jsonl"), nil)
	_, url := serveFake(t, sess, "outcomes")
	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	page.SetViewport(webtest.Viewport{Name: "wide", Width: 1800, Height: 900})
	page.Do(chromedp.Navigate(url))
	page.Poll("the result modal", `document.querySelector(".result-modal") !== null`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length >= 5`)

	node := func(sel string) string {
		t.Helper()
		return page.Eval(`(() => { const n = document.querySelector(` + strconv.Quote(sel) + `); return n === null ? "missing" : n.getAttribute("class") + " | " + n.textContent; })()`)
	}
	if got := node(`.graph-node[data-participant="coder-1-2"]`); !strings.Contains(got, "graph-node--stopped") || !strings.Contains(got, "■ Coder") ||
		!strings.Contains(got, "interrupted") || strings.Contains(got, "error") {
		t.Errorf("the interrupted coder's node: %q", got)
	}
	if got := node(`.graph-node[data-participant="tool:run_shell"][data-caller="coder-1-2"]`); !strings.Contains(got, "Shell ×1 ✗1") ||
		!strings.Contains(got, "graph-node--error") {
		t.Errorf("the coder's Shell node: %q", got)
	}

	// The inspector on the Shell node: the coder's call, failed, and what
	// the command printed.
	page.Eval(`(() => { document.querySelector('.graph-node[data-participant="tool:run_shell"][data-caller="coder-1-2"] .graph-node-box')
	  .dispatchEvent(new MouseEvent("click", { bubbles: true })); return ""; })()`)
	page.Poll("the pinned inspector", `document.querySelector(".tooltip-card--pinned") !== null`)
	page.Poll("the latest call's output", `(document.querySelector(".tooltip-card--pinned")?.textContent ?? "").includes("Latest call's output")`)
	card := page.Eval(`document.querySelector(".tooltip-card--pinned").textContent`)
	for _, want := range []string{"Calls by Coder: 1 (1 failed)", "#1 ✗ failed · 1 failed", "Outcome: ✗ failed · 1 passed, 1 failed · exit 1", "1 passed, 1 failed"} {
		if !strings.Contains(card, want) {
			t.Errorf("the inspector lacks %q:\n%s", want, card)
		}
	}
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the inspector closed", `document.querySelector(".tooltip-card--pinned") === null`)

	page.Do(chromedp.Click(`//button[text()="Sequence"]`))
	page.Poll("sequence rows", `document.querySelectorAll(".sequence-diagram .seq-row").length >= 8`)
	rows := page.Eval(`[...document.querySelectorAll(".sequence-diagram .seq-row")].map((r) => r.textContent).join("\n")`)
	if !strings.Contains(rows, "Shell answers Coder ✗ failed · 1 failed") || !strings.Contains(rows, "Coder reports back to Orchestrator ■ interrupted") ||
		!strings.Contains(rows, "✓ run success") {
		t.Errorf("sequence rows:\n%s", rows)
	}
	if n := page.Eval(`String(document.querySelectorAll(".seq-message--error").length)`); n != "2" {
		t.Errorf("%s messages drawn as errors, want 2 (the failed command, the missing file)", n)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}

// TestBrowserSaysTheModelDidNothing: a run whose model wrote its tool
// calls as text, was told so, and answered in words: the result modal says
// the model answered without doing anything, and the note that the
// endpoint returns tool calls as text (and why) is on the page, as text.
func TestBrowserSaysTheModelDidNothing(t *testing.T) {
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	addPastRunFile(t, sess.WS, filepath.Join("..", "render", "testdata", "model", "noaction.jsonl"), func(m *store.Meta) {
		m.Status = store.StatusError
		m.Result = &store.MetaResult{Status: "error", Summary: "The model wrote its tool calls as text.", Error: &store.MetaError{Kind: "invalid_tool_call", Message: "The model wrote its tool calls as text."}}
	})
	_, url := serveFake(t, sess, "noaction")
	page := webtest.OpenPage(t, browser, time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the result modal", `document.querySelector(".result-modal .no-action") !== null`)
	if got := page.Eval(`document.querySelector(".result-modal .no-action").textContent`); got != "The model answered without doing anything: no tool was called in the whole run." {
		t.Errorf("no-action line %q", got)
	}
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the run's note", `document.querySelector(".run-note") !== null`)
	note := page.Eval(`document.querySelector(".run-note").textContent`)
	for _, want := range []string{"returns tool calls as text (Hermes/Qwen <tool_call>)", "llama-server started without --jinja", "chat template without tools"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if n := page.Eval(`String(document.querySelectorAll(".run-note *").length)`); n != "0" {
		t.Errorf("the note holds %s elements: it must be text", n)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}
