package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/demo"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web"
	"github.com/guildhall/guildhall/web/webtest"
)

// The scheduler is what the command hands web.WithQueue.
var _ web.Queue = (*runner.Scheduler)(nil)

// TestBrowserQueueScreen: in headless Chromium, a task added on the Queue
// screen is listed (its first line as text), and a parked task's question
// opens the question modal (Markdown rendered through the sanitized
// pipeline) whose option answers it.
func TestBrowserQueueScreen(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	dir := t.TempDir()
	dm, err := demo.Setup(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := runner.OpenSession(runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: dm.Guild, Deployment: dm.Deployment, Provider: dm.Provider})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	// The scheduler is not started: its items stay where the test puts them.
	sched := runner.NewScheduler(sess, runner.SchedulerOptions{})

	// A parked item, as the scheduler leaves one whose run asked.
	q := sess.Workspace().Queue()
	parked, err := q.Add(ctx, store.QueueSpec{Task: "Port the parser"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := q.ClaimNext(ctx); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := q.MarkActive(ctx, parked.ID, "run-20250101-000001"); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Finish(ctx, parked.ID, store.QueueOutcome{RunID: "run-20250101-000001", RunStatus: "needs_clarification",
		Question: &store.QueueQuestion{Text: "Which **grammar** should the parser use?", Context: "The README says `PEG` is **preferred**.",
			Options: []store.QueueOption{{Label: "PEG"}, {Label: "LALR", Description: "the old one"}}}}); err != nil {
		t.Fatal(err)
	}

	// A finished run, so the console has one to show (GET /api/run is 404
	// on a workspace without runs).
	ws := sess.Workspace()
	past, err := ws.CreateRun(time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(-59 * time.Minute).UTC()
	if err := ws.WriteMeta(&store.Meta{RunID: past, Task: "Earlier work", Effort: "standard", Status: store.StatusSuccess,
		StartedAt: end.Add(-time.Minute), EndedAt: &end, Result: &store.MetaResult{Status: "success", Summary: "Done."}}); err != nil {
		t.Fatal(err)
	}

	srv, err := web.New(sess, dm.Guild, "e2e", web.WithQueue(sched))
	if err != nil {
		t.Fatal(err)
	}
	url, err := srv.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	run, poll, eval := page.Ctx, page.Poll, page.Eval

	if err := chromedp.Do(run, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	poll("the Queue tab", `[...document.querySelectorAll("nav.tabs button")].some((b) => b.textContent.startsWith("Queue"))`)
	eval(`(() => { [...document.querySelectorAll("nav.tabs button")].find((b) => b.textContent.startsWith("Queue")).click(); return ""; })()`)
	poll("the parked item", `document.querySelector('[data-queue-id="`+parked.ID+`"].queue-item--needs_input') !== null`)
	// The tab counts in words (it read "Queue ?" with a task to answer).
	if got := eval(`[...document.querySelectorAll("nav.tabs button")].find((b) => b.textContent.startsWith("Queue")).textContent`); got != "Queue (1 to answer)" {
		t.Errorf("the Queue tab reads %q, want %q", got, "Queue (1 to answer)")
	}

	// Add a task: its first line is listed as text, Markdown marks and all.
	if err := chromedp.Do(run, chromedp.SendKeys("#queue-task-input", "Write the **docs** <b>now</b>\nwith details")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(run, chromedp.Click(`//button[text()="Add to queue"]`)); err != nil {
		t.Fatal(err)
	}
	poll("the added task", `[...document.querySelectorAll(".queue-item--waiting .queue-task")].some((e) => e.textContent === "Write the **docs** <b>now</b>")`)
	poll("the tab's counts", `[...document.querySelectorAll("nav.tabs button")].find((b) => b.textContent.startsWith("Queue")).textContent === "Queue (1 waiting, 1 to answer)"`)
	if got := eval(`String(document.querySelectorAll(".queue-item--waiting .queue-task b, .queue-item--waiting .queue-task strong").length)`); got != "0" {
		t.Errorf("the task line was rendered as markup: %s elements", got)
	}
	items, err := sched.List()
	if err != nil || len(items) != 2 || items[1].Task != "Write the **docs** <b>now</b>\nwith details" || items[1].Status != store.QueueWaiting {
		t.Fatalf("queue after adding: %+v %v", items, err)
	}

	// Answer the parked question in its modal.
	eval(`(() => { document.querySelector('[data-queue-id="` + parked.ID + `"] button[data-action="answer"]').click(); return ""; })()`)
	poll("the question modal", `document.querySelector(".question-modal .question-text strong") !== null`)
	if got := eval(`document.querySelector(".question-modal .question-text strong").textContent`); got != "grammar" {
		t.Errorf("question Markdown: strong=%q", got)
	}
	if got := eval(`(document.querySelector(".question-modal .question-context strong") || {}).textContent || ""`); got != "preferred" {
		t.Errorf("context Markdown: strong=%q", got)
	}
	if got := eval(`String(document.querySelectorAll(".question-modal button.option").length)`); got != "2" {
		t.Errorf("%s option buttons", got)
	}
	if err := chromedp.Do(run, chromedp.Click(`//button[contains(@class,"option")][.//span[text()="PEG"]]`)); err != nil {
		t.Fatal(err)
	}
	poll("the answered item", `document.querySelector(".question-modal") === null && document.querySelector('[data-queue-id="`+parked.ID+`"].queue-item--waiting') !== null`)
	it, err := sched.Get(parked.ID)
	if err != nil || it.Status != store.QueueWaiting || it.Answer != "PEG" {
		t.Errorf("parked item after answering: %+v %v", it, err)
	}

	// Reorder: the added task moves to the top.
	added := items[1].ID
	eval(`(() => { document.querySelector('[data-queue-id="` + added + `"] button[data-action="top"]').click(); return ""; })()`)
	poll("the reordered queue", `document.querySelector(".queue-item").getAttribute("data-queue-id") === "`+added+`"`)

	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}
