package webtest

import (
	"context"
	"fmt"
	"sync"

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
