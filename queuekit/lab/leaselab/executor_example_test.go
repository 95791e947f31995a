package leaselab_test

import (
	"fmt"
	"time"

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

func ExampleRunSummary() {
	rep := lease.Report{Statuses: map[queuekit.Status]int{queuekit.StatusSuccess: 10}, Schedule: make([]lease.Entry, 12), Won: 12, Lost: 3, Retries: 1, LostAttempts: 1}
	fmt.Println(leaselab.RunSummary(rep, 4250*time.Millisecond))
	// Output: 10 jobs ended in 4.2 s of wall time; attempts 12; claims won 12, lost 3; retries 1; lost attempts 1
}

// A 2 ms round trip allows 500 conditional writes a second; four jobs a
// claim make the pool's ceiling 500 / 1.25 = 400 jobs a second.
func ExamplePoolBoundSummary() {
	fmt.Println(leaselab.PoolBoundSummary(2*time.Millisecond, 4, 400))
	// Output: one conditional write: **2 ms** round trip, so 1 / r = 500 writes a second; the pool's ceiling with k = 4: 500 / (1 + 1/4) = **400 jobs a second**
}
