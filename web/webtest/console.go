package webtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Console collects a tab's console errors, failed assertions and uncaught
// exceptions while a test drives the page.
type Console struct {
	mu       sync.Mutex
	problems []string
	done     chan struct{}
}

// WatchConsole starts collecting from tab (a chromedp context). Call
// Problems after the tab is cancelled.
func WatchConsole(tab context.Context) *Console {
	c := &Console{done: make(chan struct{})}
	messages := chromedp.Console(tab)
	go func() {
		defer close(c.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleType("error") || m.Type == chromedp.ConsoleType("assert") {
				where := ""
				if m.URL != "" {
					where = fmt.Sprintf(" (%s:%d:%d)", m.URL, m.Line+1, m.Column+1)
				}
				c.mu.Lock()
				c.problems = append(c.problems, m.String()+where)
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// Snapshot is what was collected so far (for failure messages mid-test).
func (c *Console) Snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

// Problems waits for the watch to end (cancel the tab first) and returns
// everything collected.
func (c *Console) Problems() []string {
	<-c.done
	return c.Snapshot()
}

// Page is a browser tab an end-to-end test drives: it polls for
// conditions, evaluates expressions and collects console problems.
type Page struct {
	// Ctx runs actions in the tab (bounded by the page's timeout).
	Ctx     context.Context
	t       testing.TB
	console *Console
	cancel  []context.CancelFunc
}

// OpenPage opens a tab in browser (see Browser). timeout is a safety net
// for the whole test, not an assertion.
func OpenPage(t testing.TB, browser context.Context, timeout time.Duration) *Page {
	t.Helper()
	return openPage(t, browser, timeout)
}

// OpenIsolatedPage is OpenPage in a new browser context: the tab shares no
// cookies or storage with the browser's other tabs, as if another browser
// (or another user's) opened the address.
func OpenIsolatedPage(t testing.TB, browser context.Context, timeout time.Duration) *Page {
	t.Helper()
	return openPage(t, browser, timeout, chromedp.WithNewBrowserContext())
}

func openPage(t testing.TB, browser context.Context, timeout time.Duration, opts ...chromedp.ContextOption) *Page {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser, opts...)
	console := WatchConsole(tab)
	ctx, cancel := context.WithTimeout(tab, timeout)
	return &Page{Ctx: ctx, t: t, console: console, cancel: []context.CancelFunc{cancel, cancelTab}}
}

// Poll waits until expr is true in the page, failing the test (with the
// console so far) if it never is.
func (p *Page) Poll(what, expr string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.t.Fatalf("waiting for %s: %v\nconsole: %s", what, err, strings.Join(p.console.Snapshot(), "\n"))
	}
}

// PollNavigating is Poll for a page that navigates while it waits (a
// click on a link, a redirect, a refresh): an evaluation that fails
// because the document went away is retried in the next one.
func (p *Page) PollNavigating(what, expr string) {
	p.t.Helper()
	var last error
	for p.Ctx.Err() == nil {
		ok, err := chromedp.Run(p.Ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		last = err
		select {
		case <-p.Ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("waiting for %s: %v (last: %v)\nconsole: %s", what, p.Ctx.Err(), last, strings.Join(p.console.Snapshot(), "\n"))
}

// Eval evaluates a string-valued expression in the page.
func (p *Page) Eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Do runs actions (navigate, click, …) in the page, failing the test on
// error.
func (p *Page) Do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.Ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// Cookies returns the cookies the browser holds for urls, HttpOnly ones
// included (as the browser stores them, which page script cannot see).
func (p *Page) Cookies(urls ...string) []*network.Cookie {
	p.t.Helper()
	res, err := chromedp.Call(p.Ctx, network.GetCookies, network.GetCookiesParams{URLs: urls})
	if err != nil {
		p.t.Fatalf("get cookies: %v", err)
	}
	return res.Cookies
}

// Close closes the tab and returns the console problems it collected.
// Calling it again returns the same problems.
func (p *Page) Close() []string {
	for _, c := range p.cancel {
		c()
	}
	return p.console.Problems()
}
