package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// opener gives every size a table of this test, deleted when it ends; the
// same size gets the same table on every call, so a second Run can reuse it.
func opener(t *testing.T) access.Opener {
	names := map[int]string{}
	return func(ctx context.Context, nights int) (*catalog.Catalog, error) {
		if _, ok := names[nights]; !ok {
			names[nights] = fmt.Sprintf("%s_%d", ddbtest.TableName(t), nights)
			return ddbtest.NewCatalog(t, catalog.WithTable(names[nights])), nil
		}
		return catalog.New(ctx, catalog.WithEndpoint(ddbtest.Endpoint(t)), catalog.WithTable(names[nights]))
	}
}

func TestQueryReadsOnlyTheNightWhileScanReadsTheWholeTable(t *testing.T) {
	ctx := ctxFor(t)
	var phases []string
	s := access.Study{
		Sizes: []int{7, 30, 90}, Repeats: 1, Open: opener(t),
		Progress: func(p queuekit.Progress) { phases = append(phases, phaseOf(p.Note)) },
	}
	points, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 3 {
		t.Fatalf("got %d points, want 3", len(points))
	}
	for _, p := range points {
		if p.Query.Count < 8 || p.Query.Count > 12 {
			t.Errorf("%d nights: Query returned %d jobs, want one night of 8 to 12", p.Nights, p.Query.Count)
		}
		if p.Query.ScannedCount != p.Query.Count {
			t.Errorf("%d nights: Query scanned %d items to return %d: want equal", p.Nights, p.Query.ScannedCount, p.Query.Count)
		}
		if p.Scan.Count != p.Query.Count {
			t.Errorf("%d nights: Scan returned %d, Query %d", p.Nights, p.Scan.Count, p.Query.Count)
		}
		if p.Scan.ScannedCount != p.Items {
			t.Errorf("%d nights: Scan scanned %d items, want every item of the table (%d)", p.Nights, p.Scan.ScannedCount, p.Items)
		}
		if p.Query.ConsumedRCU != points[0].Query.ConsumedRCU {
			t.Errorf("Query RCU %.1f at %d nights, %.1f at %d: want the same whatever the table size",
				p.Query.ConsumedRCU, p.Nights, points[0].Query.ConsumedRCU, points[0].Nights)
		}
		if p.Date != points[0].Date {
			t.Errorf("%d nights: read night %s, want the same night %s in every table", p.Nights, p.Date, points[0].Date)
		}
	}
	for i := 1; i < len(points); i++ {
		a, b := points[i-1], points[i]
		// 30 -> 90 nights is three times the items; allow for rounding per page.
		ratio := float64(b.Items) / float64(a.Items)
		if !(b.Scan.ConsumedRCU > 0.8*ratio*a.Scan.ConsumedRCU) {
			t.Errorf("Scan RCU %.1f at %d nights, %.1f at %d: want it to grow with the table (about %.1f×)",
				b.Scan.ConsumedRCU, b.Nights, a.Scan.ConsumedRCU, a.Nights, ratio)
		}
	}
	if last := points[2]; !(last.Scan.ConsumedRCU > 10*last.Query.ConsumedRCU) {
		t.Errorf("at 90 nights Scan costs %.1f RCU and Query %.1f: want Scan far above", last.Scan.ConsumedRCU, last.Query.ConsumedRCU)
	}
	if !slices.Contains(phases, "seed") || !slices.Contains(phases, "read") {
		t.Errorf("progress phases %v: want seed and read", phases)
	}

	// A second run reuses the tables and measures the same.
	phases = nil
	again, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(phases, "seed") || !slices.Contains(phases, "reuse") {
		t.Errorf("second run phases %v: want the tables reused, not seeded again", phases)
	}
	for i := range again {
		if again[i].Items != points[i].Items || again[i].Scan.ConsumedRCU != points[i].Scan.ConsumedRCU {
			t.Errorf("second run at %d nights: %d items, %.1f Scan RCU; first %d, %.1f",
				again[i].Nights, again[i].Items, again[i].Scan.ConsumedRCU, points[i].Items, points[i].Scan.ConsumedRCU)
		}
	}
}

