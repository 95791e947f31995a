package simlab_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lab/simlab"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
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
