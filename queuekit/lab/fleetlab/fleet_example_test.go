package fleetlab_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

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
	runs, err := fleetlab.RunFleetSweep(ctx, s, fleetlab.FleetSweep{Table: fmt.Sprintf("example_fleet_%d", time.Now().UnixNano()%1e6), JobsPerShard: 4, Shards: []int{1, 4}}, nil)
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
	runs, err := fleetlab.RunPeakStart(ctx, s, fleetlab.PeakStart{Offered: 20000, Seconds: 2, Warm: []int64{0, 40000}}, nil)
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
	r, err := fleetlab.ControlPlane{Name: "two tiers, D = 2", Workers: 2, Shards: 16, Run: 4 * time.Second}.Execute(ctx, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: throttled %d; SHARD and MEMBER on different partitions: %v\n", r.Name, r.Totals.ThrottledTotal(),
		r.Key("SHARD").Partition != r.Key("MEMBER").Partition)
	// Output:
	// two tiers, D = 2: throttled 0; SHARD and MEMBER on different partitions: true
}
