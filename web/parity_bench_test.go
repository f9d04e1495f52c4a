package web

import (
	"encoding/json"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/web/webtest"
)

// BenchmarkBrowserFrame measures, in headless Chromium, what one update of
// a live 10,000-operation run costs the page: each iteration emits one
// event (a tool call or its result, in turn, on the orchestrator) and waits
// for the frame it produces. The page times every update with the
// Performance API (app.ts, window.__ghPerf: the envelope's merge plus the
// frame's view, patch, style and layout); the benchmark reports their
// median, 95th percentile and maximum, and the bytes the browser received:
// on the first load, on a reload, and per live event.
//
//	go test ./web -run '^$' -bench BrowserFrame -benchtime 200x
func BenchmarkBrowserFrame(b *testing.B) {
	for _, view := range []string{"flow", "sequence"} {
		b.Run(view, func(b *testing.B) { benchFrames(b, view) })
	}
}

func benchFrames(b *testing.B, view string) {
	browser := webtest.Browser(b)
	sess := newFakeSession(b)
	ctx, url := serveFake(b, sess, "bench")
	synthRun(b, ctx, sess, 1000, 4)

	page := webtest.OpenPage(b, browser, 20*time.Minute)
	defer page.Close()
	page.SetViewport(webtest.Desktop)
	page.BeforeLoad("window.__ghPerf = true;")
	traffic := page.WatchTraffic()
	page.Do(chromedp.Navigate(url))
	page.Poll("the question modal", `document.querySelector(".question-modal") !== null`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length > 0`)
	if view == "sequence" {
		page.Do(chromedp.Click(`//button[text()="Sequence"]`))
		page.Poll("sequence rows", `document.querySelectorAll(".sequence-diagram .seq-row").length > 0`)
	}
	time.Sleep(500 * time.Millisecond) // let the boot requests finish
	loadBytes, load := traffic.Snapshot()

	frames := func() int {
		n, _ := strconv.Atoi(page.Eval(`String(performance.getEntriesByName("gh:frame").length)`))
		return n
	}
	update := func(i int) {
		want := frames() + 1
		cid := "bench-" + strconv.Itoa(i/2)
		if i%2 == 0 {
			sess.Emit(b, event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: cid, Arguments: `{"path":"README.md"}`})
		} else {
			sess.Emit(b, event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: cid, Kind: "success", ElapsedMs: 2})
		}
		page.Poll("the frame of update "+strconv.Itoa(i), `performance.getEntriesByName("gh:frame").length >= `+strconv.Itoa(want))
	}
	// Warm up: the page's first frames after a load run code the engine
	// has not optimised yet.
	for i := 0; i < 10; i++ {
		update(-2 - 2*i + i%2)
	}
	base := frames()
	_, before := traffic.Snapshot()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		update(i)
	}
	b.StopTimer()
	time.Sleep(400 * time.Millisecond) // the debounced run-view refresh after the last event
	_, after := traffic.Snapshot()

	var ms []float64
	page.EvalJSON(`JSON.stringify(performance.getEntriesByName("gh:frame").slice(`+strconv.Itoa(base)+`).map((e) => e.duration))`, &ms)
	if len(ms) == 0 {
		b.Fatal("no frame was measured")
	}
	var parts []map[string]float64
	page.EvalJSON(`JSON.stringify(performance.getEntriesByName("gh:frame").slice(`+strconv.Itoa(base)+`).map((e) => e.detail))`, &parts)
	for _, part := range []string{"merge", "view", "patch", "layout"} {
		var v []float64
		for _, p := range parts {
			v = append(v, p[part])
		}
		sort.Float64s(v)
		b.Logf("%s view, %s: p50 %.2f ms, p95 %.2f ms, max %.2f ms", view, part, v[len(v)/2], v[min(len(v)-1, len(v)*95/100)], v[len(v)-1])
	}
	sort.Float64s(ms)
	q := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	b.ReportMetric(q(0.5), "ms/frame-p50")
	b.ReportMetric(q(0.95), "ms/frame-p95")
	b.ReportMetric(ms[len(ms)-1], "ms/frame-max")
	b.ReportMetric(float64(load), "load-bytes")
	b.ReportMetric(float64(after-before)/float64(b.N), "live-bytes/event")

	// A reload of the same tab: the browser revalidates what it cached.
	_, mark := traffic.Snapshot()
	page.Do(chromedp.Reload())
	page.Poll("the reloaded page", `document.querySelector(".question-modal") !== null`)
	time.Sleep(500 * time.Millisecond)
	reloadBytes, reloaded := traffic.Snapshot()
	b.ReportMetric(float64(reloaded-mark), "reload-bytes")
	byLoad, _ := json.Marshal(webtest.Group(loadBytes))
	byReload, _ := json.Marshal(webtest.Group(subtract(reloadBytes, loadBytes)))
	b.Logf("%s view, %d frames: p50 %.2f ms, p95 %.2f ms, max %.2f ms; first load %d bytes %s; live %.0f bytes/event; reload (and live traffic since the load) %s",
		view, len(ms), q(0.5), q(0.95), ms[len(ms)-1], load, byLoad, float64(after-before)/float64(b.N), byReload)
}

func subtract(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range a {
		if d := v - b[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
