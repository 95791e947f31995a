package capacity

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/prices"
)

func TestLifecycleUnits(t *testing.T) {
	l := DefaultLifecycle
	// 4 state writes of a 1 KB item: 4 × ⌈1/1⌉ = 4 WCU; 2 index writes: 2.
	near(t, "table WCU", l.TableWriteUnits(), 4, 0)
	near(t, "index WCU", l.IndexWriteUnits(), 2, 0)
	near(t, "WCU per job", l.WriteUnits(), 6, 0)
	// One eventually consistent GetItem of 1 KB: ½ × ⌈1/4⌉ = 0.5 RCU.
	// One poll returns 25 × 1 KB = 25 KB: ½ × ⌈25/4⌉ = ½ × 7 = 3.5 RCU,
	// shared by 25 jobs: 0.14. Total 0.64.
	near(t, "index RCU per job", l.IndexReadUnits(), 0.14, 1e-12)
	near(t, "RCU per job", l.ReadUnits(), 0.64, 1e-12)
	// A 2.5 KB item costs ⌈2.5⌉ = 3 WCU a write and ½ × ⌈2.5/4⌉ = 0.5 RCU a read.
	big := Lifecycle{ItemKB: 2.5, StateWrites: 4, IndexWrites: 2, IndexItemKB: 0.2, PollBatch: 20, StatusReads: 1}
	near(t, "2.5 KB table WCU", big.TableWriteUnits(), 12, 0)
	// Index projection 0.2 KB: ⌈0.2⌉ = 1 per index write → 2; a poll reads
	// 20 × 0.2 = 4 KB exactly: ½ × 1 = 0.5, per job 0.025.
	near(t, "0.2 KB index WCU", big.IndexWriteUnits(), 2, 0)
	near(t, "0.2 KB index RCU", big.IndexReadUnits(), 0.025, 1e-12)
	// Heartbeats every 30 s over a 5-minute job: 10 more writes.
	hb := DefaultLifecycle
	hb.Heartbeats = 10
	near(t, "heartbeats WCU", hb.WriteUnits(), 16, 0)
}

func TestWriteShardsAtTheLimits(t *testing.T) {
	for _, tc := range []struct {
		wcu, rcu, u float64
		want        int
	}{
		{0, 0, 1, 1},        // nothing: still one partition key
		{1000, 0, 1, 1},     // exactly one partition's writes
		{1000.5, 0, 1, 2},   // just over
		{2000, 0, 1, 2},     // exactly two
		{2000, 0, 0.5, 4},   // headroom halves a partition
		{0, 3000, 1, 1},     // reads: 3,000 per partition
		{0, 3001, 1, 2},     // just over
		{500, 9000, 1, 3},   // reads bind
		{2314.8, 162, 1, 3}, // seed 003's index: 1,157.4 jobs/s × 2 WCU
	} {
		got, err := WriteShards(tc.wcu, tc.rcu, tc.u)
		if err != nil || got != tc.want {
			t.Errorf("WriteShards(%v, %v, %v) = %d, %v; want %d", tc.wcu, tc.rcu, tc.u, got, err, tc.want)
		}
	}
	for _, bad := range [][3]float64{{-1, 0, 1}, {math.NaN(), 0, 1}, {1, 1, 0}, {1, 1, 1.5}} {
		if _, err := WriteShards(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("WriteShards%v: want an error", bad)
		}
	}
}

