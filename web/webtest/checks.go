package webtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Viewport is a window size the console must work at.
type Viewport struct {
	Name          string
	Width, Height int64
}

// Desktop and Phone are the sizes the parity tests use (issue 18).
var (
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 900}
	Phone   = Viewport{Name: "phone", Width: 390, Height: 844}
)

// SetViewport sizes the page's window (CSS pixels, scale 1).
func (p *Page) SetViewport(v Viewport) {
	p.t.Helper()
	p.Do(chromedp.EmulateViewport(v.Width, v.Height))
}

// SetColorScheme emulates prefers-color-scheme: "dark", "light" or "" (none).
func (p *Page) SetColorScheme(scheme string) {
	p.t.Helper()
	params := emulation.SetEmulatedMediaParams{}
	if scheme != "" {
		params.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	if _, err := chromedp.Call(p.Ctx, emulation.SetEmulatedMedia, params); err != nil {
		p.t.Fatalf("emulate prefers-color-scheme %q: %v", scheme, err)
	}
}

// EvalJSON evaluates expr, which must return a JSON string, into v.
func (p *Page) EvalJSON(expr string, v any) {
	p.t.Helper()
	raw := p.Eval(expr)
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		p.t.Fatalf("decode %s: %v (%q)", expr, err, raw)
	}
}

// LayoutProblems lists how the page breaks the responsive layout: a page
// wider than the window, and header controls (buttons, links, selects,
// inputs) reaching outside the viewport or overlapping one another.
func (p *Page) LayoutProblems() []string {
	var out []string
	p.EvalJSON(`JSON.stringify((() => {
	  const out = [];
	  scrollTo(0, 0); // the header is checked where the page starts
	  const sw = document.documentElement.scrollWidth, iw = innerWidth;
	  if (sw > iw) out.push("page scrollWidth " + sw + " > innerWidth " + iw);
	  const name = (el) => (el.getAttribute("aria-label") || el.textContent || el.tagName).trim().slice(0, 40);
	  const ctl = Array.from(document.querySelectorAll(".page-head button, .page-head a[href], .page-head select, .page-head input"))
	    .filter((el) => el.getClientRects().length > 0 && !el.classList.contains("skip-link"));
	  const boxes = ctl.map((el) => [el, el.getBoundingClientRect()]);
	  for (const [el, r] of boxes) {
	    if (r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) {
	      out.push("header control " + JSON.stringify(name(el)) + " outside the viewport: " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(","));
	    }
	  }
	  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
	    const [a, ra] = boxes[i], [b, rb] = boxes[j];
	    if (a.contains(b) || b.contains(a)) continue;
	    const ox = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left), oy = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
	    if (ox > 1 && oy > 1) out.push("header controls overlap: " + JSON.stringify(name(a)) + " and " + JSON.stringify(name(b)));
	  }
	  const texts = Array.from(document.querySelectorAll(".page-head .status, .page-head .run-label, .page-head .brand"));
	  for (const el of texts) {
	    const r = el.getBoundingClientRect();
	    if (r.width > 0 && (r.left < 0 || r.right > innerWidth + 0.5)) out.push("header text " + JSON.stringify(name(el)) + " outside the viewport");
	    for (const [c, rc] of boxes) {
	      const ox = Math.min(r.right, rc.right) - Math.max(r.left, rc.left), oy = Math.min(r.bottom, rc.bottom) - Math.max(r.top, rc.top);
	      if (ox > 1 && oy > 1 && !c.contains(el) && !el.contains(c)) out.push(JSON.stringify(name(el)) + " overlaps the control " + JSON.stringify(name(c)));
	    }
	  }
	  return out;
	})())`, &out)
	return out
}

