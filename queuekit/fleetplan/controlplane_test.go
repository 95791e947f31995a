package fleetplan_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// The control plane's cost, measured: n in-process workers (each a Join of
// its own, sharing the process) on K shards for a few rebalance rounds, no
// jobs, so every read and write is the control plane's. Compared with
// ControlPlaneCost: each rebalance is one Query of K items whose read units
// (as DynamoDB reported them) are at most the formula's, at 4 and at 24
// workers alike (O(K), not O(N)); the writes are at most the formula's
// renewals for the time run plus the joins, acquires, releases and wants
// the workers counted.
func TestControlPlaneCostMatchesTheFormula(t *testing.T) {
	t.Parallel()
	const shards = 16
	lease := 2 * time.Second
	// 4 and 24 workers side by side, each on a fleet table of its own (the
	// run is 15 s of wall time either way).
	for _, n := range []int{4, 24} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			t.Parallel()
			controlPlaneCostAt(t, n, shards, lease)
		})
	}
}

// controlPlaneCostAt runs n workers on shards shards for 15 s and checks
// their shard reads and writes against fleetplan.ControlPlaneCost.
func controlPlaneCostAt(t *testing.T, n, shards int, lease time.Duration) {
	f := newFleet(t, fleet.WithLease(lease), fleet.WithShardLease(lease))
	ctx := context.Background()
	if err := f.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	c, err := fleetplan.ControlPlaneCost(n, shards, lease, capacity.Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	run := 15 * time.Second
	rctx, cancel := context.WithTimeout(ctx, run)
	began := time.Now()
	var mu sync.Mutex
	var all []fleet.Stats
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := f.Join(rctx, fleet.WorkerConfig{Name: fmt.Sprintf("n%02d-w%02d", n, i), Slots: 1, Shards: shards, Work: fleet.Sleep(0)})
			if err != nil && rctx.Err() == nil { // a join the run's end cut short is no error
				t.Errorf("worker %d: %v", i, err)
			}
			mu.Lock()
			all = append(all, st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	cancel()
	elapsed := time.Since(began)
	var rebalances, reads, writes, churn, copies int
	var units float64
	for _, st := range all {
		rebalances += st.Rebalances
		reads += st.ShardReads
		units += st.ShardReadUnits
		writes += st.Writes
		churn += 2 + st.Rejoins + st.ShardsAcquired + st.ShardsReleased + st.Wants + st.ShardsLost // join, leave, changes
		copies += st.HeartbeatCopies
	}
	if rebalances < 1 {
		t.Fatalf("n=%d: no rebalance in %s", n, run)
	}
	if reads != rebalances*c.ReadRequestsPerRebalance {
		t.Errorf("n=%d: %d shard Queries in %d rebalances, want %d each", n, reads, rebalances, c.ReadRequestsPerRebalance)
	}
	got := units / float64(rebalances)
	if got > c.ReadUnitsPerRebalance {
		t.Errorf("n=%d: %.2f read units per rebalance, more than the formula's %.0f", n, got, c.ReadUnitsPerRebalance)
	}
	// Renewals can only fall behind their schedule (a slow machine), never
	// get ahead of it; refused acquires also count as writes (bounded by
	// one per shard and rebalance); so do the heartbeat copies a slow call
	// makes the keepers send (fence.Options.Hedge), counted apart: none
	// while calls are fast, some in the parallel test run.
	renewals := c.WriteRequestsPerHour * elapsed.Hours()
	if float64(writes-copies) > renewals+float64(churn)+float64(rebalances) {
		t.Errorf("n=%d: %d writes (%d of them heartbeat copies) in %.1f s, more than the formula's %.0f renewals + %d joins, leaves and shard changes + %d refused acquires at most",
			n, writes, copies, elapsed.Seconds(), renewals, churn, rebalances)
	}
	t.Logf("n=%d, K=%d, %.1f s: %d rebalances, %.2f read units each (formula %.0f), %d writes (formula: %.0f renewals + %d changes; %d heartbeat copies)",
		n, shards, elapsed.Seconds(), rebalances, got, c.ReadUnitsPerRebalance, writes, renewals, churn, copies)
	// The bound the formula uses does not depend on the workers: at 4 and at
	// 24 the measured units per rebalance are both within it (they vary with
	// the shard items' history, not with N), and one read sees the K items.
	st, err := f.ShardStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != shards {
		t.Errorf("%d shard items, want %d", len(st), shards)
	}
}

// ControlPlaneCost, by hand: 10 workers, 16 shards, a 2 s shard lease
// (rebalance every 0.5 s: 7,200 an hour). 16 shard items of at most
// ShardItemBytes (830 B) are 13,280 B: 4 strongly consistent read units
// (4 KB each) in one page. Writes: 16 + 10 renewals each round, shard
// items 1 unit (under 1 KB), member items 1.
func TestControlPlaneCostByHand(t *testing.T) {
	c, err := fleetplan.ControlPlaneCost(10, 16, 2*time.Second, capacity.Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	if fleetplan.ShardItemBytes != 830 {
		t.Fatalf("ShardItemBytes %d: this hand computation assumes 830", fleetplan.ShardItemBytes)
	}
	if c.ReadRequestsPerRebalance != 1 || c.ReadUnitsPerRebalance != 4 {
		t.Errorf("per rebalance: %d requests, %.0f units; want 1 and 4", c.ReadRequestsPerRebalance, c.ReadUnitsPerRebalance)
	}
	if c.ReadUnitsPerHour != 10*4*7200 || c.WriteRequestsPerHour != 26*7200 || c.WriteUnitsPerHour != 26*7200 {
		t.Errorf("per hour: %.0f read units, %.0f write requests, %.0f write units; want %d, %d, %d",
			c.ReadUnitsPerHour, c.WriteRequestsPerHour, c.WriteUnitsPerHour, 10*4*7200, 26*7200, 26*7200)
	}
	want := (10*4*7200)*0.125/1e6 + (26*7200)*0.625/1e6
	if d := c.USDPerHour - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("$%.6f an hour, want $%.6f", c.USDPerHour, want)
	}
	if _, err := fleetplan.ControlPlaneCost(0, 16, time.Second, capacity.Prices2026); err == nil {
		t.Error("0 workers: want an error")
	}
}

// newFleet opens a fleet on a table of the test's own (deleted when the
// test ends).
func newFleet(t testing.TB, opts ...fleet.Option) *fleet.Fleet {
	t.Helper()
	f, err := fleet.New(ddbtest.NewCatalog(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := f.DeleteTable(ctx); err != nil {
			t.Errorf("delete %s: %v", f.Table(), err)
		}
	})
	return f
}
