package nights_test

import (
	"encoding/json"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
)

// A fan-out over nights has one slice per night.
func ExampleKeys() {
	keys, err := nights.Keys("2025-05-30", 4)
	if err != nil {
		panic(err)
	}
	fmt.Println(keys)
	// Output: [2025-05-30 2025-05-31 2025-06-01 2025-06-02]
}

// Combine collates the nights' results into a capacity report and
// names the nights the dead-letter queue kept out of it.
func ExampleCombine() {
	night := func(date string, jobs, late int, drained, util float64) json.RawMessage {
		b, _ := json.Marshal(nights.Result{BatchDate: date, Jobs: jobs, OverflowJobs: late, DrainedMinute: drained, Utilization: util})
		return b
	}
	out, err := nights.Combine([]fanout.SliceResult{
		{Slice: 0, Key: "2025-05-11", Result: night("2025-05-11", 10, 0, 200, 0.8)},
		{Slice: 2, Key: "2025-05-13", Result: night("2025-05-13", 12, 3, 300, 0.9)},
	}, []string{"2025-05-12"})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"nights":2,"jobs":22,"overflow_nights":1,"overflow_jobs":3,"mean_utilization":0.85,"worst_night":"2025-05-13","worst_drained_minute":300,"missing_nights":["2025-05-12"]}
}
