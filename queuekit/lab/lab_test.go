package lab

import (
	"github.com/nightqueue/workshop/queuekit"

	"math"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/chart"
)

type recorder struct {
	html, md []string
	updates  []string
	ids      map[string]bool
}

// inNotebook pretends the test runs inside GoNB and records what would be
// sent to the notebook.
func inNotebook(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{ids: map[string]bool{}}
	old := []any{notebook, displayHTML, displayMarkdown, updateHTML}
	notebook = func() bool { return true }
	displayHTML = func(h string) { r.html = append(r.html, h) }
	displayMarkdown = func(m string) { r.md = append(r.md, m) }
	updateHTML = func(id, h string) { r.ids[id] = true; r.updates = append(r.updates, h) }
	t.Cleanup(func() {
		notebook = old[0].(func() bool)
		displayHTML = old[1].(func(string))
		displayMarkdown = old[2].(func(string))
		updateHTML = old[3].(func(string, string))
	})
	return r
}

func TestShowInANotebookDisplaysTheChartThenItsTable(t *testing.T) {
	r := inNotebook(t)
	c, err := chart.SweepP95([]chart.SweepPoint{{Workers: 2, P95Wait: 90}, {Workers: 3, P95Wait: 40}})
	if err != nil {
		t.Fatal(err)
	}
	Show(c)
	Show(c)
	if len(r.html) != 2 || len(r.md) != 2 {
		t.Fatalf("%d HTML and %d Markdown outputs, want 2 and 2", len(r.html), len(r.md))
	}
	if !strings.Contains(r.html[0], `class="queuekit-chart"`) || r.html[0] == r.html[1] {
		t.Error("the chart HTML is missing its marker or repeats its element id")
	}
	if !strings.Contains(r.md[0], "| 3 | 40 |") {
		t.Errorf("table: %s", r.md[0])
	}
	if err := Chart(chart.SweepP95(nil)); err == nil {
		t.Error("Chart of a failed builder returned no error")
	}
	if last := r.md[len(r.md)-1]; !strings.HasPrefix(last, "✗ could not draw the chart: ") {
		t.Errorf("error shown as %q", last)
	}
	Show(nil)
	var nilChart *chart.Chart
	Show(nilChart)
	if n := len(r.html); n != 2 {
		t.Errorf("nil charts displayed HTML")
	}
}

func TestProgressUpdatesAtMostTenTimesASecond(t *testing.T) {
	r := inNotebook(t)
	clock := time.Date(2026, 5, 13, 1, 0, 0, 0, time.UTC)
	p := &Progress{label: "seeding", total: 1000, notebook: true, now: func() time.Time { return clock },
		update: updateHTML, show: displayHTML}
	p.id = "queuekit-progress-test"
	p.start()
	for range 1000 {
		clock = clock.Add(time.Millisecond) // 1000 steps over one second
		p.Add(1)
	}
	p.Done()
	p.Done()
	// One initial update, about ten while running, one to erase.
	if n := len(r.updates); n < 10 || n > 13 {
		t.Errorf("%d updates in one second, want about 10", n)
	}
	if len(r.ids) != 1 {
		t.Errorf("updates went to %d blocks, want 1", len(r.ids))
	}
	if last := r.updates[len(r.updates)-1]; last != "" {
		t.Errorf("the live block was not erased: %q", last)
	}
	if len(r.html) != 1 || !strings.Contains(r.html[0], `value="1000" max="1000"`) || !strings.Contains(r.html[0], "seeding: 1000/1000 (100%)") {
		t.Errorf("final bar: %v", r.html)
	}
	if !strings.Contains(r.updates[5], "<progress value=") {
		t.Errorf("update is not a progress bar: %s", r.updates[5])
	}
}

func TestProgressWithUnknownTotalCounts(t *testing.T) {
	var b strings.Builder
	p := &Progress{label: "pages", now: time.Now, out: &b}
	p.start()
	p.Add(3)
	p.Done()
	if got := b.String(); got != "pages: 3 done\n" {
		t.Errorf("got %q", got)
	}
}

func TestProgressReportTakesTotalAndNote(t *testing.T) {
	var b strings.Builder
	p := &Progress{label: "night", now: time.Now, out: &b}
	p.start()
	p.Report(queuekit.Progress{Done: 5, Total: 10, Note: "2 running"})
	p.Report(queuekit.Progress{Done: 10, Total: 10, Note: "0 running"})
	p.Done()
	want := "night: 5/10 (50%), 2 running\nnight: 10/10 (100%) done\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCheckNearRejectsNaN(t *testing.T) {
	if CheckNear("x", math.NaN(), 0, 1, "") {
		t.Error("NaN passed")
	}
	if !CheckBetween("y", 0.5, 0, 1, "") || CheckBetween("y", 2, 0, 1, "") {
		t.Error("CheckBetween")
	}
}
