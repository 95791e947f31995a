package lab_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

// The poll sweep's verdict, from two settings' measured start lags: the
// ranges overlap, so the runs cannot rank the settings (notebook 05).
func ExamplePollVerdict() {
	rows := []lab.PollRow{
		{Poll: 5 * time.Millisecond, MeanLag: lab.SpreadOf([]float64{0.2, 0.3, 0.9})},
		{Poll: 80 * time.Millisecond, MeanLag: lab.SpreadOf([]float64{0.8, 1.1, 1.3})},
	}
	fmt.Println(lab.PollVerdict(rows))
	// Output:
	// mean start lag: the 5 ms and 80 ms runs overlap: on this machine, right now, the noise is as large as the poll's effect
}

// Who owns each shard at a moment: a lease that has ended owns nothing
// (notebook 10's takeover tables).
func ExampleOwnerRows() {
	at := time.UnixMilli(5_000)
	for _, r := range lab.OwnerRows([]fleet.ShardState{{Shard: 0, Holder: "ann", Token: 1, UntilMS: 6_000}, {Shard: 1, Holder: "bob", Token: 1, UntilMS: 4_000}}, at) {
		fmt.Println(r)
	}
	// Output:
	// [0 ann 1]
	// [1 nobody 1]
}

// The comparison's summary, built from the rows (notebook 10).
func ExampleExecutorSummary() {
	fmt.Print(lab.ExecutorSummary([]claimrate.Row{
		{Executor: claimrate.Night, Workers: 4, Median: 40, LostPerWon: 2},
		{Executor: claimrate.FleetOwned, Workers: 4, Median: 1200, Ceiling: 1585},
	}))
	// Output:
	// - 4 workers: the fleet ran **30 times** the night executor's jobs a second (medians 1,200 and 40); the night executor lost 2 claims per claim won.
	// - DynamoDB Local's write ceiling, measured before each fleet round: **1,585** conditional writes a second (median; 1,585 (1,585 to 1,585) over the rounds).
}

// The TTL decision of notebook 06: which candidates may be a week late.
func ExampleTTLSuits() {
	fmt.Println(lab.TTLSuits(lab.TTLJobs))
	// Output:
	// [archive-finished-jobs drop-attempt-records expire-share-link]
}

// Notebook 04's target on the overloaded night: its exclusive jobs alone
// outlast the window, so no worker count meets it (a sweep of 200 nights
// a count keeps the example quick).
func ExampleWorkerTarget_Verdict() {
	night, err := queuekit.SampleNight("2026-05-14")
	if err != nil {
		fmt.Println(err)
		return
	}
	sweep, err := montecarlo.SweepWorkers(context.Background(), night,
		montecarlo.Config{Model: montecarlo.LogNormalCV(0.5), Replications: 200, Seed: 1}, []int{2, 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := lab.WorkerTarget{Limit: 150}
	fmt.Println(t.TargetHeaders()[1], t.TargetRows(sweep)[1][4])
	fmt.Println(strings.Contains(t.Verdict("2026-05-14", night, sweep), "no c up to 4 meets the target"))
	fmt.Println(t.HalfLimitFloor("2026-05-14", sweep))
	// Output:
	// P(p95 > 75 min) no
	// true
	// 2026-05-14: every night's p95 wait is above 75 min at every c swept
}

// Two workers that sent the same conditions get one line for both.
func ExampleClaimConditions() {
	fmt.Print(lab.ClaimConditions([]lab.ClaimShown{
		{Worker: "worker-A", JobCondition: "attempt = 0", PoolCondition: "version = 0"},
		{Worker: "worker-B", JobCondition: "attempt = 0", PoolCondition: "version = 0"},
	}))
	// Output:
	// - conditions of worker-A and worker-B's claim: on the job `attempt = 0`; on the pool `version = 0`
}
