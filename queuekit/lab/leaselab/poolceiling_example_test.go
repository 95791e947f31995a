package leaselab_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// The night executor through a layer at S = 50: the night's one partition
// key (batch_date) takes 1,000 / 50 = 20 write units a second, and the
// layer throttles it.
func ExampleRunPoolCeiling() {
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
	r, err := leaselab.RunPoolCeiling(ctx, s, leaselab.PoolCeiling{Jobs: 16, Workers: 2, Slots: 2, Timeout: 15 * time.Second}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("one key's write units a second:", r.LimitPerKey)
	fmt.Println("jobs ended:", r.Ended > 0)
	fmt.Println("throttled on the key:", r.Throttled["TableWriteKeyRangeThroughputExceeded"] > 0)
	// Output:
	// one key's write units a second: 20
	// jobs ended: true
	// throttled on the key: true
}

// The paragraph under notebook 05's pool-ceiling run, from a run's figures:
// at S = 50 a key takes 20 write units a second; 8 units a job predict 2.5
// jobs a second.
func ExamplePoolCeilingSummary() {
	r := leaselab.PoolCeilingResult{Scale: 50, LimitPerKey: 20, UnitsPerJob: 8, PredictedJPS: 2.5, JobsPerSec: 2,
		Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 12}}
	fmt.Println(leaselab.PoolCeilingSummary(r))
	// Output: At S = 50 the night's one key takes 20 write units a second. The run's writes cost **8 units a job** (the layer's count: claims, starts, heartbeats, ends, the pool's and the workers' items), so the prediction is 20 ÷ 8 = **2.5 jobs a second**; the run measured **2** (80.0% of it), 50 times that on AWS (S = 1): 100. The layer throttled `TableWriteKeyRangeThroughputExceeded`: 12.
}
