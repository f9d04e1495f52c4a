package bench

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sync"
	"time"
)

// WriteHTML writes the report as one self-contained HTML file: the plots
// are inline SVG drawn here, there is no script and nothing is fetched
// (a Content-Security-Policy forbids it), and every string from a
// benchmark, a model or a run is escaped by html/template.
func WriteHTML(w io.Writer, r *Report) error {
	ranked := r.Ranked()
	page := htmlPage{Report: r, Generated: r.StartedAt.Format(time.RFC3339), Claimed: SuccessButFailedName}
	for i, v := range ranked {
		page.Variants = append(page.Variants, htmlVariant{Name: v, Color: palette[i%len(palette)], Agg: Sum(r.Select(v, ""))})
	}
	benches := r.Benchmarks()
	metric := func(title, unit string, f func(Aggregate) float64, format func(float64) string) chart {
		rows := []string{}
		vals := [][]float64{}
		for _, b := range benches {
			rows = append(rows, b)
			var vs []float64
			for _, v := range ranked {
				vs = append(vs, f(Sum(r.Select(v, b))))
			}
			vals = append(vals, vs)
		}
		return barChart(title, unit, rows, vals, format)
	}
	overall := [][]float64{{}}
	for _, v := range ranked {
		overall[0] = append(overall[0], Sum(r.Select(v, "")).PassRate*100)
	}
	pct := func(x float64) string { return fmt.Sprintf("%.0f%%", x) }
	page.Charts = []chart{
		barChart("Pass rate", "%", []string{"all benchmarks"}, overall, pct),
		metric("Pass rate per benchmark", "%", func(a Aggregate) float64 { return a.PassRate * 100 }, pct),
		metric("Tokens per run (mean)", "tokens", Aggregate.MeanTokens, humanTokens),
		metric("Time per run (mean)", "seconds", Aggregate.MeanSeconds, humanSeconds),
	}
	for _, b := range benches {
		row := htmlRow{Benchmark: b}
		for _, v := range ranked {
			a := Sum(r.Select(v, b))
			row.Cells = append(row.Cells, fmt.Sprintf("%d/%d · %s · %s · %d asked · %d %s", a.Passes, a.Runs, humanTokens(a.MeanTokens()),
				humanSeconds(a.MeanSeconds()), a.Questions, a.SuccessButFailed, SuccessButFailedName))
		}
		page.Rows = append(page.Rows, row)
	}
	if len(ranked) == 2 {
		page.Note = Compare(r, ranked[0], ranked[1]).Note()
	}
	return reportTemplate().Execute(w, page)
}

var palette = []string{"#3b6ea8", "#d9822b", "#4c9a5b", "#a34d8f", "#7a7a7a", "#b8a02f"}

type htmlPage struct {
	Report    *Report
	Generated string
	// Claimed names the runs that ended success but failed validation.
	Claimed  string
	Variants []htmlVariant
	Charts   []chart
	Rows     []htmlRow
	Note     string
}

type htmlVariant struct {
	Name, Color string
	Agg         Aggregate
}

type htmlRow struct {
	Benchmark string
	Cells     []string
}

type chart struct {
	Title         string
	Width, Height int
	Labels        []svgText
	Bars          []svgBar
}

type svgText struct {
	X, Y float64
	Text string
}

type svgBar struct {
	X, Y, W, H float64
	Fill       string
	Value      string
	VX, VY     float64
}

// barChart lays out horizontal bars: a group per row, a bar per variant,
// scaled to the largest value.
func barChart(title, unit string, rows []string, vals [][]float64, format func(float64) string) chart {
	const left, barH, gap, width = 200.0, 14.0, 10.0, 760
	top := 10.0
	maxV := 0.0
	for _, vs := range vals {
		for _, v := range vs {
			maxV = math.Max(maxV, v)
		}
	}
	if unit == "%" {
		maxV = 100
	}
	if maxV == 0 {
		maxV = 1
	}
	span := float64(width) - left - 80
	c := chart{Title: title, Width: width}
	y := top
	for i, name := range rows {
		n := float64(len(vals[i]))
		c.Labels = append(c.Labels, svgText{X: left - 8, Y: y + n*barH/2 + 4, Text: name})
		for k, v := range vals[i] {
			w := span * v / maxV
			c.Bars = append(c.Bars, svgBar{X: left, Y: y, W: w, H: barH - 2, Fill: palette[k%len(palette)],
				Value: format(v), VX: left + w + 4, VY: y + barH - 4})
			y += barH
		}
		y += gap
	}
	c.Height = int(y + top)
	return c
}

