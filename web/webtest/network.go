package webtest

import (
	"net/url"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Traffic counts the bytes a tab receives over the network (as Chromium
// reports them: headers and encoded bodies, streamed chunks of the event
// stream included), by request path.
type Traffic struct {
	mu     sync.Mutex
	paths  map[network.RequestID]string
	done   map[network.RequestID]bool
	chunks map[network.RequestID]int64 // streamed bytes seen before the load finished
	bytes  map[string]int64
}

// WatchTraffic starts counting what the page's tab receives.
func (p *Page) WatchTraffic() *Traffic {
	p.t.Helper()
	tr := &Traffic{paths: map[network.RequestID]string{}, done: map[network.RequestID]bool{}, chunks: map[network.RequestID]int64{}, bytes: map[string]int64{}}
	if _, err := chromedp.Call(p.Ctx, network.Enable, network.EnableParams{}); err != nil {
		p.t.Fatalf("network.enable: %v", err)
	}
	if err := chromedp.Listen(p.Ctx, func(ev any) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			if u, err := url.Parse(e.Response.URL); err == nil {
				tr.paths[e.RequestID] = u.Path
			}
		case *network.EventDataReceived:
			tr.chunks[e.RequestID] += e.EncodedDataLength
			tr.bytes[tr.paths[e.RequestID]] += e.EncodedDataLength
		case *network.EventLoadingFinished:
			if !tr.done[e.RequestID] {
				tr.done[e.RequestID] = true
				path := tr.paths[e.RequestID]
				// The total replaces the chunks counted so far.
				tr.bytes[path] += int64(e.EncodedDataLength) - tr.chunks[e.RequestID]
				tr.chunks[e.RequestID] = int64(e.EncodedDataLength)
			}
		}
	}); err != nil {
		p.t.Fatalf("listen: %v", err)
	}
	return tr
}

// Snapshot returns the bytes received so far, by path, and their sum.
func (tr *Traffic) Snapshot() (map[string]int64, int64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]int64, len(tr.bytes))
	var sum int64
	for k, v := range tr.bytes {
		out[k] = v
		sum += v
	}
	return out, sum
}

// Group sums a snapshot by kind of resource: the flow endpoint, the event
// stream, the run view, other API calls, and the page and its assets.
func Group(bytes map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for path, n := range bytes {
		var k string
		switch {
		case strings.HasSuffix(path, "/flow"):
			k = "flow"
		case path == "/api/events":
			k = "events"
		case strings.HasPrefix(path, "/api/runs/") && strings.Count(path, "/") == 3:
			k = "run"
		case strings.HasPrefix(path, "/api/"):
			k = "api"
		default:
			k = "page"
		}
		out[k] += n
	}
	return out
}

// BeforeLoad runs script in every document the tab loads, before its own
// scripts (page.addScriptToEvaluateOnNewDocument).
func (p *Page) BeforeLoad(script string) {
	p.t.Helper()
	if _, err := chromedp.Call(p.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script}); err != nil {
		p.t.Fatalf("add script: %v", err)
	}
}
