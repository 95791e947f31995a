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
