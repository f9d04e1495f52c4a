package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/demo"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web"
	"github.com/guildhall/guildhall/web/webtest"
)

// demoServer runs the scripted demo in-process, as `guildhall demo --web`
// does, and serves it on loopback. url is the printed one, token and all.
func demoServer(t *testing.T, ctx context.Context) (sess *runner.Session, url string) {
	sess, url, _ = demoServerToken(t, ctx)
	return sess, url
}

// demoServerToken is demoServer that also returns the access token, for
// the test's own API calls.
func demoServerToken(t *testing.T, ctx context.Context) (*runner.Session, string, string) {
	t.Helper()
	dir := t.TempDir()
	dm, err := demo.Setup(dir, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := runner.OpenSession(runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: dm.Guild, Deployment: dm.Deployment, Provider: dm.Provider})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	srv, err := web.New(sess, dm.Guild, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return sess, url, srv.Token()
}

// TestBrowserWatchesAndAnswersTheDemo opens the console on the live demo
// run in headless Chromium: the flow graph shows nodes, the demo's question
// is answered in the browser's modal, and the result modal shows the
// summary, all with no console error.
func TestBrowserWatchesAndAnswersTheDemo(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, url, token := demoServerToken(t, ctx)
	if _, err := sess.Submit(ctx, runner.Submission{Task: seed.DemoTask()}); err != nil {
		t.Fatal(err)
	}

	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	run, poll, eval := page.Ctx, page.Poll, page.Eval

	if err := chromedp.Do(run, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	poll("flow graph nodes", `document.querySelectorAll(".flow-graph .graph-node").length >= 2`)
	if got := eval(`document.querySelector(".flow-graph .graph-node--human .graph-node-label").textContent`); got == "" || got == "human" {
		t.Errorf("root node label %q", got)
	}

	// Record when each operation first appears, then watch the sequence view.
	eval(`(() => { window.__seen = {}; const mark = () => { for (const el of document.querySelectorAll("[data-operation]")) {
	  const id = el.getAttribute("data-operation"); if (!(id in window.__seen)) window.__seen[id] = Date.now(); } };
	  mark(); new MutationObserver(mark).observe(document.body, {subtree: true, childList: true, attributes: true}); return ""; })()`)
	installed := time.Now()

	poll("the question modal", `document.querySelector(".question-modal .question-text") !== null`)
	if got := eval(`document.querySelector(".question-modal .question-text").textContent`); !strings.Contains(got, "accented letters") {
		t.Errorf("question text %q", got)
	}
	if got := eval(`(document.querySelector(".question-modal .question-context strong") || {}).textContent || ""`); got != "dropped" {
		t.Errorf("the question's context is not rendered Markdown: strong=%q", got)
	}
	if got := eval(`String(document.querySelectorAll(".question-modal button.option").length)`); got != "3" {
		t.Errorf("%s option buttons", got)
	}
	// The modal covers the page: Esc puts the question off, the page is
	// usable again, and "Answer" brings the question back with focus in it.
	poll("focus inside the question modal", `document.activeElement !== null && document.activeElement.closest(".question-modal") !== null`)
	if err := chromedp.Do(run, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	poll("the question put off", `document.querySelector(".question-modal") === null && document.querySelector(".notice-bar button") !== null`)
	if err := chromedp.Do(run, chromedp.Click(`//button[text()="Sequence"]`)); err != nil {
		t.Fatal(err)
	}
	poll("sequence messages", `document.querySelectorAll(".sequence-diagram path.seq-message").length > 0`)
	if err := chromedp.Do(run, chromedp.Click(`//div[contains(@class,"notice-bar")]//button[text()="Answer"]`)); err != nil {
		t.Fatal(err)
	}
	poll("the question back, focus in it", `document.querySelector(".question-modal") !== null && document.activeElement.closest(".question-modal") !== null`)
	if err := chromedp.Do(run, chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`)); err != nil {
		t.Fatal(err)
	}

	poll("the result modal", `document.querySelector(".result-modal .result-summary h2") !== null`)
	if got := eval(`document.querySelector(".result-modal .result-summary h2").textContent`); got != "Slug tests fixed" {
		t.Errorf("summary heading %q", got)
	}
	if got := eval(`document.querySelector(".result-modal h2").textContent`); got != "Run finished" {
		t.Errorf("result heading %q", got)
	}
	poll("the tab title", `document.title.startsWith("✓")`)
	if got := eval(`document.querySelector(".question-modal") === null ? "gone" : "still there"`); got != "gone" {
		t.Errorf("question modal is %s after answering", got)
	}
	if got := eval(`document.querySelector("#favicon").getAttribute("href")`); !strings.HasSuffix(got, "favicon-done.svg") {
		t.Errorf("favicon %q", got)
	}

	// Hover an operation: the inspector shows its details as rendered Markdown.
	if err := chromedp.Do(run, chromedp.Click(`//button[text()="Close"]`)); err != nil {
		t.Fatal(err)
	}

	// The task-identity header is text only; the task-history drawer renders
	// the thread's prose as Markdown and its markers as text.
	poll("the task-identity header", `(document.querySelector(".task-identity-title") || {}).textContent === "Slug tests fixed"`)
	if got := eval(`String(document.querySelectorAll(".task-identity code, .task-identity strong, .task-identity a").length)`); got != "0" {
		t.Errorf("the task-identity header has %s markup elements", got)
	}
	if got := eval(`(document.querySelector(".task-identity-latest") || {}).textContent || ""`); !strings.Contains(got, "Only fix the failing tests") {
		t.Errorf("latest human text %q", got)
	}
	// A DOM click: the page may still shift under a pointer click while the
	// run's outcome summary arrives.
	eval(`(() => { Array.from(document.querySelectorAll("button")).find((b) => b.textContent === "Task history").click(); return ""; })()`)
	poll("the task-history drawer", `document.querySelector(".drawer .turn--question .turn-context strong") !== null`)
	if got := eval(`document.querySelector(".drawer .turn--human .turn-text code").textContent`); got != "slugify" {
		t.Errorf("human turn Markdown: code=%q", got)
	}
	if got := eval(`document.querySelector(".drawer .turn--orchestrator .turn-text h2").textContent`); got != "Slug tests fixed" {
		t.Errorf("orchestrator turn heading %q", got)
	}
	if got := eval(`document.querySelector(".drawer .turn--answer .answer-text").textContent`); got != "Only fix the failing tests" {
		t.Errorf("answer turn %q", got)
	}
	if got := eval(`String(document.querySelectorAll(".drawer .turn--system").length)`); got == "0" {
		t.Error("no markers in the drawer")
	}
	if err := chromedp.Do(run, chromedp.Click(`//aside[contains(@class,"drawer")]//button[text()="Close"]`)); err != nil {
		t.Fatal(err)
	}
	seenRaw := eval(`JSON.stringify(window.__seen)`)
	// The page may still re-lay out (panels load); move away and back until
	// the hover lands.
	hovered := false
	for attempt := 0; attempt < 20 && !hovered; attempt++ {
		eval(`(() => { document.querySelector(".seq-scroll").scrollTop = 0; return ""; })()`)
		poll("the first message drawn", `document.querySelector('.sequence-diagram [data-operation="op-1"] .seq-label') !== null`)
		box, err := chromedp.Run(run, chromedp.Evaluate[[]float64](`(() => { const el = document.querySelector('.sequence-diagram [data-operation="op-1"] .seq-label');
		  el.scrollIntoView({block: "center"}); const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(run, chromedp.MouseEvent(chromedp.MouseMoved, 1, 1), chromedp.MouseEvent(chromedp.MouseMoved, box[0], box[1])); err != nil {
			t.Fatal(err)
		}
		_, err = chromedp.Run(run, chromedp.Poll[bool](`(document.querySelector(".tooltip-card .md code") || {}).textContent === "slugify"`,
			chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Second)))
		hovered = err == nil
	}
	if !hovered {
		t.Fatal("hovering the first operation never showed the inspector with the task's details")
	}
	if got := eval(`document.querySelector(".tooltip-card .tooltip-title").textContent`); got == "" {
		t.Error("inspector without a title")
	}
	logLatency(t, url, token, seenRaw, installed)

	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}

// logLatency reports how long after its event each operation appeared in the
// page (event timestamp to first DOM appearance, both wall clocks of this
// machine). It is a figure for the notes, not an assertion.
func logLatency(t *testing.T, pageURL, token, seenRaw string, after time.Time) {
	var seen map[string]int64
	if err := json.Unmarshal([]byte(seenRaw), &seen); err != nil {
		t.Fatal(err)
	}
	base, _, _ := strings.Cut(pageURL, "?")
	req, _ := http.NewRequest("GET", base+"api/run/flow", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env render.Envelope
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || env.Model == nil {
		t.Fatalf("flow: %v", err)
	}
	var lat []time.Duration
	for _, op := range env.Model.Operations {
		ms, ok := seen[op.ID]
		if !ok || op.StartedAt.Before(after.Add(500*time.Millisecond)) {
			continue
		}
		d := time.UnixMilli(ms).Sub(op.StartedAt)
		if d > 200*time.Millisecond {
			t.Logf("slow: %s %s %s→%s %v", op.ID, op.Kind, op.Source, op.Destination, d)
		}
		lat = append(lat, d)
	}
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("event → operation on screen: %d operations, median %v, max %v", len(lat), lat[len(lat)/2], lat[len(lat)-1])
}

// TestBrowserOnAnEmptyWorkspace opens the console before any run exists:
// the page renders and the console stays free of errors (no 404 for a
// latest run that does not exist yet).
func TestBrowserOnAnEmptyWorkspace(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, url := demoServer(t, ctx)
	page := webtest.OpenPage(t, browser, time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the page", `document.querySelector(".top-bar") !== null && document.title !== ""`)
	time.Sleep(300 * time.Millisecond) // let the boot requests settle
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}

// testRecordsKey seals the records of the end-to-end tests' workspaces.
var testRecordsKey = []byte("web-e2e-records-key-32-bytes!!!!")
