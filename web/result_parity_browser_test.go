package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/web/webtest"
)

// TestBrowserKeepsUpWithTheTerminal checks, on the live scripted demo in
// headless Chromium, what the terminal gained last (issue 29, point 11):
// the model's name and its context meter in the watch bar; the task card's
// one plain line with an ellipsis, and the whole task (Markdown) on
// demand; the flow graph on screen after the window goes from 1920 to 390
// px wide; and the result's "What changed", the same change set as the
// terminal's `w`, its diff shown as text.
func TestBrowserKeepsUpWithTheTerminal(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, url, _ := demoServerToken(t, ctx)
	if _, err := sess.Submit(ctx, runner.Submission{Task: seed.DemoTask()}); err != nil {
		t.Fatal(err)
	}
	page := webtest.OpenPage(t, browser, 3*time.Minute)
	defer page.Close()
	wide := webtest.Viewport{Name: "wide", Width: 1920, Height: 1080}
	page.SetViewport(wide)
	page.Do(chromedp.Navigate(url))
	page.Poll("the question modal", `document.querySelector(".question-modal #answer-input") !== null`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the question put off", `document.querySelector(".question-modal") === null`)

	// The meters: the model's name (the one the endpoint answered with, as
	// the terminal's footer shows it), and the context its latest caller
	// fills.
	page.Poll("the model's name", `(document.querySelector(".meters .model-name") || {}).textContent === "scripted"`)
	page.Poll("the context meter", `document.querySelector(".meters .context-meter[role=meter]") !== null`)
	meter := page.Eval(`document.querySelector(".context-meter").textContent`)
	if !strings.HasPrefix(meter, "context ▰") || !strings.Contains(meter, " of ") {
		t.Errorf("context meter %q", meter)
	}
	if now, max := page.Eval(`document.querySelector(".context-meter").getAttribute("aria-valuenow")`), page.Eval(`document.querySelector(".context-meter").getAttribute("aria-valuemax")`); now == "0" || now == "" || max == "0" || max == "" {
		t.Errorf("meter values now=%q max=%q", now, max)
	}

	// The task card: one line, no Markdown, cut with an ellipsis when it
	// does not fit; the whole task on demand, as Markdown.
	page.Poll("the task card", `document.querySelector(".task-identity-title") !== null`)
	title := page.Eval(`document.querySelector(".task-identity-title").textContent`)
	if strings.ContainsAny(title, "`*\n") || !strings.HasPrefix(title, "The tests in this project fail. Fix the slugify function") {
		t.Errorf("task card title %q", title)
	}
	style := page.Eval(`(() => { const s = getComputedStyle(document.querySelector(".task-identity-title")); return s.whiteSpace + " " + s.textOverflow; })()`)
	if style != "nowrap ellipsis" {
		t.Errorf("task card title style %q, want one line with an ellipsis", style)
	}
	page.Do(chromedp.Click(`//button[contains(@class,"task-toggle")]`))
	page.Poll("the whole task", `document.querySelector(".task-whole code") !== null`)
	if got := page.Eval(`document.querySelector(".task-whole").textContent`); !strings.Contains(got, "sh test.sh") || strings.Contains(got, "`") {
		t.Errorf("whole task %q", got)
	}
	if got := page.Eval(`document.querySelector(".task-toggle").getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("the toggle's aria-expanded is %q", got)
	}

	// From 1920 to 390 px: the graph stays on screen.
	page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length > 0`)
	page.SetViewport(webtest.Phone)
	page.Poll("the page at 390 px", `innerWidth === 390`)
	page.Poll("the flow graph inside the viewport", `(() => {
	  const g = document.querySelector(".flow-graph"); if (g === null) return false;
	  const r = g.getBoundingClientRect();
	  return r.left >= 0 && r.right <= innerWidth + 1 && r.width > 0 && document.documentElement.scrollWidth <= innerWidth;
	})()`)
	if got := page.Eval(`String([...document.querySelectorAll(".flow-graph .graph-node")].some((n) => { const r = n.getBoundingClientRect(); return r.right > 0 && r.left < innerWidth && r.bottom > 0 && r.top < innerHeight; }))`); got != "true" {
		t.Error("no node of the flow graph is on screen at 390 px")
	}
	if got := page.Eval(`(() => { const n = document.querySelector(".flow-graph .graph-node--active"); if (n === null) return "none"; const r = n.getBoundingClientRect(); return String(r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.top < innerHeight); })()`); got != "true" {
		t.Errorf("the node that acts now is on screen at 390 px: %s", got)
	}
	if probs := page.LayoutProblems(); len(probs) > 0 {
		t.Errorf("layout at 390 px: %v", probs)
	}
	page.SetViewport(wide)

	// Answer; the result lists what changed, the diff as text.
	page.Do(chromedp.Click(`//div[contains(@class,"notice-bar")]//button[text()="Answer"]`))
	page.Poll("the question back", `document.querySelector(".question-modal button.option") !== null`)
	page.Do(chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`))
	page.Poll("the result's change set", `document.querySelector(".result-modal .change-file") !== null`)
	head := page.Eval(`document.querySelector(".result-changes .section-label").textContent`)
	files := page.Eval(`[...document.querySelectorAll(".result-modal .change-file-head")].map((b) => b.textContent).join("\n")`)
	if !strings.HasPrefix(head, "What changed · 1 file, +2 −1") || !strings.Contains(files, "lib/slugify.sh") {
		t.Errorf("what changed: %q\n%s", head, files)
	}
	page.Do(chromedp.Click(`//button[contains(@class,"change-file-head")][.//span[text()="lib/slugify.sh"]]`))
	page.Poll("the file's diff", `document.querySelector(".result-modal .change-patch") !== null`)
	patch := page.Eval(`document.querySelector(".change-patch").textContent`)
	if !strings.Contains(patch, "@@") || !strings.Contains(patch, "s/-$//") {
		t.Errorf("patch %q", patch)
	}
	if got := page.Eval(`[...document.querySelectorAll(".change-patch .diff-line--add")].map((l) => l.textContent).join("")`); !strings.Contains(got, "+\t\t-e 's/-$//'") && !strings.Contains(got, "s/-$//") {
		t.Errorf("the added lines %q", got)
	}
	if n := page.Eval(`String(document.querySelectorAll(".change-patch *:not(span.diff-line)").length + document.querySelectorAll(".change-patch span.diff-line *").length)`); n != "0" {
		t.Errorf("the diff holds %s elements besides its lines: it must be text", n)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}
