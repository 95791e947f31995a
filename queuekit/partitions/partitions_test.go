package partitions_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/partitions"
)

// Seed 003's rate: 10⁸ jobs / 86,400 s = 1,157.407 jobs/s; 4 writes of a
// 1 KB job item each (submit, CLAIMED, PROCESSING, final).
const lambda = 100e6 / 86400

func TestDayLoad(t *testing.T) {
	bd, err := partitions.DayLoad(100e6, 1, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	// batch_date: one key takes 4 × 1,157.407 = 4,629.6 WCU/s: 4.63 × the limit.
	if bd.KeysPerDay != 1 || math.Abs(bd.HottestKeyWCU-4*lambda) > 1e-9 || math.Abs(bd.TimesOverLimit-4*lambda/1000) > 1e-12 {
		t.Errorf("batch_date: %+v", bd)
	}
	// 8 shards of the due minute: 1,440 × 8 = 11,520 keys a day, the hottest
	// 4,629.6/8 = 578.7 WCU/s, under the limit.
	sh, err := partitions.DayLoad(100e6, 1, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	if sh.KeysPerDay != 11520 || math.Abs(sh.HottestKeyWCU-4*lambda/8) > 1e-9 || sh.TimesOverLimit >= 1 {
		t.Errorf("8 shards: %+v", sh)
	}
	if _, err := partitions.DayLoad(0, 1, 4, 0); err == nil {
		t.Error("0 jobs: want an error")
	}
}

func TestShardSpreadsJobIDs(t *testing.T) {
	counts := make([]int, 16)
	for i := range 16000 {
		counts[partitions.Shard(fmt.Sprintf("JOB-%08d", i+1), 16)]++
	}
	// Each shard expects 1,000 with binomial sd √(16000·(1/16)·(15/16)) = 30.6;
	// every count within 5 sd.
	for s, c := range counts {
		if math.Abs(float64(c)-1000) > 5*30.6 {
			t.Errorf("shard %d holds %d of 16,000, want 1,000 ± 153", s, c)
		}
	}
}

func TestSampleOnDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	c := ddbtest.Catalog(t, catalog.WithItemKeys(partitions.AttrPK, partitions.AttrSK))
	// One second of seed 003's traffic: 1,157 jobs.
	res, err := partitions.Sample(ctx, c, 1157, []int{4, 16}, lambda, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d designs, want 3", len(res))
	}
	bd := res[0]
	if bd.Shards != 0 || len(bd.PerKey) != 1 || bd.PerKey[0].Items != 1157 || bd.MaxItems != 1157 {
		t.Errorf("batch_date: %+v", bd)
	}
	// All the second's writes on one key: 4 × 1,157.4 = 4,629.6 WCU/s.
	if math.Abs(bd.HottestKeyWCU-4*lambda) > 1e-9 {
		t.Errorf("batch_date hottest key %v WCU/s, want %v", bd.HottestKeyWCU, 4*lambda)
	}
	for _, r := range res[1:] {
		sum := 0
		for _, k := range r.PerKey {
			sum += k.Items
		}
		if len(r.PerKey) != r.Shards || sum != 1157 {
			t.Errorf("%s: %d keys holding %d items, want %d keys holding 1157", r.Design, len(r.PerKey), sum, r.Shards)
		}
		// The hash is not perfectly even, but no key holds twice its share.
		if r.Imbalance() < 1 || r.Imbalance() > 2 {
			t.Errorf("%s: imbalance %.2f, want in [1, 2]", r.Design, r.Imbalance())
		}
		if want := float64(r.MaxItems) / 1157 * lambda * 4; math.Abs(r.HottestKeyWCU-want) > 1e-9 {
			t.Errorf("%s: hottest %v WCU/s, want %v", r.Design, r.HottestKeyWCU, want)
		}
	}
}

func TestScatterGatherOnDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	c := ddbtest.Catalog(t, catalog.WithItemKeys(partitions.AttrPK, partitions.AttrSK))
	calls := 0
	pts, err := partitions.ScatterGather(ctx, c, partitions.GatherConfig{Shards: []int{1, 4, 16}, Items: 200, Runs: 2,
		Progress: func(queuekit.Progress) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 || calls != 6 {
		t.Fatalf("%d points, %d progress calls; want 3 and 6", len(pts), calls)
	}
	for _, p := range pts {
		t.Logf("%2d shards: median %v (min %v, max %v), %d requests, %.1f RCU", p.Shards, p.Elapsed, p.Min, p.Max, p.Requests, p.RCU)
		// Every shard is one Query (a few KB, far under the 1 MB page).
		if p.Items != 200 || p.Requests != p.Shards || p.Min > p.Elapsed || p.Elapsed > p.Max {
			t.Errorf("%d shards: %+v", p.Shards, p)
		}
		// Each Query costs at least half a read unit.
		if p.RCU < 0.5*float64(p.Shards) {
			t.Errorf("%d shards: %v RCU, want at least %v", p.Shards, p.RCU, 0.5*float64(p.Shards))
		}
	}
	// Rounding each Query up to 4 KB: 16 small Queries cost more than one.
	if pts[2].RCU <= pts[0].RCU {
		t.Errorf("16 shards %v RCU, 1 shard %v: sharding should cost more read units", pts[2].RCU, pts[0].RCU)
	}
	if _, err := partitions.ScatterGather(ctx, c, partitions.GatherConfig{Shards: []int{0}}); err == nil {
		t.Error("0 shards: want an error")
	}
}

func ExampleDayLoad() {
	for _, shards := range []int{0, 8} {
		l, err := partitions.DayLoad(100_000_000, 1, 4, shards)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: keys a day %d, hottest %.0f WCU/s (%.2f × the limit)\n", l.Design, l.KeysPerDay, l.HottestKeyWCU, l.TimesOverLimit)
	}
	// Output:
	// batch_date: keys a day 1, hottest 4630 WCU/s (4.63 × the limit)
	// due minute # 8 shards: keys a day 11520, hottest 579 WCU/s (0.58 × the limit)
}

// The lifecycle measured on DynamoDB Local costs what queuekit/capacity's
// DefaultLifecycle says: 4 table writes (submit, claim, start, finish: each a
// ~1,000-byte item, one write unit), 2 index writes (the put adds the job to
// the sparse index, the claim removes its key), a poll of 25 items of 1,000
// bytes = 25,000 bytes, ⌈25,000/4,096⌉ = 7 blocks × ½ = 3.5 read units, and an
// eventually consistent GetItem of ½ unit.
func TestLifecycleOnDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	c := ddbtest.Catalog(t, catalog.WithItemKeys("job_id", ""), catalog.WithIndex(partitions.DueIndex, "due_shard", "due_at"))
	steps, err := partitions.Lifecycle(ctx, c, "t1", 25)
	if err != nil {
		t.Fatal(err)
	}
	var table, index, reads float64
	for _, s := range steps {
		t.Logf("%-60s table %.1f index %.1f read %.1f", s.Name, s.TableWCU, s.IndexWCU, s.RCU)
		table, index, reads = table+s.TableWCU, index+s.IndexWCU, reads+s.RCU
	}
	l := capacity.DefaultLifecycle
	if table != l.TableWriteUnits() || index != l.IndexWriteUnits() {
		t.Errorf("measured %v table + %v index write units, model %v + %v", table, index, l.TableWriteUnits(), l.IndexWriteUnits())
	}
	if len(steps) != 6 || steps[1].RCU != 3.5 || steps[5].RCU != 0.5 {
		t.Errorf("reads: poll %v, view %v; want 3.5 and 0.5", steps[1].RCU, steps[5].RCU)
	}
	// Per job, the poll's share is 3.5/25 = 0.14 and the whole read side 0.64.
	if got := steps[1].RCU/25 + steps[5].RCU; math.Abs(got-l.ReadUnits()) > 1e-12 {
		t.Errorf("read units per job %v, model %v", got, l.ReadUnits())
	}
	// The same run id again re-submits the same jobs: the same figures.
	again, err := partitions.Lifecycle(ctx, c, "t1", 25)
	if err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		if again[i] != steps[i] {
			t.Errorf("rerun step %d: %+v, first run %+v", i, again[i], steps[i])
		}
	}
	if _, err := partitions.Lifecycle(ctx, c, "t2", 0); err == nil {
		t.Error("poll batch 0: want an error")
	}
}
