package chart_test

import (
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
	if want := "| GetItem × 10 | 10 | 10 | 10 | 5 | \\$0.625 | 4321 |"; !strings.Contains(md, want) {
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
	if want := "| BatchWriteItem | 42 | 2 | 84 | 42 | \\$0.0000525 | 12.0 |"; !strings.Contains(md, want) {
		t.Errorf("table\n%s\nwant the row %s", md, want)
	}
}
