// Package lab holds the small helpers the workshop notebooks call: show a
// chart (its HTML and its table), show a table, a live progress bar for long
// cells, and the self-check functions of the "Try it" exercises.
//
// Inside a GoNB kernel (gonbui.IsNotebook) output goes to the notebook as
// HTML and Markdown; anywhere else (go test, a terminal) the same calls
// print plain text to stdout, so Example tests and headless runs show the
// result. The package never uses gonbui/widgets, which hang headless.
//
// A notebook cell:
//
//	res, _ := sim.Run(night, sim.Config{Workers: 3})
//	lab.Chart(chart.Gantt(res))
//	lab.CheckNear("p95 wait with c = 3", myP95, res.P95Wait, 0.5, "sort the waits, take index ceil(0.95 n) - 1")
//
// The demonstrations live in sub-packages, one per notebook or family:
// nightlab (reading nights), schemalab (01), scanlab (02), simlab (04),
// leaselab (04, 05), ttllab (06), fanoutlab (06, 07), limitslab (08),
// fleetlab (10) and forecastlab (09). lab itself imports no AWS SDK and no
// protocol package (its deps test keeps it so): a cell that only prints a
// table or draws a chart links lab alone, and GoNB's goimports links a
// sub-package only into the cells that call it.
package lab

import (
	"fmt"
	"os"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/format"
)

// Displayable is anything Show can display; *chart.Chart is one.
type Displayable interface {
	HTML() string     // a self-contained HTML snippet
	Markdown() string // the numbers, as Markdown
	Text() string     // the numbers, as plain text
}

// notebook reports whether output goes to a GoNB notebook; a variable so
// tests can switch it.
var notebook = func() bool { return gonbui.IsNotebook }

// The notebook outputs, variables so tests can record them. Each display is
// followed by gonbui.Sync: the cell's program may exit right after it, and
// without the sync the kernel can lose the last display or attach it late
// (seen in headless runs as a missing table).
var (
	displayHTML     = func(html string) { gonbui.DisplayHTML(html); gonbui.Sync() }
	displayMarkdown = func(md string) { gonbui.DisplayMarkdown(md); gonbui.Sync() }
	updateHTML      = gonbui.UpdateHTML
)

// Show displays a chart in the notebook (its HTML, then its table as
// Markdown), or prints its table to stdout outside a notebook.
func Show(d Displayable) {
	if d == nil {
		Markdown("✗ nothing to show (nil chart)")
		return
	}
	if c, ok := d.(*chart.Chart); ok && c == nil {
		Markdown("✗ nothing to show (nil chart)")
		return
	}
	if notebook() {
		displayHTML(d.HTML())
		displayMarkdown(d.Markdown())
		return
	}
	fmt.Fprint(os.Stdout, d.Text())
}

// Chart shows the chart a chart builder returned, or reports the builder's
// error, so a cell can be one line: lab.Chart(chart.Gantt(res)). It returns
// the error.
func Chart(c *chart.Chart, err error) error {
	if err != nil {
		Markdown("✗ could not draw the chart: " + err.Error())
		return err
	}
	Show(c)
	return nil
}

// Markdown displays Markdown in the notebook, or prints it as it is outside.
func Markdown(md string) {
	if notebook() {
		displayMarkdown(md)
		return
	}
	fmt.Fprintln(os.Stdout, md)
}

// Table renders a table as Markdown with format.Table (a "|" or "$" in a
// cell is escaped; short rows are padded).
func Table(headers []string, rows [][]string) string {
	return format.Table{Headers: headers, Rows: rows}.Markdown()
}

// ShowTable displays a table: Markdown in the notebook, aligned plain text
// outside.
func ShowTable(headers []string, rows [][]string) {
	t := format.Table{Headers: headers, Rows: rows}
	if notebook() {
		displayMarkdown(t.Markdown())
		return
	}
	fmt.Fprint(os.Stdout, t.String())
}