func TestPaddingMakesPagesAndATableWithOtherPaddingIsReseeded(t *testing.T) {
	ctx := ctxFor(t)
	open := opener(t)
	s := access.Study{Sizes: []int{30}, Repeats: 1, Open: open, PadBytes: 4000}
	points, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// ~300 items of 4 KB: more than 1 MB, so the Scan takes several pages.
	if p := points[0]; p.Scan.Pages < 2 || p.Query.Pages != 1 {
		t.Errorf("padded table: Scan %d pages, Query %d: want Scan to page and Query in one", p.Scan.Pages, p.Query.Pages)
	}
	var phases []string
	s.PadBytes = 0
	s.Progress = func(p queuekit.Progress) { phases = append(phases, phaseOf(p.Note)) }
	small, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(phases, "seed") {
		t.Errorf("padding changed but the table was reused (phases %v)", phases)
	}
	if small[0].Scan.ConsumedRCU >= points[0].Scan.ConsumedRCU {
		t.Errorf("Scan RCU %.1f without padding, %.1f with 4 KB: want less", small[0].Scan.ConsumedRCU, points[0].Scan.ConsumedRCU)
	}
}

func TestParallelScanReadsTheSameItemsForTheSameCapacity(t *testing.T) {
	ctx := ctxFor(t)
	points, err := access.Study{Sizes: []int{60}, Repeats: 1, Open: opener(t)}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.New(ctx, catalog.WithEndpoint(ddbtest.Endpoint(t)), catalog.WithTable(points[0].Table))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := access.ParallelScan(ctx, cat, points[0].Date, []int{1, 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	one, four := reps[0], reps[1]
	if four.Segments != 4 || one.Segments != 1 {
		t.Errorf("segments %d and %d, want 1 and 4", one.Segments, four.Segments)
	}
	if one.ScannedCount != points[0].Items || four.ScannedCount != one.ScannedCount || four.Count != one.Count {
		t.Errorf("1 segment scanned %d returned %d; 4 segments scanned %d returned %d; table %d items",
			one.ScannedCount, one.Count, four.ScannedCount, four.Count, points[0].Items)
	}
	// Capacity is rounded up per page, so segments may add up to half a unit each.
	if math.Abs(four.ConsumedRCU-one.ConsumedRCU) > 4*0.5 {
		t.Errorf("4 segments cost %.1f RCU, 1 segment %.1f: want about the same", four.ConsumedRCU, one.ConsumedRCU)
	}
	if _, err := access.ParallelScan(ctx, cat, points[0].Date, nil, 1); err == nil {
		t.Error("no segment counts: want an error")
	}
}

// PoorKey is the job catalog in PoorKeyTable keyed by job_id alone; the
// options name the endpoint but cannot move it to another table or key.
func TestPoorKeyIsACatalogKeyedByJobID(t *testing.T) {
	cat, err := access.PoorKey(ctxFor(t), catalog.WithEndpoint("http://localhost:8000"), catalog.WithTable("other"))
	if err != nil {
		t.Fatal(err)
	}
	if cat.Table() != access.PoorKeyTable || cat.KeySchema() != catalog.KeyByJobID || cat.Endpoint() != "http://localhost:8000" {
		t.Errorf("PoorKey: table %s, key %s, endpoint %s; want %s keyed by job_id at localhost:8000",
			cat.Table(), cat.KeySchema(), cat.Endpoint(), access.PoorKeyTable)
	}
}

func TestItemJSONWrapsEveryValueInItsType(t *testing.T) {
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	item, err := catalog.MarshalJob(n.Jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	s, err := access.ItemJSON(item)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	want := map[string]map[string]any{
		"batch_date":                {"S": "2026-05-13"},
		"window_job_id":             {"S": "01:00#JOB-20260513-001"},
		"estimated_runtime_minutes": {"N": "25"},
		"priority":                  {"N": "2"},
		"requires_exclusive_lock":   {"BOOL": false},
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(queuekit.RequiredAttributes) {
		t.Errorf("%d attributes, want %d", len(got), len(queuekit.RequiredAttributes))
	}
}

func TestCostIsPricePerMillionReadUnits(t *testing.T) {
	for _, c := range []struct{ rcu, want float64 }{{0, 0}, {1e6, 0.125}, {8, 1e-6}, {4e6, 0.5}} {
		if got := access.Cost(c.rcu); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Cost(%g) = %g, want %g", c.rcu, got, c.want)
		}
	}
}

func ExampleCost() {
	// A Scan that reads a year of nights (about 3,650 small items, 1 MB)
	// costs about 128 read units; a Query of one night 1.5.
	fmt.Printf("$%.2f per million Scans\n", access.Cost(128)*1e6)
	fmt.Printf("$%.4f per million Queries\n", access.Cost(1.5)*1e6)
	// Output:
	// $16.00 per million Scans
	// $0.1875 per million Queries
}

// phaseOf names a Study's phase from its progress note.
func phaseOf(note string) string {
	switch {
	case strings.Contains(note, ": seeding "):
		return "seed"
	case strings.Contains(note, "already there, reused"):
		return "reuse"
	case strings.Contains(note, ": Query and Scan, read "):
		return "read"
	}
	return "unknown: " + note
}