// FullyInViewport reports an error naming each element of selectors that is
// missing, hidden, or not wholly inside the window.
func (p *Page) FullyInViewport(selectors ...string) error {
	sel, _ := json.Marshal(selectors)
	var out []string
	p.EvalJSON(`JSON.stringify(`+string(sel)+`.flatMap((s) => {
	  const el = document.querySelector(s);
	  if (el === null) return [s + ": missing"];
	  const r = el.getBoundingClientRect();
	  if (r.width === 0 || r.height === 0) return [s + ": not drawn"];
	  if (r.left < 0 || r.top < 0 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5)
	    return [s + ": at " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + " outside " + innerWidth + "x" + innerHeight];
	  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
	  if (hit === null || (hit !== el && !el.contains(hit))) return [s + ": covered by " + (hit ? hit.className || hit.tagName : "nothing")];
	  return [];
	}))`, &out)
	if len(out) > 0 {
		return fmt.Errorf("%s", strings.Join(out, "; "))
	}
	return nil
}

// SequenceTextProblems checks that every drawn message of the sequence
// diagram carries visible text: a label with characters in it, rendered
// (not hidden, not transparent, not clipped away), at least 11 px, and
// inside the part of the diagram its scroll box shows. It returns the
// number of messages checked.
func (p *Page) SequenceTextProblems() (int, []string) {
	var res struct {
		N        int      `json:"n"`
		Problems []string `json:"problems"`
	}
	p.EvalJSON(`JSON.stringify((() => {
	  const box = document.querySelector(".seq-scroll");
	  if (box === null) return { n: 0, problems: ["no sequence view"] };
	  const view = box.getBoundingClientRect();
	  const head = document.querySelector(".seq-sticky");
	  const top = head ? head.getBoundingClientRect().bottom : view.top;
	  const rows = Array.from(document.querySelectorAll(".sequence-diagram .seq-row"));
	  const problems = [];
	  let n = 0;
	  for (const row of rows) {
	    const rr = row.getBoundingClientRect();
	    if (rr.bottom <= top || rr.top >= view.bottom) continue; // drawn as overscan, off screen
	    n++;
	    const id = row.getAttribute("data-operation") || "end";
	    const label = row.querySelector(".seq-label");
	    if (label === null) { problems.push(id + ": no label"); continue; }
	    const text = (label.textContent || "").trim();
	    const cs = getComputedStyle(label);
	    const r = label.getBoundingClientRect();
	    if (text.length < 3) problems.push(id + ": label " + JSON.stringify(text));
	    if (cs.visibility !== "visible" || cs.display === "none" || Number(cs.opacity) < 0.9 || cs.fill === "none" || cs.fill === "transparent") problems.push(id + ": label not visible (" + cs.visibility + "," + cs.opacity + "," + cs.fill + ")");
	    if (parseFloat(cs.fontSize) < 11) problems.push(id + ": font " + cs.fontSize);
	    if (r.width < 10 || r.height < 8) problems.push(id + ": label box " + Math.round(r.width) + "x" + Math.round(r.height));
	    if (r.left < view.left - 0.5 || r.right > view.right + 0.5) problems.push(id + ": label runs outside the visible diagram (" + Math.round(r.left) + ".." + Math.round(r.right) + " in " + Math.round(view.left) + ".." + Math.round(view.right) + ")");
	  }
	  return { n, problems };
	})())`, &res)
	return res.N, res.Problems
}

// FlowNodes is what the flow graph draws: each node's participant, kind,
// and the participant of the node it hangs under ("" for a lane's root).
type FlowNodes struct {
	Total int `json:"total"`
	Nodes []struct {
		Participant string `json:"participant"`
		Kind        string `json:"kind"`
		Caller      string `json:"caller"`
		Text        string `json:"text"`
	} `json:"nodes"`
}

// FlowGraph reads the flow graph's drawn nodes.
func (p *Page) FlowGraph() FlowNodes {
	var out FlowNodes
	p.EvalJSON(`JSON.stringify((() => {
	  const svg = document.querySelector(".flow-graph");
	  const nodes = Array.from(document.querySelectorAll(".flow-graph .graph-node")).map((g) => ({
	    participant: g.getAttribute("data-participant") || "",
	    kind: (Array.from(g.classList).find((c) => /^graph-node--(role|tool|human|interrupt)$/.test(c)) || "").replace("graph-node--", ""),
	    caller: g.getAttribute("data-caller") || "",
	    text: Array.from(g.querySelectorAll("text")).map((t) => t.textContent).join(" | "),
	  }));
	  return { total: svg ? Number(svg.getAttribute("data-nodes")) : 0, nodes };
	})())`, &out)
	return out
}

