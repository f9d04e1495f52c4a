package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/web/webtest"
)

// TestDemoWithWebCompanion starts the real binary as `guildhall demo
// --headless --web 127.0.0.1:0`, opens the printed URL in headless
// Chromium, answers the demo's question in the browser modal, sees the
// result modal, and checks the console stayed free of errors.
func TestDemoWithWebCompanion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and drives a browser")
	}
	browser := webtest.Browser(t)
	bin := buildBinary(t)
	cmd := exec.Command(bin, "demo", "--headless", "--speed", "0.3", "--web", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "browser console: "); ok {
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the binary never printed the browser console URL")
	}

	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	run, poll := page.Ctx, page.Poll
	if err := chromedp.Do(run, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	poll("flow graph nodes", `document.querySelectorAll(".flow-graph .graph-node").length >= 2`)
	poll("the question modal", `document.querySelector(".question-modal .question-text") !== null`)
	if err := chromedp.Do(run, chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`)); err != nil {
		t.Fatal(err)
	}
	poll("the result modal", `document.querySelector(".result-modal .result-summary h2") !== null`)
	got, err := chromedp.Run(run, chromedp.Evaluate[string](`document.querySelector(".result-modal .result-summary h2").textContent`))
	if err != nil || got != "Slug tests fixed" {
		t.Fatalf("result summary heading %q %v", got, err)
	}
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
	// With --web the process serves until interrupted, then exits with the
	// run's status.
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the demo should exit 0 once answered from the browser: %v", err)
	}
}
