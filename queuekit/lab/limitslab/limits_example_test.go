package limitslab_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
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
	lab.Chart(limitslab.LimitsChart(samples, "jobs", "", 20))
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
	res, err := limitslab.RunHotLoad(ctx, limitslab.HotLoad{Endpoint: s.URL, Table: table, Seconds: 2, Rate: 150, Shards: 1, MaxAttempts: 1})
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
	runs, err := limitslab.RunShardSweep(ctx, s, limitslab.HotLoad{Table: fmt.Sprintf("example_sweep_%d", time.Now().UnixNano()), Seconds: 2, Rate: 40, MaxAttempts: 1}, []int{1, 8}, nil)
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

// The paragraph under notebook 08's hot-key run, from a run's figures.
func ExampleHotLoadSummary() {
	h := limitslab.HotLoad{Rate: 30}
	res := limitslab.HotLoadResult{Landed: 50, Failed: 2, FailedBy: map[string]int{"TableWriteKeyRangeThroughputExceeded": 2},
		Throughput: 10, P50: 1500 * time.Microsecond, P99: 850 * time.Millisecond}
	tot := limits.Sample{Requests: 140, Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 88}}
	fmt.Println(limitslab.HotLoadSummary(100, h, res, tot))
	// Output: At S = 100 one partition takes 10 write units a second (1,000 / S); the cell offered 30 writes a second to one key, 3 times that. The layer received 140 requests for 50 writes that landed and throttled **88** of them (`TableWriteKeyRangeThroughputExceeded`: 88); the table landed 10 writes a second (1,000 on AWS, S times it). The writes that landed took 1.5 ms at the median and **850 ms at the 99th percentile**: that tail is the retries' backoff. 2 writes failed in the end (`TableWriteKeyRangeThroughputExceeded`: 2).
}

// The paragraph under notebook 08's shard sweep, from a sweep's figures: 30
// writes a second offered at S = 100 (10 a partition) need 3 shards; 4
// keys reached 3 partitions.
func ExampleShardSweepSummary() {
	runs := []limitslab.ShardRun{
		{Shards: 1, Partitions: 1, Result: limitslab.HotLoadResult{Throughput: 10.2}},
		{Shards: 2, Partitions: 2, Result: limitslab.HotLoadResult{Throughput: 19.8}},
		{Shards: 4, Partitions: 3, Result: limitslab.HotLoadResult{Throughput: 29.6}},
		{Shards: 8, Partitions: 4, Result: limitslab.HotLoadResult{Throughput: 30}},
	}
	fmt.Println(limitslab.ShardSweepSummary(runs, 30, 100))
	// Output: One key landed 10.2 writes a second, 8 keys 30 (offered 30, S = 100). The shards needed are offered ÷ limit rounded up = **3**, whatever S is; K = 4 reached 3 partitions.
}
