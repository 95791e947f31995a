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
		Progress: func(p access.Progress) { phases = append(phases, p.Phase) },
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

	cp := access.ChartPoints(points)
	if cp[2].Items != points[2].Items || cp[2].ScanRCU != points[2].Scan.ConsumedRCU || cp[2].QueryScanned != points[2].Query.ScannedCount {
		t.Errorf("chart point %+v does not carry the measurement %+v", cp[2], points[2])
	}
	if md := access.Markdown(points); strings.Count(md, "\n") != 2+len(points) {
		t.Errorf("markdown table has %d lines, want %d:\n%s", strings.Count(md, "\n"), 2+len(points), md)
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
	s.Progress = func(p access.Progress) { phases = append(phases, p.Phase) }
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

func TestJobIDKeyForcesAScanToReadANight(t *testing.T) {
	ctx := ctxFor(t)
	cat := ddbtest.NewCatalog(t) // its table is deleted when the test ends
	tbl := access.NewJobIDTable(cat, cat.Table())
	if err := tbl.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Create(ctx); err != nil {
		t.Fatalf("create twice: %v", err)
	}
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := tbl.Put(ctx, jobs); err != nil {
			t.Fatal(err)
		}
	}
	want, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	got, rep, err := tbl.Night(ctx, "2026-05-13", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Jobs, want.Jobs) {
		t.Errorf("night read by Scan:\n%v\nwant\n%v", got.Jobs, want.Jobs)
	}
	if rep.Count != len(want.Jobs) || rep.ScannedCount != len(jobs) {
		t.Errorf("Scan returned %d and scanned %d; want %d returned and every one of the %d items scanned",
			rep.Count, rep.ScannedCount, len(want.Jobs), len(jobs))
	}
	win, _, err := tbl.Night(ctx, "2026-05-13", "02:00")
	if err != nil {
		t.Fatal(err)
	}
	if len(win.Jobs) != 3 {
		t.Errorf("window 02:00 of 2026-05-13: %d jobs, want 3", len(win.Jobs))
	}
	j, err := tbl.Get(ctx, "JOB-20260513-003")
	if err != nil {
		t.Fatal(err)
	}
	if j != want.Jobs[2] {
		t.Errorf("Get: %+v, want %+v", j, want.Jobs[2])
	}
	if _, err := tbl.Get(ctx, "JOB-20260513-099"); err == nil || !strings.Contains(err.Error(), "no such job") {
		t.Errorf("Get of a missing job: %v, want no such job", err)
	}
	if err := tbl.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx); err != nil {
		t.Fatalf("delete twice: %v", err)
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

func TestDollars(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "$0.00"}, {1.5, "$1.50"}, {123.456, "$123.46"}, {0.125, "$0.125"}, {0.000456789, "$0.000457"}, {-2, "-$2.00"}} {
		if got := access.Dollars(c.v); got != c.want {
			t.Errorf("Dollars(%g) = %s, want %s", c.v, got, c.want)
		}
	}
}

func ExampleCost() {
	// A Scan that reads a year of nights (about 3,650 small items, 1 MB)
	// costs about 128 read units; a Query of one night 1.5.
	fmt.Println(access.Dollars(access.Cost(128) * 1e6))
	fmt.Println(access.Dollars(access.Cost(1.5) * 1e6))
	// Output:
	// $16.00
	// $0.188
}

func TestDescribeAndCompareShowTheReport(t *testing.T) {
	r := catalog.AccessReport{Method: "Scan", Count: 10, ScannedCount: 3639, ConsumedRCU: 99.5, Pages: 1, Segments: 4, Elapsed: 117900 * time.Microsecond}
	got := access.Describe(r)
	for _, want := range []string{"Scan: returned 10 of 3639 items scanned", "99.5 RCU", "1 page,", "4 segments", "117.9 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe = %q, want it to contain %q", got, want)
		}
	}
	md := access.Compare([]string{"poor key"}, []catalog.AccessReport{r})
	if !strings.Contains(md, "| poor key | Scan | 10 | 3639 | 99.5 | $12.44 | 1 | 4 | 117.9 |") {
		t.Errorf("Compare:\n%s", md)
	}
}