// TestDynamoCostsByHand prices seed 003's lifecycle at 100 M jobs a day.
func TestDynamoCostsByHand(t *testing.T) {
	d, err := Dynamo(Seed003, DefaultLifecycle, Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	lambda := 100e6 / 86400
	// 6 WCU × 1,157.407/s = 6,944.4 WCU/s; 0.64 × 1,157.407 = 740.7 RCU/s.
	near(t, "WCU/s", d.WriteUnitsPerSecond, 6*lambda, 1e-9)
	near(t, "RCU/s", d.ReadUnitsPerSecond, 0.64*lambda, 1e-9)
	// Index: 2 × 1,157.4 = 2,314.8 WCU/s → ⌈2.31⌉ = 3 shards.
	if d.WriteShards != 3 {
		t.Errorf("write shards = %d, want 3", d.WriteShards)
	}
	// On demand: 6 × 10⁸ = 6 × 10⁸ WRU/day × $0.625/10⁶ = $375;
	// 0.64 × 10⁸ = 6.4 × 10⁷ RRU × $0.125/10⁶ = $8. Total $383/day.
	near(t, "on-demand $/day", d.OnDemandUSDPerDay, 383, 1e-9)
	// Provisioned at U = 1: 6,944.4 WCU × $0.00065 × 24 = $108.333;
	// 740.74 RCU × $0.00013 × 24 = $2.3111. Total $110.644/day.
	near(t, "provisioned $/day", d.ProvisionedUSDPerDay, 24*(6*lambda*0.00065+0.64*lambda*0.00013), 1e-9)
	near(t, "provisioned $/day (value)", d.ProvisionedUSDPerDay, 110.644, 0.001)
	// Peak 3 and U = 0.5: provisioned buys 6× the average capacity
	// ($663.87), on demand still pays for the average ($383).
	f := Seed003
	f.PeakFactor, f.TargetUtilization = 3, 0.5
	d2, err := Dynamo(f, DefaultLifecycle, Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "on-demand at peak 3", d2.OnDemandUSDPerDay, 383, 1e-9)
	near(t, "provisioned at peak 3, U 0.5", d2.ProvisionedUSDPerDay, 6*d.ProvisionedUSDPerDay, 1e-9)
}

// The break-even utilisations, derived by hand from the 2026 prices:
// writes $0.00065 per WCU-hour over 3,600 × $0.625/10⁶ = $0.00225, which is
// 13/45 = 0.28889; reads $0.00013 per RCU-hour over 3,600 × $0.125/10⁶ =
// $0.00045, the same 13/45.
func TestBreakEvenUtilization(t *testing.T) {
	near(t, "write break-even", Prices2026.BreakEvenUtilization(), 13.0/45, 1e-12)
	near(t, "read break-even", Prices2026.ReadBreakEvenUtilization(), 13.0/45, 1e-12)
}

func TestSQSRequestsAndCost(t *testing.T) {
	// No batching: send + receive + delete = 3 requests a job.
	near(t, "unbatched", SQS{}.RequestsPerJob(), 3, 0)
	// Batches of 10 × 1 KB = 10 KB < 64 KB: (2 × 1 + 1)/10 = 0.3.
	near(t, "batch 10", SQS{BatchSize: 10}.RequestsPerJob(), 0.3, 1e-12)
	// Batches of 10 × 10 KB = 100 KB: 2 chunks to send and to receive:
	// (2 × 2 + 1)/10 = 0.5.
	near(t, "batch 10 of 10 KB", SQS{BatchSize: 10, PayloadKB: 10}.RequestsPerJob(), 0.5, 1e-12)
	// A 256 KB message alone: 4 chunks each way + 1 delete = 9.
	near(t, "256 KB", SQS{PayloadKB: 256}.RequestsPerJob(), 9, 1e-12)
	p, err := PlanSQS(Seed003, SQS{}, Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	// 3 × 1,157.407 = 3,472.2 requests/s; 3 × 10⁸ = 3 × 10⁸ a day × $0.40/10⁶ = $120.
	near(t, "requests/s", p.RequestsPerSecond, 3*100e6/86400, 1e-9)
	near(t, "$/day", p.USDPerDay, 120, 1e-9)
	pb, err := PlanSQS(Seed003, SQS{BatchSize: 10}, Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "batched $/day", pb.USDPerDay, 12, 1e-9)
	for _, bad := range []SQS{{BatchSize: 11}, {BatchSize: -1}, {PayloadKB: 300}} {
		if _, err := PlanSQS(Seed003, bad, Prices2026); err == nil || !strings.Contains(err.Error(), "SQS") {
			t.Errorf("%+v: want an SQS error, got %v", bad, err)
		}
	}
}

// capacity prices with the module's one table (package prices tests that no
// other exists).
func TestCapacityPricesAreTheOneTable(t *testing.T) {
	if !reflect.DeepEqual(Prices2026, prices.Table2026) {
		t.Errorf("capacity.Prices2026 = %+v, want prices.Table2026", Prices2026)
	}
}

func TestSizeKeepsThePoolOutWhenUnstable(t *testing.T) {
	f := Fleet{JobsPerDay: 86400, JobMinutes: 1, ThreadsPerMachine: 1, JobMemoryMB: 1, MachineMemoryGB: 1}
	p, err := Size(f, Lifecycle{}, SQS{}, Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pool != nil || p.Problem == "" {
		t.Errorf("pool %+v problem %q: want no pool and a problem", p.Pool, p.Problem)
	}
	if _, err := Size(f, Lifecycle{ItemKB: 500, StateWrites: 1, IndexItemKB: 1, PollBatch: 1}, SQS{}, Prices2026); err == nil {
		t.Error("500 KB item: want an error")
	}
}
