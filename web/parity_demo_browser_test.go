package web_test

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

	"github.com/guildhall/guildhall/web/webtest"
)

// docsImages is the -screenshots flag of the package's internal tests
// (parity_browser_test.go), looked up so both halves write to one folder.
func docsImages() string {
	if f := flag.Lookup("screenshots"); f != nil {
		return f.Value.String()
	}
	return ""
}

// TestBrowserParityOnTheDemo checks the browser console against issue 18
// on the scripted demo, at 1280x900 and 390x844, through a whole run: the
// question modal fits and keeps focus; an inquiry typed in the interrupt
// modal is sent with Ctrl+Enter and shows as a handler interlude; when the
// run ends the flow graph has one node per role instance of the run, under
// its caller, as render's model (and the terminal's graph) has them; every
// sequence message shows its text; nothing overflows; the page passes the
// accessibility rules in light and dark. With -screenshots DIR it writes
// the docs' pictures of the browser views.
func TestBrowserParityOnTheDemo(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, id, url, _ := liveDemo(t, ctx)
	axe := webtest.AxeSource()
	shots := docsImages()
	shot := func(page *webtest.Page, name string) {
		if shots != "" {
			page.Screenshot(filepath.Join(shots, name))
		}
	}

	page := webtest.OpenPage(t, browser, 3*time.Minute)
	defer page.Close()
	page.SetViewport(webtest.Desktop)
	page.Do(chromedp.Navigate(url))

	// The question, at both sizes.
	page.Poll("the question modal", `document.querySelector(".question-modal #answer-input") !== null`)
	for _, vp := range []webtest.Viewport{webtest.Desktop, webtest.Phone} {
		page.SetViewport(vp)
		page.Poll("the modal laid out at "+vp.Name, `innerWidth === `+itoa(vp.Width))
		if err := page.FullyInViewport(".question-modal #answer-input", ".question-modal button[type=submit]"); err != nil {
			t.Errorf("%s: %v", vp.Name, err)
		}
		page.Check(t, axe, vp.Name+", the question modal")
		if vp == webtest.Phone {
			shot(page, "browser-question-phone.png")
		}
	}
	page.SetViewport(webtest.Desktop)

	// Put the question off, ask the run something in the interrupt modal
	// (keyboard only: Ctrl+Enter sends), then answer.
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the question put off", `document.querySelector(".question-modal") === null`)
	page.Do(chromedp.Click(`//button[text()="Interrupt"]`))
	page.Poll("the interrupt modal with focus in its text box", `document.activeElement !== null && document.activeElement.id === "interrupt-input"`)
	page.Do(chromedp.KeyEvent("What is happening right now?"))
	page.Do(chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	page.Poll("the inquiry sent", `(document.querySelector(".interrupt-modal .notice") || {}).textContent === "Sent. The run takes it up at its next safe point."`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the interrupt modal closed", `document.querySelector(".interrupt-modal") === null`)
	page.Do(chromedp.Click(`//div[contains(@class,"notice-bar")]//button[text()="Answer"]`))
	page.Poll("the question back", `document.querySelector(".question-modal button.option") !== null`)
	page.Do(chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`))

	// The run ends; the result modal closes with Esc.
	page.Poll("the result modal", `document.querySelector(".result-modal .result-summary") !== null`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the result modal closed", `document.querySelector(".result-modal") === null`)
	page.Poll("the outcome summary as the title", `(document.querySelector(".task-identity-title") || {}).textContent === "Slug tests fixed"`)

	logPath, err := sess.Workspace().LogPath(id)
	if err != nil {
		t.Fatal(err)
	}
	m, err := webtest.ModelFromLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ref := webtest.ReferenceFlow(m)
	if len(ref.Callers) < 5 {
		t.Fatalf("the demo has %d role instances; the scripted run changed", len(ref.Callers))
	}
	interlude := false
	for _, st := range m.State().Stacks {
		interlude = interlude || st.ID != "main"
	}
	if !interlude {
		t.Error("the inquiry made no interrupt stack")
	}

	for _, vp := range []webtest.Viewport{webtest.Desktop, webtest.Phone} {
		page.SetViewport(vp)
		page.Poll("the page at "+vp.Name, `innerWidth === `+itoa(vp.Width))
		page.Do(chromedp.Click(`//button[text()="Flow"]`))
		page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length > 0`)
		shot(page, "browser-flow-"+vp.Name+".png")
		page.Check(t, axe, vp.Name+", the flow graph")
		// The nodes keep their text at the first zoom; Fit draws them all.
		for _, n := range page.FlowGraph().Nodes {
			if n.Kind == "role" && !(strings.Contains(n.Text, "done") && strings.Contains(n.Text, "tool call")) {
				t.Errorf("%s: role node %s does not say its state and tool calls: %q", vp.Name, n.Participant, n.Text)
			}
		}
		page.Do(chromedp.Click(`//button[text()="Fit"]`))
		page.Poll("every node at Fit", `document.querySelectorAll(".flow-graph .graph-node").length === Number(document.querySelector(".flow-graph").getAttribute("data-nodes"))`)
		for _, p := range ref.Compare(page.FlowGraph()) {
			t.Errorf("%s: %s", vp.Name, p)
		}
		if !strings.Contains(page.Eval(`Array.from(document.querySelectorAll(".graph-lane-title")).map((t) => t.textContent).join(" | ")`), "Interrupt · inquiry") {
			t.Errorf("%s: no lane for the inquiry's interlude", vp.Name)
		}

		page.Do(chromedp.Click(`//button[text()="Sequence"]`))
		page.Poll("sequence rows", `document.querySelectorAll(".sequence-diagram .seq-row").length > 0`)
		shot(page, "browser-sequence-"+vp.Name+".png")
		n, problems := page.SequenceTextProblems()
		if n == 0 {
			t.Errorf("%s: no sequence message on screen", vp.Name)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", vp.Name, p)
		}
		page.Eval(`(() => { document.querySelector(".seq-scroll").scrollTop = 0; return ""; })()`)
		page.Poll("the first rows", `document.querySelector('.sequence-diagram [data-index="0"]') !== null`)
		if _, problems := page.SequenceTextProblems(); len(problems) > 0 {
			t.Errorf("%s, first rows: %v", vp.Name, problems)
		}
		page.Check(t, axe, vp.Name+", the sequence diagram")

		// The inspector opens on Enter on the selected message.
		page.Do(chromedp.Focus(".seq-scroll"), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
		page.Poll("the pinned inspector", `document.querySelector(".tooltip-card--pinned .tooltip-title") !== null`)
		if vp == webtest.Desktop {
			page.Poll("the first operation's details", `(document.querySelector(".tooltip-card--pinned .md code") || {}).textContent === "slugify"`)
		}
		page.Check(t, axe, vp.Name+", the inspector")
		page.Do(chromedp.KeyEvent(kb.Escape))
		page.Poll("the inspector closed", `document.querySelector(".tooltip-card--pinned") === null`)
	}

	// The other screens, and the narrowest width the layout is for.
	for _, vp := range []webtest.Viewport{webtest.Phone, {Name: "narrow", Width: 360, Height: 640}} {
		page.SetViewport(vp)
		page.Poll("the page at "+vp.Name, `innerWidth === `+itoa(vp.Width))
		for _, screen := range []string{"History", "Compose", "Watch"} {
			page.Do(chromedp.Click(`//nav//button[text()="` + screen + `"]`))
			page.Poll(screen, `document.querySelector("main.`+strings.ToLower(screen)+`") !== null`)
			page.Check(t, axe, vp.Name+", "+screen)
		}
		page.Do(chromedp.Click(`//button[text()="Sequence"]`))
		page.Poll("sequence rows", `document.querySelectorAll(".sequence-diagram .seq-row").length > 0`)
		if _, problems := page.SequenceTextProblems(); len(problems) > 0 {
			t.Errorf("%s: %v", vp.Name, problems)
		}
		for _, p := range page.LayoutProblems() {
			t.Errorf("%s, the sequence diagram: %s", vp.Name, p)
		}
	}

	page.SetViewport(webtest.Desktop)
	page.SetColorScheme("dark")
	page.Do(chromedp.Reload()) // a fresh camera, at 100%
	page.Poll("the result card of the finished run", `document.querySelector(".result-modal") !== null`)
	page.Do(chromedp.KeyEvent(kb.Escape))
	page.Poll("the result modal closed", `document.querySelector(".result-modal") === null`)
	page.Poll("the flow graph", `document.querySelectorAll(".flow-graph .graph-node").length > 0`)
	page.Check(t, axe, "dark, the flow graph")
	shot(page, "browser-flow-dark.png")
	page.SetColorScheme("")
	for _, p := range page.Close() {
		t.Errorf("console: %s", p)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
