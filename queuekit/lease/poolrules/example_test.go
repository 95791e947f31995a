package poolrules_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/lease/poolrules"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// A recorded schedule (here the simulator's own, as attempts) is checked
// against the pool's rules and its metrics recomputed, the way notebook 05
// treats a real run.
func ExampleCheck() {
	night, _ := queuekit.SampleNight("2026-05-13")
	forecast, _ := sim.Run(night, sim.Config{Workers: 3, Policy: sim.Barrier})
	var attempts []lease.Entry
	for _, s := range forecast.Schedule {
		attempts = append(attempts, lease.Entry{Slot: s, Attempt: 1})
	}
	fmt.Println("rules broken:", poolrules.Check(night, attempts, 3, sim.Barrier))
	r := lease.Realise(night, attempts, 3, sim.Barrier)
	for _, d := range lease.Compare(forecast.Metrics, r.Metrics)[:2] {
		fmt.Printf("%s: forecast %.2f, realised %.2f\n", d.Metric, d.Forecast, d.Realised)
	}
	// Output:
	// rules broken: <nil>
	// average wait (min): forecast 29.00, realised 29.00
	// p95 wait (min): forecast 50.00, realised 50.00
}
