package lab_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// A layer's counters, charted: units consumed and throttles by reason,
// one point a second, S in the title.
func ExampleLimitsChart() {
	t0 := time.Date(2026, 5, 13, 1, 0, 0, 0, time.UTC)
	samples := []limits.Sample{
		{Second: t0, Table: "jobs", Partition: -1, WriteUnits: 50, Requests: 80, Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 30}},
		{Second: t0.Add(time.Second), Table: "jobs", Partition: -1, WriteUnits: 50, Requests: 55, Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 5}},
		{Second: t0.Add(2 * time.Second), Table: "jobs", Partition: -1, WriteUnits: 20, ReadUnits: 3, Requests: 21},
	}
	lab.Chart(lab.LimitsChart(samples, "jobs", "", 20))
	// Output:
	// jobs per second (limits divided by S = 20)
	// second  write units consumed  read units consumed  throttled: TableWriteKeyRangeThroughputExceeded
	// ------  --------------------  -------------------  -----------------------------------------------
	//      0                    50                    0                                               30
	//      1                    50                    0                                                5
	//      2                    20                    3                                                0
}

// A hot-partition write load through a layer: one key, more writes a
// second than a partition takes at S = 20, no retries. What landed and
// what was throttled add up to what was offered.
func ExampleRunHotLoad() {
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	s, err := limits.Start(ctx, ep, "", limits.WithScale(20))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	table := fmt.Sprintf("example_hot_%d", time.Now().UnixNano())
	res, err := lab.RunHotLoad(ctx, lab.HotLoad{Endpoint: s.URL, Table: table, Seconds: 2, Rate: 150, Shards: 1, MaxAttempts: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("offered:", res.Offered)
	fmt.Println("landed + failed = offered:", res.Landed+res.Failed == res.Offered)
	fmt.Println("some throttled by the partition:", res.FailedBy["TableWriteKeyRangeThroughputExceeded"] > 0)
	// Output:
	// offered: 300
	// landed + failed = offered: true
	// some throttled by the partition: true
}

// Write sharding on a layer at S = 100: one key takes at most 10 write units
// a second (1,000 / 100), so 40 writes a second on one key throttle, and
// spreading them over 8 keys lets the table take more of them. No retries,
// so every throttled request is a failed write.
func ExampleRunShardSweep() {
	ctx := context.Background()
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := limits.Start(ctx, ep, "", limits.WithScale(100))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	runs, err := lab.RunShardSweep(ctx, s, lab.HotLoad{Table: fmt.Sprintf("example_sweep_%d", time.Now().UnixNano()), Seconds: 2, Rate: 40, MaxAttempts: 1}, []int{1, 8}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	one, eight := runs[0], runs[1]
	fmt.Println("1 shard, throttled by the key's partition:", one.Throttled["TableWriteKeyRangeThroughputExceeded"] > 0)
	fmt.Println("every throttled request a failed write:", one.ThrottledTotal() == one.Result.Failed)
	fmt.Println("8 shards land more:", eight.Result.Landed > one.Result.Landed)
	fmt.Println("1 shard writes one partition:", one.Partitions == 1)
	// Output:
	// 1 shard, throttled by the key's partition: true
	// every throttled request a failed write: true
	// 8 shards land more: true
	// 1 shard writes one partition: true
}

// The real fleet through a layer at S = 50, at 1 and 4 shards: each run's
// due index has the 4 partitions of a new on-demand table; one shard writes
// one of them, and the 4 shard keys hash onto 3 of the 4 (two share one:
// the layer's hash is fixed, so this is the same on every run).
func ExampleRunFleetSweep() {
	ctx := context.Background()
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := limits.Start(ctx, ep, "", limits.WithScale(50))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	runs, err := lab.RunFleetSweep(ctx, s, lab.FleetSweep{Table: fmt.Sprintf("example_fleet_%d", time.Now().UnixNano()%1e6), JobsPerShard: 4, Shards: []int{1, 4}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		fmt.Printf("%d shards: %d of %d jobs SUCCESS, index partitions written %d of %d\n", r.Shards, r.Report.Succeeded, r.Report.Jobs, r.PartitionsWritten, r.IndexPartitions)
	}
	// Output:
	// 1 shards: 4 of 4 jobs SUCCESS, index partitions written 1 of 4
	// 4 shards: 16 of 16 jobs SUCCESS, index partitions written 3 of 4
}

// A new on-demand table and one warmed to 40,000 write units a second,
// offered 20,000 for 2 s at S = 500.
func ExampleRunPeakStart() {
	ctx := context.Background()
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := limits.Start(ctx, ep, "", limits.WithScale(500))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	runs, err := lab.RunPeakStart(ctx, s, lab.PeakStart{Offered: 20000, Seconds: 2, Warm: []int64{0, 40000}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("partitions:", runs[0].Partitions, "and", runs[1].Partitions)
	fmt.Println("the new table throttled:", runs[0].Throttled["TableWriteKeyRangeThroughputExceeded"] > 0)
	fmt.Println("the warm table landed more:", runs[1].Result.Landed > runs[0].Result.Landed)
	// Output:
	// partitions: 4 and 40
	// the new table throttled: true
	// the warm table landed more: true
}

// The two-tier design's control plane (2 dispatchers on 16 shard items,
// shard lease 2 s) through a layer at S = 22, where the one tier's 64
// workers throttle (TestControlPlanesOneTierThrottlesTheDispatchersDoNot):
// nothing throttles, and pk = SHARD and pk = MEMBER live on different
// partitions of the table (the layer's hash is fixed).
func ExampleControlPlane() {
	ctx := context.Background()
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := limits.Start(ctx, ep, "", limits.WithScale(22))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	r, err := lab.ControlPlane{Name: "two tiers, D = 2", Workers: 2, Shards: 16, Run: 4 * time.Second}.Execute(ctx, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: throttled %d; SHARD and MEMBER on different partitions: %v\n", r.Name, r.Totals.ThrottledTotal(),
		r.Key("SHARD").Partition != r.Key("MEMBER").Partition)
	// Output:
	// two tiers, D = 2: throttled 0; SHARD and MEMBER on different partitions: true
}
