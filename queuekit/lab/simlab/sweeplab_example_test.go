package simlab_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lab/simlab"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
	"github.com/nightqueue/workshop/queuekit/sim"
)

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
	t := simlab.WorkerTarget{Limit: 150}
	fmt.Println(t.TargetHeaders()[1], t.TargetRows(sweep)[1][4])
	fmt.Println(strings.Contains(t.Verdict("2026-05-14", night, sweep), "no c up to 4 meets the target"))
	fmt.Println(t.HalfLimitFloor("2026-05-14", sweep))
	// Output:
	// P(p95 > 75 min) no
	// true
	// 2026-05-14: every night's p95 wait is above 75 min at every c swept
}

// The lines under notebook 04's run of 4,000 nights, from a run's figures.
func ExampleNightsSummary() {
	s := montecarlo.Summary{
		AverageWait:         montecarlo.Interval{Mean: 12.34, Low: 12.1, High: 12.6},
		P95Wait:             montecarlo.Interval{Mean: 41.25, Low: 40.5, High: 42},
		OverflowProbability: montecarlo.Proportion{Estimate: 0.0315, Low: 0.0264, High: 0.0375, Successes: 126, Trials: 4000},
	}
	fmt.Print(simlab.NightsSummary(s, "05:00"))
	// Output:
	// mean wait 12.3 min [12.1, 12.6]
	// p95 wait (the night's longest) 41.2 min [40.5, 42.0]
	// P(night ends after 05:00) = 3.15%, 95% Wilson [2.64%, 3.75%] (126 of 4,000 nights)
}

func ExampleScenarioLine() {
	var r sim.Result
	r.Jobs, r.AverageWait, r.P95Wait, r.Utilization, r.OverflowJobs, r.DrainedMinute = 10, 29, 50, 0.611, 1, 372.4
	fmt.Println(simlab.ScenarioLine("2026-05-13", 3, r))
	// Output: 2026-05-13, 3 workers: mean wait 29.00 min, p95 50 min, utilization 61.1%, 1 of 10 jobs after the cutoff, drained at minute 372
}
