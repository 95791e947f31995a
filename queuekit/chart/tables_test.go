package chart_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/chart"
)

func TestNightReadsTableShowsRequestsUnitsAndBytes(t *testing.T) {
	reads := []access.Read{{Label: "GetItem × 10", Requests: 10, ResponseBytes: 4321,
		Report: catalog.AccessReport{Method: "GetItem", Count: 10, ScannedCount: 10, ConsumedRCU: 5}}}
	md := chart.NightReadsTable(reads).Markdown()
	// 5 read units × $0.125 per million = $0.625 per million reads, escaped for JupyterLab.
	if want := "| GetItem × 10 | 10 | 10 | 10 | 5 | \\\\$0.625 | 4321 |"; !strings.Contains(md, want) {
		t.Errorf("table\n%s\nwant the row %s", md, want)
	}
}

func TestPagesTableMarksEmptyPagesWithANextPage(t *testing.T) {
	r := catalog.AccessReport{PerPage: []catalog.Page{{Count: 0, ScannedCount: 900, ConsumedRCU: 128, More: true}, {Count: 10, ScannedCount: 50, ConsumedRCU: 8}}}
	got := chart.PagesTable(r).String()
	for _, want := range []string{"1         0      900         128  yes", "2        10       50           8  no"} {
		if !strings.Contains(got, want) {
			t.Errorf("pages table\n%s\nwant a line %q", got, want)
		}
	}
}

func TestWritesTableShowsUnitsAndCost(t *testing.T) {
	reps := []catalog.SeedReport{{Items: 42, Requests: 2, WriteUnits: 84, IndexWriteUnits: 42, Elapsed: 12 * time.Millisecond}}
	md := chart.WritesTable([]string{"BatchWriteItem"}, reps).Markdown()
	// 84 write units × $0.625 per million = $0.0000525.
	if want := "| BatchWriteItem | 42 | 2 | 84 | 42 | \\\\$0.0000525 | 12.0 |"; !strings.Contains(md, want) {
		t.Errorf("table\n%s\nwant the row %s", md, want)
	}
}

// 40 values 0..39 in bins of 2: 20 bins, more than MaxTableBins, so the
// table summarises: min 0, median = value at ⌈0.5·40⌉−1 = 19, p95 = value at
// ⌈0.95·40⌉−1 = 37, max 39, mean 19.5; every bin holds 2, the first wins.
func TestHistogramTableSummarisesManyBins(t *testing.T) {
	vals := make([]float64, 40)
	for i := range vals {
		vals[i] = float64(i)
	}
	c, err := chart.Histogram(vals, 2, "p95 wait (minutes)")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"values", "40"}, {"min", "0"}, {"median", "19"}, {"p95 (nearest rank)", "37"}, {"max", "39"},
		{"mean", "19.5"}, {"most common bin", "[0, 2): 2 values (5.0%)"}}
	if fmt.Sprint(c.Table.Rows) != fmt.Sprint(want) {
		t.Errorf("summary rows %v, want %v", c.Table.Rows, want)
	}
}
