package web

import (
	"context"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/webtest"
)

// screenshots, when set, is the folder the browser tests write the docs'
// screenshots to: go test ./web -run Parity -screenshots ../docs/images
var screenshots = flag.String("screenshots", "", "write the browser views' screenshots (PNG) into this folder")

// synthRun drives a live run of children delegations from the orchestrator
// to a coder, each with toolsPer model turns and read_file calls (10
// operations a child with toolsPer=4), then leaves a question of the
// orchestrator pending. It returns the run id.
func synthRun(t testing.TB, ctx context.Context, sess *fakeSession, children, toolsPer int) string {
	t.Helper()
	id, err := sess.Submit(ctx, runner.Submission{Task: "Refactor the `store` package\n\nSplit it in two."})
	if err != nil {
		t.Fatal(err)
	}
	sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "Refactor the `store` package\n\nSplit it in two.", Effort: "standard", EntryRole: "orchestrator"})
	sess.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Refactor"})
	for c := 0; c < children; c++ {
		rid := "coder-1-" + strconv.Itoa(c+2)
		sess.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: rid, Depth: 1, Task: "step " + strconv.Itoa(c), Parent: "orchestrator", ParentID: "orchestrator-0-1"})
		for k := 0; k < toolsPer; k++ {
			sess.Emit(t, event.LLMCall, event.LLMCallPayload{Role: "coder", RoleID: rid, Usage: event.Usage{TotalTokens: 1050}, ElapsedMs: 1200})
			cid := "c" + strconv.Itoa(c) + "-" + strconv.Itoa(k)
			sess.Emit(t, event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: rid, Tool: "read_file", CallID: cid, Arguments: `{"path":"pkg/file.go"}`})
			sess.Emit(t, event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: rid, Tool: "read_file", CallID: cid, Kind: "success", ElapsedMs: 3})
		}
		sess.Emit(t, event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: rid, Depth: 1, Status: "success", Summary: "Done.", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
	}
	q := event.AskHumanPayload{ID: "q-synth", Role: "orchestrator", RoleID: "orchestrator-0-1",
		Question: "Every step is done. Should the run **also** update the docs?",
		Context:  "The package split changes two import paths.\n\n- `store/log`\n- `store/meta`",
		Options: []event.Option{
			{Label: "Update the docs", Description: "Rewrite the two sections of docs/architecture.md that name the old package, and the examples in README.md that import it, so that nothing refers to the removed paths."},
			{Label: "Leave the docs", Description: "Only the code changes; a follow-up run can update the documentation later."},
		}}
	sess.mu.Lock()
	sess.questions = append(sess.questions, runner.Question{AskHumanPayload: q, RunID: id, AskedAt: time.Now()})
	sess.mu.Unlock()
	sess.Emit(t, event.AskHuman, q)
	return id
}