// reportTemplate is parsed at the first report, not at every start of the
// binary that links it.
var reportTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"pct": pctFunc}).Parse(reportHTML))
})

const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Guildhall benchmark report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222;padding:0 1em}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.4em;vertical-align:middle}
.note{background:#f6f8fa;border-left:4px solid #3b6ea8;padding:.6em 1em}.fail{color:#a33}.pass{color:#2a7a3a}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em;max-height:12em;overflow:auto}
svg text{font:12px system-ui,sans-serif}
</style>
</head>
<body>
<h1>Benchmark report: {{.Report.Suite}}</h1>
<p>Started {{.Generated}} · {{.Report.Repeat}} repetition(s) · {{len .Report.Results}} runs</p>
<table>
<tr><th>variant</th><th>pass rate</th><th>score</th><th>tokens</th><th>time</th><th>questions</th><th>tool calls</th><th>{{.Claimed}}</th></tr>
{{range .Variants}}<tr><td><span class="swatch" style="background:{{.Color}}"></span>{{.Name}}</td><td>{{printf "%.1f" (pct .Agg.PassRate)}}% ({{.Agg.Passes}}/{{.Agg.Runs}})</td><td>{{printf "%.2f" .Agg.Score}}</td><td>{{.Agg.Tokens.Total}}</td><td>{{printf "%.0f" .Agg.Seconds}} s</td><td>{{.Agg.Questions}}</td><td>{{.Agg.ToolCalls}}</td><td{{if .Agg.SuccessButFailed}} class="fail"{{end}}>{{.Agg.SuccessButFailed}}</td></tr>
{{end}}</table>
<p>{{.Claimed}}: the run said it succeeded, its validation says the work was not done &mdash; the sign of a model that claims work it did not do.</p>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{range .Charts}}<h2>{{.Title}}</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Labels}}<text x="{{.X}}" y="{{.Y}}" text-anchor="end">{{.Text}}</text>
{{end}}{{range .Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"></rect><text x="{{.VX}}" y="{{.VY}}">{{.Value}}</text>
{{end}}</svg>
{{end}}
<h2>Per benchmark</h2>
<table><tr><th>benchmark</th>{{range .Variants}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Benchmark}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<h2>Runs</h2>
<table><tr><th>benchmark</th><th>variant</th><th>#</th><th>status</th><th>verdict</th><th>tokens</th><th>time</th><th>asked</th><th>why</th></tr>
{{range .Report.Results}}<tr><td>{{.Benchmark}}</td><td>{{.Variant}}</td><td>{{.Repetition}}</td><td>{{.Status}}{{if .SuccessButFailed}} <span class="fail">({{$.Claimed}})</span>{{end}}</td>{{if .Pass}}<td class="pass">pass</td>{{else}}<td class="fail">{{.Verdict}}</td>{{end}}<td>{{.Tokens.Total}}</td><td>{{printf "%.1f" .Seconds}} s</td><td>{{.QuestionsAsked}}</td><td>{{if .Error}}{{.Error}}{{else if .Validation}}{{range .Validation.Reasons}}{{.}}<br>{{end}}{{end}}{{if .Summary}}<details><summary>the run's summary</summary><pre>{{.Summary}}</pre></details>{{end}}</td></tr>
{{end}}</table>
</body>
</html>
`

// pctFunc turns a rate into a percentage for the template.
func pctFunc(x float64) float64 { return 100 * x }
