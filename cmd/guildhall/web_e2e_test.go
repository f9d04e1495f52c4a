package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/web/webtest"
)

// webDemo is the real binary running `guildhall demo --headless --web
// 127.0.0.1:0`, its standard error read a line at a time, and the
// headless browser that is to answer it.
type webDemo struct {
	browser context.Context
	cmd     *exec.Cmd
	lines   chan string
}

// startWebDemo starts a browser and the web demo, with env added to this
// process's environment. The process is killed when the test ends.
func startWebDemo(t *testing.T, env ...string) *webDemo {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and drives a browser")
	}
	browser := webtest.Browser(t)
	cmd := exec.Command(buildBinary(t), "demo", "--headless", "--speed", "0.3", "--web", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := &webDemo{browser: browser, cmd: cmd, lines: make(chan string, 256)}
	go func() {
		defer close(d.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case d.lines <- sc.Text():
			default: // nobody reads this far
			}
		}
	}()
	return d
}

// next is the demo's next line of standard error.
func (d *webDemo) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-d.lines:
		if !ok {
			t.Fatal("the binary's standard error ended before the console's lines")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the binary never printed the browser console URL")
	}
	return ""
}

// url reads standard error up to the browser console's URL.
func (d *webDemo) url(t *testing.T) string {
	t.Helper()
	for {
		if u, ok := strings.CutPrefix(d.next(t), "browser console: "); ok {
			return u
		}
	}
}

// answerInBrowser answers the demo's question in page, which shows the
// run, sees the result modal, and checks the console stayed free of
// errors. With --web the process serves until interrupted, then exits
// with the run's status: 0.
func (d *webDemo) answerInBrowser(t *testing.T, page *webtest.Page) {
	t.Helper()
	page.Poll("the question modal", `document.querySelector(".question-modal .question-text") !== null`)
	page.Do(chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`))
	page.Poll("the result modal", `document.querySelector(".result-modal .result-summary h2") !== null`)
	if got := page.Eval(`document.querySelector(".result-modal .result-summary h2").textContent`); got != "Slug tests fixed" {
		t.Errorf("result heading %q", got)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("the demo should exit 0 once answered from the browser: %v", err)
	}
}

// TestDemoWithWebCompanion starts the real binary as `guildhall demo
// --headless --web 127.0.0.1:0`, opens the printed URL in headless
// Chromium, answers the demo's question in the browser modal, sees the
// result modal, and checks the console stayed free of errors.
func TestDemoWithWebCompanion(t *testing.T) {
	d := startWebDemo(t)
	url := d.url(t)

	page := webtest.OpenPage(t, d.browser, 2*time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("flow graph nodes", `document.querySelectorAll(".flow-graph .graph-node").length >= 2`)
	d.answerInBrowser(t, page)
}
