package leaselab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Two workers raced for one job: the rows notebook 05 shows, and the count
// of winners it checks.
func ExampleClaimRows() {
	shown := []leaselab.ClaimShown{
		{Worker: "worker-A", JobID: "JOB-20260513-003", Won: true, JobCondition: "attempt = 0", PoolCondition: "version = 0"},
		{Worker: "worker-B", JobID: "JOB-20260513-003", Reasons: []string{"ConditionalCheckFailed", "ConditionalCheckFailed", "None"},
			JobCondition: "attempt = 0", PoolCondition: "version = 0"},
	}
	for _, r := range leaselab.ClaimRows(shown) {
		fmt.Println(r[0], r[2])
	}
	fmt.Println("winners:", leaselab.Winners(shown))
	// Output:
	// worker-A won
	// worker-B lost: ConditionalCheckFailed, ConditionalCheckFailed, None
	// winners: 1
}

// A run's forecast beside what it realised, a row per metric; here the
// simulator's own schedule stands in for the run, so every difference is 0.
func ExampleCompareRows() {
	night, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	forecast, err := sim.Run(night, sim.Config{Workers: 3, Policy: sim.Barrier})
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := leaselab.CompareRows(lease.Report{Forecast: forecast, Realised: forecast})
	fmt.Println(leaselab.CompareHeaders)
	fmt.Println(rows[0])
	// Output:
	// [metric forecast (sim) realised difference]
	// [average wait (min) 29 29 0]
}
