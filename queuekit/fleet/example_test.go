package fleet_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
)

// Every worker computes the same assignment from the live members, sorted:
// shard k goes to member k mod n.
func ExampleAssign() {
	members := []string{"w1", "w2", "w3"}
	for _, m := range members {
		fmt.Println(m, fleet.Assign(members, 8, m))
	}
	fmt.Println("w2 gone:", fleet.Assign([]string{"w1", "w3"}, 8, "w3"))
	// Output:
	// w1 [0 3 6]
	// w2 [1 4 7]
	// w3 [2 5]
	// w2 gone: [1 3 5 7]
}

// Seed 003's day with the fleet's lifecycle: 3 table writes and 4 index
// writes per job (1 KB items). At 1,157.4 jobs/s the index takes 4 × 1,157.4
// = 4,629.6 write units a second: ⌈4.63⌉ = 5 shards of 1,000; at a peak of
// 1.6 × that, 7,407.4: 8 shards. On demand for 100 M jobs: writes 7 ×
// 100 M × $0.625/M = $437.50; reads (a status read, ½ unit, and a share
// of a 25-item poll, ½ × ⌈25/4⌉ / 25 = 0.14 unit) 0.64 × 100 M × $0.125/M =
// $8.00; $445.50 in all.
func ExampleProject() {
	l := capacity.DefaultLifecycle
	l.StateWrites, l.IndexWrites = 3, 4
	p, err := fleet.Project(l, 1.6)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.1f jobs/s: %d shards on average, %d at a peak of %.1f×; %.0f write units a job; $%.2f a day on demand\n",
		p.JobsPerSecond, p.ShardsAverage, p.ShardsPeak, p.PeakFactor, p.WriteUnitsPerJob, p.OnDemandUSDPerDay)
	// Output:
	// 1157.4 jobs/s: 5 shards on average, 8 at a peak of 1.6×; 7 write units a job; $445.50 a day on demand
}

// A job's index writes grow by two with every heartbeat.
func ExampleIndexWritesPerJob() {
	fmt.Println(fleet.IndexWritesPerJob(0), fleet.IndexWritesPerJob(2))
	// Output: 4 8
}
