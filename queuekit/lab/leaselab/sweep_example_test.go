package leaselab_test

import (
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

// The poll sweep's verdict, from two settings' measured start lags: the
// ranges overlap, so the runs cannot rank the settings (notebook 05).
func ExamplePollVerdict() {
	rows := []leaselab.PollRow{
		{Poll: 5 * time.Millisecond, MeanLag: leaselab.SpreadOf([]float64{0.2, 0.3, 0.9})},
		{Poll: 80 * time.Millisecond, MeanLag: leaselab.SpreadOf([]float64{0.8, 1.1, 1.3})},
	}
	fmt.Println(leaselab.PollVerdict(rows))
	// Output:
	// mean start lag: the 5 ms and 80 ms runs overlap: on this machine, right now, the noise is as large as the poll's effect
}

// Who owns each shard at a moment: a lease that has ended owns nothing
// (notebook 10's takeover tables).
func ExampleOwnerRows() {
	at := time.UnixMilli(5_000)
	for _, r := range leaselab.OwnerRows([]fleet.ShardState{{Shard: 0, Holder: "ann", Token: 1, UntilMS: 6_000}, {Shard: 1, Holder: "bob", Token: 1, UntilMS: 4_000}}, at) {
		fmt.Println(r)
	}
	// Output:
	// [0 ann 1]
	// [1 nobody 1]
}

// The comparison's summary, built from the rows (notebook 10).
func ExampleExecutorSummary() {
	fmt.Print(leaselab.ExecutorSummary([]claimrate.Row{
		{Executor: claimrate.Night, Workers: 4, Median: 40, LostPerWon: 2},
		{Executor: claimrate.FleetOwned, Workers: 4, Median: 1200, Ceiling: 1585},
	}))
	// Output:
	// - 4 workers: the fleet ran **30 times** the night executor's jobs a second (medians 1,200 and 40); the night executor lost 2 claims per claim won.
	// - DynamoDB Local's write ceiling, measured before each fleet round: **1,585** conditional writes a second (median; 1,585 (1,585 to 1,585) over the rounds).
}

// Two workers that sent the same conditions get one line for both.
func ExampleClaimConditions() {
	fmt.Print(leaselab.ClaimConditions([]leaselab.ClaimShown{
		{Worker: "worker-A", JobCondition: "attempt = 0", PoolCondition: "version = 0"},
		{Worker: "worker-B", JobCondition: "attempt = 0", PoolCondition: "version = 0"},
	}))
	// Output:
	// - conditions of worker-A and worker-B's claim: on the job `attempt = 0`; on the pool `version = 0`
}
