package measure

import (
	"encoding/json"
	"testing"
	"time"
)

// Costs from the 2026 on-demand prices, by hand: a million write units are
// $0.625, two million read units 2 × $0.125 = $0.25.
func TestCostsComeFromThePriceTable(t *testing.T) {
	if got := (SeedReport{WriteUnits: 1e6}).Cost(); got != 0.625 {
		t.Errorf("a million write units cost %v, want 0.625", got)
	}
	if got := ReadCost(2e6); got != 0.25 {
		t.Errorf("two million read units cost %v, want 0.25", got)
	}
	p := Point{Query: AccessReport{ConsumedRCU: 8e6}, Scan: AccessReport{ConsumedRCU: 4e6}}
	if p.QueryCost() != 1 || p.ScanCost() != 0.5 {
		t.Errorf("query cost %v, scan cost %v; want 1 and 0.5", p.QueryCost(), p.ScanCost())
	}
}

// An AccessReport's JSON keeps its contract keys and reads back.
func TestAccessReportJSONRoundTrip(t *testing.T) {
	in := AccessReport{Count: 3, ScannedCount: 39, ConsumedRCU: 2.5, Pages: 1, Elapsed: 1500 * time.Microsecond}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"count":3,"scanned_count":39,"consumed_rcu":2.5,"pages":1,"elapsed_ms":1.5}` {
		t.Errorf("JSON %s", b)
	}
	var out AccessReport
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Count != 3 || out.ScannedCount != 39 || out.ConsumedRCU != 2.5 || out.Pages != 1 || out.Elapsed != 1500*time.Microsecond {
		t.Errorf("read back %+v", out)
	}
}

// Nearest-rank percentiles, by hand: of 1..10 ms the median is the 5th
// (⌈0.5 × 10⌉) and the p90 the 9th (⌈0.9 × 10⌉); of 3 samples the p90 is the
// slowest; the order samples came in does not matter.
func TestSpreadIsNearestRank(t *testing.T) {
	var ten []time.Duration
	for _, i := range []int{7, 1, 10, 3, 5, 9, 2, 8, 4, 6} {
		ten = append(ten, time.Duration(i)*time.Millisecond)
	}
	if got, want := SpreadOf(ten), (Spread{N: 10, Min: time.Millisecond, Median: 5 * time.Millisecond, P90: 9 * time.Millisecond}); got != want {
		t.Errorf("spread of 1..10 ms: %+v, want %+v", got, want)
	}
	three := []time.Duration{30, 10, 20}
	if got, want := SpreadOf(three), (Spread{N: 3, Min: 10, Median: 20, P90: 30}); got != want {
		t.Errorf("spread of three: %+v, want %+v", got, want)
	}
	if got := (AccessReport{Elapsed: 4}).Spread(); got != (Spread{N: 1, Min: 4, Median: 4, P90: 4}) {
		t.Errorf("a read made once: %+v", got)
	}
	if got := SpreadOf(nil); got != (Spread{}) {
		t.Errorf("no samples: %+v", got)
	}
}

// Repeated reads keep their samples through JSON.
func TestAccessReportJSONKeepsSamples(t *testing.T) {
	in := AccessReport{Count: 1, Elapsed: 2 * time.Millisecond, Samples: []time.Duration{3 * time.Millisecond, 2 * time.Millisecond, 1500 * time.Microsecond}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"count":1,"scanned_count":0,"consumed_rcu":0,"pages":0,"elapsed_ms":2,"samples_ms":[3,2,1.5]}` {
		t.Errorf("JSON %s", b)
	}
	var out AccessReport
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 3 || out.Samples[2] != 1500*time.Microsecond {
		t.Errorf("samples read back %v", out.Samples)
	}
}