// TestBrowserParityOnALongRun checks the browser console against issue 18
// on a live 10,000-operation run waiting on a question, at 1280x900 and
// 390x844: no page overflow and every header control on screen; the
// question modal's answer box and submit button on screen; one flow node
// per role instance under its caller, as the terminal's graph has them;
// visible text on every sequence message; accessibility rules (axe-core
// too when npm has it installed) in light and dark.
func TestBrowserParityOnALongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10,000-operation run in Chromium")
	}
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	ctx, url := serveFake(t, sess, "parity")
	id := synthRun(t, ctx, sess, 1000, 4)
	logPath, _ := sess.WS.LogPath(id)
	m, err := webtest.ModelFromLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Operations) < 10000 {
		t.Fatalf("the synthetic run has %d operations, want 10,000", len(m.Operations))
	}
	ref := webtest.ReferenceFlow(m)
	axe := webtest.AxeSource()
	if axe == nil {
		t.Log("axe-core is not installed (npm install -g axe-core); the page is checked with the harness's own rules only")
	}

	for _, vp := range []webtest.Viewport{webtest.Desktop, webtest.Phone} {
		t.Run(vp.Name, func(t *testing.T) {
			page := webtest.OpenPage(t, browser, 3*time.Minute)
			defer page.Close()
			page.SetViewport(vp)
			page.Do(chromedp.Navigate(url))
			page.Poll("the question modal", `document.querySelector(".question-modal #answer-input") !== null`)
			checkQuestionModal(t, page)
			page.Check(t, axe, "the question modal")
			page.Do(chromedp.KeyEvent(kb.Escape))
			page.Poll("the question put off", `document.querySelector(".question-modal") === null`)

			page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length > 0`)
			checkFlowFollows(t, page)
			page.Check(t, axe, "the flow view")
			page.Do(chromedp.Click(`//button[text()="Fit"]`))
			page.Poll("every node drawn at Fit", `document.querySelectorAll(".flow-graph .graph-node").length >= `+strconv.Itoa(ref.Nodes))
			for _, p := range ref.Compare(page.FlowGraph()) {
				t.Error(p)
			}
			if *screenshots != "" && vp == webtest.Desktop {
				page.Do(chromedp.Click(`//button[text()="Follow"]`))
				page.Poll("the graph readable again", `document.querySelector(".flow-graph--overview") === null`)
				page.Screenshot(filepath.Join(*screenshots, "browser-flow-10k.png"))
			}

			page.Do(chromedp.Click(`//button[text()="Sequence"]`))
			page.Poll("sequence rows", `document.querySelectorAll(".sequence-diagram .seq-row").length > 0`)
			checkSequence(t, page, "at the newest row")
			if got := page.Eval(`String(document.querySelectorAll(".sequence-diagram .seq-row").length)`); mustAtoi(t, got) > 200 {
				t.Errorf("the sequence view draws %s rows of 10,000: it is not windowed", got)
			}
			page.Eval(`(() => { const s = document.querySelector(".seq-scroll"); s.scrollTop = s.scrollHeight / 2; return ""; })()`)
			page.Poll("the middle rows", `document.querySelector('.sequence-diagram [data-index="5000"]') !== null`)
			checkSequence(t, page, "in the middle")
			page.SetColorScheme("dark")
			page.Check(t, axe, "the sequence view, dark")
			page.SetColorScheme("")
			for _, p := range page.Close() {
				t.Errorf("console: %s", p)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// checkQuestionModal: the answer box and the submit button are wholly on
// screen, nothing else of the page takes focus, and the option
// descriptions are whole.
func checkQuestionModal(t *testing.T, page *webtest.Page) {
	t.Helper()
	if err := page.FullyInViewport(".question-modal #answer-input", ".question-modal button[type=submit]"); err != nil {
		t.Error(err)
	}
	if got := page.Eval(`(() => { const d = document.querySelector(".question-modal [role=dialog]"); return d !== null && d.contains(document.activeElement) ? "inside" : String(document.activeElement && document.activeElement.className); })()`); got != "inside" {
		t.Errorf("focus is on %q, not in the modal", got)
	}
	// Tab through more controls than the modal has: focus never leaves it.
	for i := 0; i < 12; i++ {
		page.Do(chromedp.KeyEvent(kb.Tab))
	}
	if got := page.Eval(`document.activeElement.closest(".question-modal") !== null ? "inside" : document.activeElement.outerHTML.slice(0, 80)`); got != "inside" {
		t.Errorf("Tab moved focus out of the modal to %s", got)
	}
	var clipped []string
	page.EvalJSON(`JSON.stringify(Array.from(document.querySelectorAll(".question-modal .option-description")).filter((el) =>
	  el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1 || getComputedStyle(el).textOverflow === "ellipsis").map((el) => el.textContent))`, &clipped)
	if len(clipped) > 0 {
		t.Errorf("option descriptions cut: %q", clipped)
	}
}

// checkFlowFollows: the graph starts on the run's active node, drawn
// with its text, and only what is on screen is drawn.
func checkFlowFollows(t *testing.T, page *webtest.Page) {
	t.Helper()
	page.Poll("the active node on screen", `(() => { const n = document.querySelector(".flow-graph .graph-node--active");
	  if (n === null) return false; const r = n.getBoundingClientRect(), c = document.querySelector(".flow-canvas").getBoundingClientRect();
	  return r.left >= c.left && r.right <= c.right && r.top >= c.top && r.bottom <= c.bottom; })()`)
	drawn := page.FlowGraph()
	if len(drawn.Nodes) >= drawn.Total {
		t.Errorf("the flow view draws all %d nodes at its first zoom: not culled to the screen", drawn.Total)
	}
	for _, n := range drawn.Nodes {
		if n.Kind == "role" && !strings.Contains(n.Text, "tok") {
			t.Errorf("role node %s shows no tokens: %q", n.Participant, n.Text)
		}
	}
}

func checkSequence(t *testing.T, page *webtest.Page, where string) {
	t.Helper()
	n, problems := page.SequenceTextProblems()
	if n == 0 {
		t.Errorf("%s: no sequence message on screen", where)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", where, p)
	}
}

// unclosedProse has every tag the issue names opened and never closed, each
// followed by text that must stay visible.
var unclosedProse = map[string]string{
	"textarea":  "Check the form. <textarea> AFTER-TEXTAREA stays **visible**.",
	"noscript":  "Scripts off: <noscript>\n\nAFTER-NOSCRIPT stays visible.",
	"style":     "Styles: <style> AFTER-STYLE stays visible.",
	"title":     "The page <title> AFTER-TITLE stays visible.",
	"xmp":       "Old markup:\n\n<xmp>\n\nAFTER-XMP stays visible.",
	"plaintext": "The rest <plaintext> AFTER-PLAINTEXT stays visible.",
}

// TestBrowserUnclosedTagsLeaveTheRestVisible: model prose with an unclosed
// <textarea>, <noscript>, <style>, <title>, <xmp> or <plaintext> (in the
// question, its context, and the result summary) hides nothing after it in
// the page, and no markup survives.
func TestBrowserUnclosedTagsLeaveTheRestVisible(t *testing.T) {
	browser := webtest.Browser(t)
	sess := newFakeSession(t)
	ctx, url := serveFake(t, sess, "unclosed")
	task := "Fix the form " + unclosedProse["textarea"]
	id, err := sess.Submit(ctx, runner.Submission{Task: task})
	if err != nil {
		t.Fatal(err)
	}
	sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: task, Effort: "standard", EntryRole: "orchestrator"})
	sess.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: task})
	q := event.AskHumanPayload{ID: "q-tags", Role: "orchestrator", RoleID: "orchestrator-0-1",
		Question: unclosedProse["style"] + "\n\n" + unclosedProse["title"],
		Context:  unclosedProse["noscript"] + "\n\n" + unclosedProse["xmp"]}
	sess.mu.Lock()
	sess.questions = append(sess.questions, runner.Question{AskHumanPayload: q, RunID: id, AskedAt: time.Now()})
	sess.mu.Unlock()
	sess.Emit(t, event.AskHuman, q)

	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the question modal", `document.querySelector(".question-modal .question-text") !== null`)
	visible := func(where, marker string) {
		t.Helper()
		got := page.Eval(`(() => { const el = document.querySelector(` + strconv.Quote(where) + `); if (el === null) return "missing";
		  const r = el.getBoundingClientRect(); return el.innerText.includes(` + strconv.Quote(marker) + `) && r.height > 0 ? "visible" : el.innerText; })()`)
		if got != "visible" {
			t.Errorf("%s does not show %s: %q", where, marker, got)
		}
	}
	visible(".question-modal .question-text", "AFTER-STYLE")
	visible(".question-modal .question-text", "AFTER-TITLE")
	visible(".question-modal .question-context", "AFTER-NOSCRIPT")
	visible(".question-modal .question-context", "AFTER-XMP")
	page.Do(chromedp.KeyEvent(kb.Escape))

	// The result: the summary holds the rest of the tags.
	m, err := sess.WS.ReadMeta(id)
	if err != nil {
		t.Fatal(err)
	}
	m.Status = "success"
	end := time.Now().UTC()
	m.EndedAt = &end
	m.Result = &store.MetaResult{Status: "success", Summary: "## Done\n\n" + unclosedProse["plaintext"] + "\n\n" + unclosedProse["textarea"]}
	if err := sess.WS.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	sess.questions = nil
	sess.mu.Unlock()
	sess.Emit(t, event.RunStatus, event.RunStatusPayload{Status: "success"})
	sess.SetActive("")
	page.Poll("the result modal", `document.querySelector(".result-modal .result-summary") !== null`)
	visible(".result-modal .result-summary", "AFTER-PLAINTEXT")
	visible(".result-modal .result-summary", "AFTER-TEXTAREA")
	if got := page.Eval(`String(document.querySelectorAll(".result-modal .result-summary strong").length)`); got != "1" {
		t.Errorf("the Markdown after the unclosed tags did not render: %s <strong>", got)
	}
	if got := page.Eval(`String(document.querySelectorAll("textarea:not(#answer-input):not(#task-input):not(#interrupt-input), style:not(head style), title:not(head title), xmp, plaintext, noscript").length)`); got != "0" {
		t.Errorf("%s dropped elements reached the page", got)
	}
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the result closed", `document.querySelector(".result-modal") === null`)
	visible(".task-identity-title", "AFTER-TEXTAREA")
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}