// axePaths are where an axe-core installed with npm may be found; the
// tests never download it.
func axePaths() []string {
	paths := []string{os.Getenv("GUILDHALL_AXE_JS")}
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		paths = append(paths, filepath.Join(strings.TrimSpace(string(out)), "axe-core", "axe.min.js"))
	}
	return append(paths, "/usr/local/lib/node_modules/axe-core/axe.min.js", "/usr/lib/node_modules/axe-core/axe.min.js")
}

// AxeSource is axe-core's browser build when one is installed (npm), else nil.
func AxeSource() []byte {
	for _, p := range axePaths() {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("axe")) {
			return b
		}
	}
	return nil
}

// Axe runs axe-core (src, from AxeSource) on the page's document and lists
// its violations, one line per affected node. The script is evaluated
// through the DevTools protocol, so the page's CSP does not apply to it and
// nothing is added to the client.
func (p *Page) Axe(src []byte) []string {
	p.t.Helper()
	if p.Eval(`typeof window.axe === "object" ? "yes" : "no"`) != "yes" {
		if _, err := chromedp.Run(p.Ctx, chromedp.Evaluate[any](string(src)+"\n;undefined", chromedp.EvalIgnoreExceptions)); err != nil {
			p.t.Fatalf("load axe-core: %v", err)
		}
	}
	raw, err := chromedp.Run(p.Ctx, chromedp.Evaluate[string](`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
	  JSON.stringify(r.violations.flatMap((v) => v.nodes.map((n) => v.id + " (" + v.impact + "): " + n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 300)))))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("axe.run: %v", err)
	}
	var out []string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		p.t.Fatalf("decode axe results: %v", err)
	}
	return out
}

// A11yProblems checks the rules axe would, without axe: every control has
// an accessible name, ids are unique, there is one main landmark and a
// level-one heading, every dialog is labelled, and visible text (HTML and
// SVG) has at least 4.5:1 contrast with what is behind it (3:1 when large).
func (p *Page) A11yProblems() []string {
	var out []string
	p.EvalJSON(`JSON.stringify((() => {
	  const out = [];
	  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility === "visible";
	  const nameOf = (el) => {
	    const l = el.getAttribute("aria-label"); if (l && l.trim()) return l;
	    const by = el.getAttribute("aria-labelledby");
	    if (by) { const t = by.split(/\s+/).map((id) => (document.getElementById(id) || {}).textContent || "").join(" ").trim(); if (t) return t; }
	    if (el.id) { const lab = document.querySelector('label[for="' + el.id + '"]'); if (lab && lab.textContent.trim()) return lab.textContent; }
	    const wrap = el.closest("label"); if (wrap && wrap.textContent.trim()) return wrap.textContent;
	    if (el.tagName !== "SELECT" && el.tagName !== "TEXTAREA" && el.textContent.trim()) return el.textContent;
	    return el.getAttribute("title") || "";
	  };
	  for (const el of document.querySelectorAll("button, a[href], select, textarea, input, [role=button], [tabindex]:not([tabindex='-1'])")) {
	    if (visible(el) && !nameOf(el).trim()) out.push("no accessible name: " + el.outerHTML.slice(0, 120));
	  }
	  const ids = new Map();
	  for (const el of document.querySelectorAll("[id]")) ids.set(el.id, (ids.get(el.id) || 0) + 1);
	  for (const [id, n] of ids) if (n > 1) out.push("duplicate id " + id);
	  if (document.querySelectorAll("main").length !== 1) out.push(document.querySelectorAll("main").length + " main landmarks");
	  if (document.querySelector("h1") === null) out.push("no h1");
	  if (!document.documentElement.lang) out.push("no lang on <html>");
	  if (!document.title.trim()) out.push("empty title");
	  for (const d of document.querySelectorAll("[role=dialog]")) if (!nameOf(d).trim()) out.push("unlabelled dialog " + d.className);
	  const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null; const v = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return { r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1 }; };
	  const lum = (c) => { const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
	  const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
	  const background = (el) => {
	    const layers = [];
	    for (let e = el; e !== null && e.nodeType === 1; e = e.parentElement) {
	      const cs = getComputedStyle(e);
	      const fill = e instanceof SVGElement && e.tagName !== "svg" ? null : parse(cs.backgroundColor);
	      if (fill && fill.a > 0) { layers.push(fill); if (fill.a >= 1) break; }
	    }
	    let c = { r: 255, g: 255, b: 255, a: 1 };
	    if (layers.length === 0 || layers[layers.length - 1].a < 1) c = matchMedia("(prefers-color-scheme: dark)").matches ? { r: 13, g: 17, b: 23, a: 1 } : c;
	    for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c);
	    return c;
	  };
	  const seen = new Set();
	  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	  for (let t = walker.nextNode(); t !== null; t = walker.nextNode()) {
	    const el = t.parentElement;
	    if (el === null || seen.has(el) || !t.nodeValue.trim() || !visible(el) || el.closest(".sr-only, [aria-hidden=true], title, option")) continue;
	    seen.add(el);
	    const cs = getComputedStyle(el);
	    if (Number(cs.opacity) === 0) continue;
	    const fg = parse(el instanceof SVGElement ? cs.fill : cs.color);
	    if (fg === null) continue;
	    const bg = background(el);
	    const f = over(fg, bg);
	    const L1 = lum(f), L2 = lum(bg);
	    const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
	    const size = parseFloat(cs.fontSize), bold = Number(cs.fontWeight) >= 700;
	    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
	    const dis = el.closest("button:disabled, [aria-disabled=true]");
	    if (ratio < need - 0.01 && dis === null) out.push("contrast " + ratio.toFixed(2) + " < " + need + ": " + JSON.stringify(t.nodeValue.trim().slice(0, 40)) + " (" + (el.getAttribute("class") || el.tagName) + ")");
	  }
	  return out;
	})())`, &out)
	return out
}

// Screenshot captures the viewport as a PNG and writes it to path, reduced
// to the 256 commonest colours (a console has few; the edges of text take
// the nearest) and encoded with the best compression, so the docs' pictures
// stay small.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	buf, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	img, _, err := image.Decode(bytes.NewReader(buf))
	if err != nil {
		p.t.Fatalf("decode screenshot: %v", err)
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, reduce(img)); err != nil {
		p.t.Fatalf("encode screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// reduce maps img onto a palette of its 256 commonest colours (counted at
// 5 bits a channel), each pixel to the nearest of them.
func reduce(img image.Image) *image.Paletted {
	b := img.Bounds()
	count := map[uint32]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			count[(r>>11)<<10|(g>>11)<<5|bl>>11]++
		}
	}
	keys := make([]uint32, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return count[keys[i]] > count[keys[j]] || (count[keys[i]] == count[keys[j]] && keys[i] < keys[j])
	})
	if len(keys) > 256 {
		keys = keys[:256]
	}
	pal := make(color.Palette, len(keys))
	for i, k := range keys {
		pal[i] = color.RGBA{R: uint8(k>>10&31)<<3 | 4, G: uint8(k>>5&31)<<3 | 4, B: uint8(k&31)<<3 | 4, A: 255}
	}
	out := image.NewPaletted(b, pal)
	nearest := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 255}
			i, ok := nearest[c]
			if !ok {
				i = uint8(pal.Index(c))
				nearest[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// Check reports on t, prefixed by where (the page's state), the page's
// layout and accessibility problems as it is now, and axe-core's
// violations when axe (its script) is not nil.
func (p *Page) Check(t testing.TB, axe []byte, where string) {
	t.Helper()
	for _, problem := range p.LayoutProblems() {
		t.Errorf("%s: %s", where, problem)
	}
	for _, problem := range p.A11yProblems() {
		t.Errorf("%s: %s", where, problem)
	}
	if axe != nil {
		for _, v := range p.Axe(axe) {
			t.Errorf("%s: axe: %s", where, v)
		}
	}
}
