package fleetplan_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// controlPlaneRun is n in-process fleet workers (package fleet's Join, no
// jobs: every request is the control plane's) on k shards for run, their
// endpoint the limits layer s, on a table of their own: fleetlab.ControlPlane,
// the rig notebook 10 runs, read back as the layer's samples.
type controlPlaneRun struct {
	table    string
	stats    []fleet.Stats // one per Join (a worker started again has several)
	failed   int           // Joins that ended in an error before the run's end
	firstErr string
	began    time.Time
	elapsed  time.Duration
	totals   limits.Sample            // the layer's counts for the table: units, requests, throttles by reason
	keys     map[string]limits.Sample // the same for the partition of pk = SHARD, MEMBER and META
	parts    map[string]int           // those keys' partitions
}

func runControlPlane(t *testing.T, s *limits.Server, n, k int, shardLease, run time.Duration, aged bool) controlPlaneRun {
	return runControlPlaneStaggered(t, s, n, k, shardLease, run, aged, 0)
}

// runControlPlaneStaggered starts worker i at i·stagger, as a fleet that is
// rolled out one process at a time. The shard items are aged (aged: the
// history a running fleet has, fleet.HistoryMax entries) at DynamoDB Local
// directly, and the table is deleted before it returns.
func runControlPlaneStaggered(t *testing.T, s *limits.Server, n, k int, shardLease, run time.Duration, aged bool, stagger time.Duration) controlPlaneRun {
	t.Helper()
	res, err := fleetlab.ControlPlane{Name: fmt.Sprintf("%d workers on %d shards", n, k), Workers: n, Shards: k, ShardLease: shardLease,
		Run: run, Stagger: stagger, Aged: aged}.Execute(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	r := controlPlaneRun{table: res.Table, stats: res.Stats, failed: res.FailedJoins, firstErr: res.FirstError, began: res.Began,
		elapsed: res.Elapsed, totals: res.Totals, keys: map[string]limits.Sample{}, parts: map[string]int{}}
	for _, kl := range res.Keys {
		r.parts[kl.Key] = kl.Partition
		r.keys[kl.Key] = limits.Sample{Table: res.Table, Partition: kl.Partition, Throttled: kl.Throttled,
			ReadUnits: kl.ReadUnits * res.Elapsed.Seconds(), WriteUnits: kl.WriteUnits * res.Elapsed.Seconds()}
	}
	return r
}

func reasons(m map[string]int) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Through the real limits layer (an HTTP proxy in front of DynamoDB Local
// throttling per partition and per table as AWS does, every limit divided
// by S = 22: a partition serves 136 read and 45 write units a second), the
// one-tier control plane of 64 workers on 16 shards throttles on pk =
// SHARD's partition and pk = MEMBER's, and the same protocol run by the
// 2 dispatchers of the two-tier design throttles nothing, as fleetplan's
// rows predict at that scale (shard items aged first to the history a
// running fleet has, about ShardItemBytes each):
//
//   - one tier, N = 64, K = 16, shard lease 2 s (a look every 0.5 s): pk =
//     SHARD read 64 · ⌈16 · 830 / 4,096⌉ · 2 = 512 read units a second
//     (3.8x a scaled partition's 136), pk = MEMBER written 64 · 2 = 128
//     (2.8x its 45): SHARD the bigger wall, as at seed 003's size (489x
//     against 7.2x);
//   - two tiers, the D = 2 dispatchers on the same K: SHARD read 2 · 4 · 2 =
//     16, written 16 · 2 = 32, MEMBER 4: all under, even if SHARD and MEMBER
//     shared a partition (36 of 45).
//
// The keys' partitions are the layer's (PartitionOf), so each throttle is
// read as one key's. Executors are not in this run: in the two-tier design
// they send no control-plane request to DynamoDB (their liveness is their
// job's lease).
func TestOneTierThrottlesOnTheLimitsLayerWhereTheDispatcherTierDoesNot(t *testing.T) {
	// Not parallel: it measures request rates through the limits layer,
	// which the package's other rate tests would share with it.
	const (
		S           = 22.0
		k           = 16
		workers     = 64
		dispatchers = 2
	)
	lease := 2 * time.Second
	a := fleetplan.Seed003
	a.ShardLease = lease
	predict := func(n int) fleetplan.Deployment {
		d, err := fleetplan.OneTier{Workers: n, JobsPerDay: 1, Shards: k, Assumptions: a}.Plan(capacity.Prices2026)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	overScaled := func(d fleetplan.Deployment) []string {
		var over []string
		for _, r := range d.Keys {
			if r.Key != "SHARD" && r.Key != "MEMBER" {
				continue
			}
			if r.ReadUnits > fleetplan.PartitionReadUnits/S {
				over = append(over, fmt.Sprintf("%s read %.0f > %.0f", r.Key, r.ReadUnits, fleetplan.PartitionReadUnits/S))
			}
			if r.WriteUnits > fleetplan.PartitionWriteUnits/S {
				over = append(over, fmt.Sprintf("%s write %.0f > %.0f", r.Key, r.WriteUnits, fleetplan.PartitionWriteUnits/S))
			}
		}
		return over
	}
	oneModel, twoModel := predict(workers), predict(dispatchers)
	if len(overScaled(oneModel)) == 0 || len(overScaled(twoModel)) != 0 {
		t.Fatalf("the model's verdicts at S = %g: one tier over %v, dispatchers over %v; this test wants one tier over and the dispatchers under",
			S, overScaled(oneModel), overScaled(twoModel))
	}
	twoSum := 0.0
	for _, r := range twoModel.Keys {
		if r.Key == "SHARD" || r.Key == "MEMBER" {
			twoSum += r.WriteUnits
		}
	}
	if twoSum > fleetplan.PartitionWriteUnits/S {
		t.Fatalf("the dispatchers' SHARD and MEMBER writes (%.0f) would not fit one scaled partition (%.0f) if they shared one", twoSum, fleetplan.PartitionWriteUnits/S)
	}

	ctx := context.Background()
	s, err := limits.Start(ctx, ddbtest.Endpoint(t), "", limits.WithScale(S))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := 15 * time.Second
	one := runControlPlane(t, s, workers, k, lease, run, true)
	two := runControlPlane(t, s, dispatchers, k, lease, run, true)

	for _, c := range []struct {
		name string
		r    controlPlaneRun
		d    fleetplan.Deployment
	}{{"one tier, 64 workers", one, oneModel}, {"two tiers, 2 dispatchers", two, twoModel}} {
		tot := c.r.totals
		t.Logf("%s, K = %d, S = %g, %.1f s: %d requests, %.0f read units (%.1f/s), %.0f write units (%.1f/s); throttled %d: %s; worker errors %d",
			c.name, k, S, c.r.elapsed.Seconds(), tot.Requests, tot.ReadUnits, tot.ReadUnits/c.r.elapsed.Seconds(), tot.WriteUnits,
			tot.WriteUnits/c.r.elapsed.Seconds(), tot.ThrottledTotal(), reasons(tot.Throttled), c.r.failed)
		for _, pk := range []string{"SHARD", "MEMBER", "META"} {
			x := c.r.keys[pk]
			var shared []string
			for other, p := range c.r.parts {
				if other != pk && p == c.r.parts[pk] {
					shared = append(shared, other)
				}
			}
			sort.Strings(shared)
			t.Logf("  partition %d (pk = %s; shared with %v): %.1f read, %.1f write units/s; throttled: %s",
				c.r.parts[pk], pk, shared, x.ReadUnits/c.r.elapsed.Seconds(), x.WriteUnits/c.r.elapsed.Seconds(), reasons(x.Throttled))
		}
		looks := 0
		for _, st := range c.r.stats {
			looks += st.Rebalances
		}
		t.Logf("  %.1f looks a second (%.1f workers' worth at 2 a second)", float64(looks)/c.r.elapsed.Seconds(), float64(looks)/c.r.elapsed.Seconds()/2)
		for _, r := range c.d.Keys[:2] {
			t.Logf("  model: %s %.1f read, %.1f write units/s (AWS units; a scaled partition serves %.0f and %.0f)",
				r.Key, r.ReadUnits, r.WriteUnits, fleetplan.PartitionReadUnits/S, fleetplan.PartitionWriteUnits/S)
		}
	}
	for _, pk := range []string{"SHARD", "MEMBER"} {
		for other, p := range one.parts {
			if other != pk && p == one.parts[pk] {
				t.Fatalf("pk = %s shares partition %d with %s: its throttles cannot be told apart", pk, p, other)
			}
		}
	}
	// pk = SHARD's partition takes the N workers' Queries and, besides the K
	// renewals both designs send, the acquires and wants of N workers
	// contending for K shards (refused ones too: AWS bills them). How many
	// of its throttles are reads depends on how many looks the machine
	// runs; that it throttles does not.
	if n := one.keys["SHARD"].ThrottledTotal(); n == 0 {
		t.Errorf("one tier: nothing throttled on pk = SHARD's partition")
	}
	if n := one.keys["MEMBER"].Throttled["TableWriteKeyRangeThroughputExceeded"]; n == 0 {
		t.Errorf("one tier: no write of pk = MEMBER throttled on its partition; its partition's throttles: %v", one.keys["MEMBER"].Throttled)
	}
	if one.failed > 0 {
		t.Logf("one tier: %d joins failed and were started again (first: %s)", one.failed, one.firstErr)
	}
	if n := two.totals.ThrottledTotal(); n != 0 {
		t.Errorf("two tiers: the dispatchers' control plane was throttled %d times (%v); the model says it fits", n, two.totals.Throttled)
	}
	if two.failed > 0 {
		t.Errorf("two tiers: %d dispatcher joins failed (first: %s)", two.failed, two.firstErr)
	}
}

// The one-tier model against the requests real workers send, at the
// sizes this machine runs (16 and 64 in-process workers; at 100 its looks
// fell to an eighth of their schedule, Local saturated): through the
// layer at S = 1 (nothing throttles), K = 32 shards, a shard lease of 4 s
// (a look every second). Per look each worker sends exactly one Query
// (ControlPlaneCost: ⌈32 · 830 B / 1 MB⌉ = 1 page) of at most
// ⌈32 · 830 / 4,096⌉ = 7 read units at any N (O(K) a look, so O(N·K) a
// second: the wall the two tiers remove); the layer's own count of pk =
// SHARD's read units equals what the workers report (less the Queries the
// run's end cut off, whose answers no worker read); the read units a
// second, once the fleet has settled (from the 6th second), stay within the
// model's (looks run on a timer: they fall behind on a busy machine, never
// ahead); and every write is one unit (items under 1 KB), so the layer's
// write units equal the write requests the workers counted, refused ones
// included (less those the run's end cut off before they were sent). The model counts renewals only: the refused acquires of workers
// contending for shards come on top (logged; on AWS each is a billed write
// on pk = SHARD).
func TestOneTierControlPlaneModelAgainstRealWorkers(t *testing.T) {
	// Not parallel: it measures request rates through the limits layer,
	// which the package's other rate tests would share with it.
	const k = 32
	lease := 4 * time.Second
	a := fleetplan.Seed003
	a.ShardLease = lease
	ctx := context.Background()
	s, err := limits.Start(ctx, ddbtest.Endpoint(t), "", limits.WithScale(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{16, 64} {
		d, err := fleetplan.OneTier{Workers: n, JobsPerDay: 1, Shards: k, Assumptions: a}.Plan(capacity.Prices2026)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := fleetplan.ControlPlaneCost(n, k, lease, capacity.Prices2026)
		if err != nil {
			t.Fatal(err)
		}
		if cp.ReadRequestsPerRebalance != 1 || cp.ReadUnitsPerRebalance != 7 {
			t.Fatalf("the model: %d Queries and %.0f units a look, want 1 and 7 (by hand above)", cp.ReadRequestsPerRebalance, cp.ReadUnitsPerRebalance)
		}
		r := runControlPlane(t, s, n, k, lease, 14*time.Second, false)
		if r.failed > 0 {
			t.Errorf("n=%d: %d worker joins failed (first: %s)", n, r.failed, r.firstErr)
		}
		var looks, queries int
		var units float64
		for _, st := range r.stats {
			looks += st.Rebalances
			queries += st.ShardReads
			units += st.ShardReadUnits
		}
		if looks == 0 {
			t.Fatalf("n=%d: no look at the shards in %s", n, r.elapsed)
		}
		if queries != looks {
			t.Errorf("n=%d: %d shard Queries in %d looks, want one each", n, queries, looks)
		}
		perLook := units / float64(looks)
		if perLook > cp.ReadUnitsPerRebalance {
			t.Errorf("n=%d: %.2f read units a look, more than the model's %.0f", n, perLook, cp.ReadUnitsPerRebalance)
		}
		if layer := r.keys["SHARD"].ReadUnits; layer < units-1 || layer > units+float64(n)*cp.ReadUnitsPerRebalance {
			t.Errorf("n=%d: the layer counted %.1f read units on pk = SHARD's partition, the workers reported %.1f (+ at most one cut-off Query each)", n, layer, units)
		}
		// Settled rates: the layer's per-second counts from the 6th second to
		// the last whole one.
		from, to := r.began.Add(5*time.Second).Unix()+1, r.began.Add(r.elapsed).Unix()-1
		var wr, ww float64
		for _, x := range s.Stats() {
			if x.Table == r.table && x.Index == "" && x.Partition == -1 && x.Second.Unix() >= from && x.Second.Unix() < to {
				wr += x.ReadUnits
				ww += x.WriteUnits
			}
		}
		secs := float64(to - from)
		modelReads, modelWrites := 0.0, 0.0
		for _, row := range d.Keys[:2] { // SHARD, MEMBER
			modelReads += row.ReadUnits
			modelWrites += row.WriteUnits
		}
		lookRate := float64(looks) / r.elapsed.Seconds()
		if wr/secs > modelReads {
			t.Errorf("n=%d: %.1f read units a second once settled, more than the model's %.1f", n, wr/secs, modelReads)
		}
		var writeReqs int
		var reportedWU float64
		for _, st := range r.stats {
			writeReqs += st.Writes
			reportedWU += st.TableWU
		}
		if w := r.totals.WriteUnits; w > float64(writeReqs) || w < float64(writeReqs-n-k) {
			t.Errorf("n=%d: the layer counted %.0f write units, the workers counted %d write requests of one unit each (less at most %d the run's end cut off)",
				n, w, writeReqs, n+k)
		}
		t.Logf("n=%d, K=%d, %.1f s: %d looks (%.2f a worker a second, model %.2f), 1 Query and %.2f read units a look (model bound %.0f); "+
			"settled (%0.f s): %.1f read units/s (model %.1f), %.1f write units/s (model %.1f); %d requests in all; workers: %d write requests (%.0f units reported by DynamoDB Local, which reports none for a refused write); layer: %.0f write units",
			n, k, r.elapsed.Seconds(), looks, lookRate/float64(n), 4/lease.Seconds(), perLook, cp.ReadUnitsPerRebalance,
			secs, wr/secs, modelReads, ww/secs, modelWrites, r.totals.Requests, writeReqs, reportedWU, r.totals.WriteUnits)
	}
}

// The two-tier control plane at its true size runs here: seed 003's cell
// is D = 3 dispatchers on K = 14 shards, ten times seed 003's is D = 10 on
// K = 47 a cell (fleetplan's plans, derived by hand in plan_test.go). Run
// as package fleet's shard protocol (shard lease 6 s, a look every 1.5 s,
// shard items aged first, the dispatchers started a second apart as a
// rollout would), through the limits layer at an S that puts the
// model's busiest control-plane key at about half a scaled partition (seed:
// SHARD's 9.3 write units a second against 1,000 / 50 = 20; 10x: 31.3
// against 1,000 / 16 = 62.5): once settled (8 s after the last start) nothing
// throttles, and the rates on pk = SHARD's and pk = MEMBER's partitions
// stay within the model's rows (writes: plus one refused acquire a look).
func TestTwoTierControlPlaneAtItsTrueSizeStaysWithinTheModel(t *testing.T) {
	// Not parallel: it measures request rates through the limits layer,
	// which the package's other rate tests would share with it.
	for _, c := range []struct {
		name   string
		n      int
		jobs   float64
		scale  float64
		wantDK [2]int
	}{
		{"seed 003", 10851, 1e8, 50, [2]int{3, 14}},
		{"ten times seed 003, one cell", 108507, 1e9, 16, [2]int{10, 47}},
	} {
		d, err := fleetplan.TwoTier{Executors: c.n, JobsPerDay: c.jobs, Assumptions: fleetplan.Seed003}.Plan(capacity.Prices2026)
		if err != nil {
			t.Fatal(err)
		}
		if d.DispatchersPerCell != c.wantDK[0] || d.ShardsPerCell != c.wantDK[1] {
			t.Fatalf("%s: %d dispatchers and %d shards a cell, want %v", c.name, d.DispatchersPerCell, d.ShardsPerCell, c.wantDK)
		}
		rows := map[string]fleetplan.KeyRow{}
		for _, r := range d.Keys {
			rows[r.Key] = r
		}
		s, err := limits.Start(context.Background(), ddbtest.Endpoint(t), "", limits.WithScale(c.scale))
		if err != nil {
			t.Fatal(err)
		}
		const stagger = time.Second
		r := runControlPlaneStaggered(t, s, d.DispatchersPerCell, d.ShardsPerCell, fleetplan.Seed003.ShardLease, 30*time.Second, true, stagger)
		samples := s.Stats()
		_ = s.Close()
		// The start is a burst the model does not count: a dispatcher tries
		// to acquire the free shards at its first look (up to K writes in a
		// second on pk = SHARD, limits divided by S but seconds not), so
		// throttles there are logged; once settled, none.
		t.Logf("%s: at the start %d requests throttled (%v), %d joins failed and were started again",
			c.name, r.totals.ThrottledTotal(), r.totals.Throttled, r.failed)
		looks := 0
		for _, st := range r.stats {
			looks += st.Rebalances
		}
		// Settled: from 8 s after the last dispatcher started to the last
		// whole second.
		settle := time.Duration(d.DispatchersPerCell-1)*stagger + 8*time.Second
		from, to := r.began.Add(settle).Unix()+1, r.began.Add(r.elapsed).Unix()-1
		secs := float64(to - from)
		for _, pk := range []string{"SHARD", "MEMBER"} {
			var ru, wu float64
			throttled := 0
			for _, x := range samples {
				if x.Table == r.table && x.Index == "" && x.Partition == r.parts[pk] && x.Second.Unix() >= from && x.Second.Unix() < to {
					ru += x.ReadUnits
					wu += x.WriteUnits
					throttled += x.ThrottledTotal()
				}
			}
			if throttled != 0 {
				t.Errorf("%s: pk = %s's partition throttled %d requests once settled", c.name, pk, throttled)
			}
			m := rows[pk]
			slack := float64(looks) / r.elapsed.Seconds()
			if ru/secs > m.ReadUnits || wu/secs > m.WriteUnits+slack {
				t.Errorf("%s: pk = %s's partition took %.1f read and %.1f write units a second settled; the model's row: %.1f and %.1f (+ %.1f refused acquires at most)",
					c.name, pk, ru/secs, wu/secs, m.ReadUnits, m.WriteUnits, slack)
			}
			t.Logf("%s, D = %d, K = %d, S = %g: pk = %s's partition %.1f read, %.1f write units/s settled (%.0f s); model %.1f read, %.1f write; throttled once settled %d, in all %d",
				c.name, d.DispatchersPerCell, d.ShardsPerCell, c.scale, pk, ru/secs, wu/secs, secs, m.ReadUnits, m.WriteUnits, throttled, r.keys[pk].ThrottledTotal())
		}
	}
}
