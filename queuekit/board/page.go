package board

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/chart"
)

// forbiddenPage is what a participant who opens the board sees (HTTP 403).
var forbiddenPage = template.Must(template.New("403").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Room board</title></head>
<body><h1>Room board</h1><p>Signed in as {{.}}: the board is for the instructor only (HTTP 403).</p></body></html>
`))

// page is the board: a row per participant (every check of every notebook
// they reported from, as a cell with data-user, data-notebook, data-check
// and data-status), then the chart.
var page = template.Must(template.New("board").Funcs(template.FuncMap{
	"mark": func(status string) string {
		switch status {
		case Pass:
			return "✓"
		case Fail:
			return "✗"
		}
		return "·"
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("15:04:05")
	},
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Room board</title>
{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}
<style>
body { font-family: sans-serif; margin: 20px; }
table { border-collapse: collapse; }
td, th { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; text-align: left; }
td.check { font-size: 90%; }
.pass { background: #d8f5d8; } .fail { background: #f8d7d7; } .not-run { color: #777; }
</style></head>
<body>
<h1>Room board</h1>
<p>Signed in as {{.Who}}. {{len .View.Participants}} participants; updated {{when .View.Time}} UTC{{if .Refresh}}, every {{.Refresh}} s{{end}}.
✓ passed, ✗ not yet (failed), · not run. <a href="{{.Prefix}}api/board">JSON</a></p>
<table id="board">
<tr><th>participant</th><th>notebook now</th><th>last report</th><th>passed</th><th>failed</th><th>not run</th><th>self-checks</th></tr>
{{range .View.Participants}}{{$u := .Name}}<tr data-user="{{.Name}}">
<td>{{.Name}}</td><td>{{if .Notebook}}{{.Notebook}}{{else}}—{{end}}</td><td>{{when .LastSeen}}</td>
<td>{{.Passed}}</td><td>{{.Failed}}</td><td>{{.NotRun}}</td>
<td><table>{{range .Checks}}<tr><td class="check {{if eq .Status "not run"}}not-run{{else}}{{.Status}}{{end}}" data-user="{{$u}}" data-notebook="{{.Notebook}}" data-check="{{.Check}}" data-status="{{.Status}}">{{mark .Status}} {{.Notebook}}: {{.Check}}</td></tr>{{end}}</table></td>
</tr>
{{end}}</table>
{{if .Chart}}{{.Chart}}{{else}}<p>No self-check has reported yet: the chart starts with the first report.</p>{{end}}
</body></html>
`))

// ProgressChart is the room's progress over time: checks passing, checks
// failing and participants reporting, against minutes since the first report.
func ProgressChart(h []Point) (*chart.Chart, error) {
	if len(h) == 0 {
		return nil, fmt.Errorf("progress chart: no reports yet")
	}
	x := make([]float64, len(h))
	passed, failed, people := make([]float64, len(h)), make([]float64, len(h)), make([]float64, len(h))
	for i, p := range h {
		x[i] = p.Time.Sub(h[0].Time).Minutes()
		passed[i], failed[i], people[i] = float64(p.Passed), float64(p.Failed), float64(p.Participants)
	}
	return chart.Lines("The room's progress", "minutes since the first report", "count", []chart.Series{
		{Name: "checks passed", X: x, Y: passed},
		{Name: "checks not yet passed", X: x, Y: failed},
		{Name: "participants reporting", X: x, Y: people},
	})
}

func renderPage(v View, who, prefix string, refresh int) (string, error) {
	var ch template.HTML
	if len(v.History) > 0 {
		c, err := ProgressChart(v.History)
		if err != nil {
			return "", err
		}
		ch = template.HTML(c.HTML()) // the chart package escapes its own snippet
	}
	var b strings.Builder
	err := page.Execute(&b, struct {
		View    View
		Who     string
		Prefix  string
		Refresh int
		Chart   template.HTML
	}{v, who, prefix, refresh, ch})
	return b.String(), err
}
