package fleetplan_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
)

// Seed 003 on two tiers: 3 dispatchers and 14 shards, whatever the number
// of executors, and pk = SHARD read 6 units a second instead of 1.47 M.
func ExampleTwoTier_Plan() {
	d, err := fleetplan.TwoTier{Executors: 10851, JobsPerDay: 1e8, Assumptions: fleetplan.Seed003}.Plan(capacity.Prices2026)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d dispatchers, %d shards, %d queue\n", d.Dispatchers, d.Shards, d.Queues)
	for _, k := range d.Keys {
		fmt.Printf("%-28s %7.1f read %7.1f write units/s\n", k.Key, k.ReadUnits, k.WriteUnits)
	}
	fmt.Printf("$%.2f a day\n", d.USDPerDay.Total)
	// Output:
	// 3 dispatchers, 14 shards, 1 queue
	// SHARD                            6.0 read     9.3 write units/s
	// MEMBER                           0.0 read     2.0 write units/s
	// claim_shard = k (due index)     25.0 read   496.0 write units/s
	// USER#<user_id>                  50.0 read   400.0 write units/s
	// DLQ#<k> (dead letters)           0.0 read   144.7 write units/s
	// $738.66 a day
}

// The executors bind first when there are too few of them for the running
// jobs (Little's law).
func ExampleLimitError() {
	_, err := fleetplan.TwoTier{Executors: 100, JobsPerDay: 1e8, Assumptions: fleetplan.Seed003}.Plan(capacity.Prices2026)
	fmt.Println(err)
	// Output:
	// binding limit: executor slots: 347223 needed, 3200 available; 1157.4 jobs a second of 300 s each keep 347223 running at once (Little's law), 100 executors x 32 slots hold 3200: use at least 10851 executors
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
	p, err := fleetplan.Project(l, 1.6)
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
	fmt.Println(fleetplan.IndexWritesPerJob(0), fleetplan.IndexWritesPerJob(2))
	// Output: 4 8
}
