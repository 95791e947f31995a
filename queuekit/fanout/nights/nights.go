// Package nights is the fan-out workload the workshop runs through package
// fanout: one slice per generated night (Keys), each read from the catalog
// and simulated (Source), collated into a capacity report (Combine). It is
// one use of fanout, kept out of it: fanout knows slices, queues and
// results, not nights, the catalog or the simulator.
package nights

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// MaxSlices is the most slices one run fans out: as many as the nights
// workload generates at most.
const MaxSlices = workload.MaxNights

// Keys returns n consecutive batch dates from start: the slices of a
// fan-out over the generated nights, one night each; n is 1 to MaxSlices.
func Keys(start string, n int) ([]string, error) {
	d, err := queuekit.ParseBatchDate(start)
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	if n < 1 || n > MaxSlices {
		return nil, fmt.Errorf("slices = %d: want 1 to %d", n, MaxSlices)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = d.AddDate(0, 0, i).Format(time.DateOnly)
	}
	return keys, nil
}

// Result is one night's capacity figures, a slice's result.
type Result struct {
	BatchDate     string  `json:"batch_date"`
	Jobs          int     `json:"jobs"`
	DrainedMinute float64 `json:"queue_drained_minute"`
	OverflowJobs  int     `json:"overflow_jobs"`
	Utilization   float64 `json:"worker_utilization"`
	P95Wait       float64 `json:"p95_wait_minutes"`
}

// Source is the slice source of the capacity run: it reads the night
// with catalog.QueryNight and simulates it with sim.Run on workers workers.
// A night without jobs is an error (the slice fails): the catalog was not
// seeded with it.
func Source(c *catalog.Catalog, workers int, policy sim.Policy) fanout.Source {
	return fanout.SourceFunc(func(ctx context.Context, p fanout.Pointer) (json.RawMessage, error) {
		n, _, err := c.QueryNight(ctx, p.Key, "")
		if err != nil {
			return nil, err
		}
		if len(n.Jobs) == 0 {
			return nil, fmt.Errorf("night %s has no jobs in %s", p.Key, c.Table())
		}
		r, err := sim.Run(n, sim.Config{Workers: workers, Policy: policy, NoTrace: true})
		if err != nil {
			return nil, fmt.Errorf("simulate night %s: %w", p.Key, err)
		}
		return json.Marshal(Result{BatchDate: p.Key, Jobs: r.Jobs, DrainedMinute: r.DrainedMinute, OverflowJobs: r.OverflowJobs,
			Utilization: round(r.Utilization, 4), P95Wait: round(r.P95Wait, 2)})
	})
}

// Capacity is the collated capacity report of a run over nights.
type Capacity struct {
	Nights          int      `json:"nights"`           // nights simulated
	Jobs            int      `json:"jobs"`             // jobs in them
	OverflowNights  int      `json:"overflow_nights"`  // nights with a job finishing after the cutoff
	OverflowJobs    int      `json:"overflow_jobs"`    // jobs finishing after the cutoff, all nights
	MeanUtilization float64  `json:"mean_utilization"` // mean of the nights' worker utilization
	WorstNight      string   `json:"worst_night"`      // latest drain
	WorstDrained    float64  `json:"worst_drained_minute"`
	MissingNights   []string `json:"missing_nights"` // dead-lettered: not in the figures
}

// Combine is a fanout.Config.Combine (and Collator.Combine) for Source's
// results.
func Combine(done []fanout.SliceResult, dead []string) (json.RawMessage, error) {
	c := Capacity{MissingNights: dead}
	if c.MissingNights == nil {
		c.MissingNights = []string{}
	}
	util := 0.0
	for _, d := range done {
		var r Result
		if err := json.Unmarshal(d.Result, &r); err != nil {
			return nil, fmt.Errorf("slice %d (%s): %w", d.Slice, d.Key, err)
		}
		c.Nights++
		c.Jobs += r.Jobs
		c.OverflowJobs += r.OverflowJobs
		if r.OverflowJobs > 0 {
			c.OverflowNights++
		}
		util += r.Utilization
		if c.WorstNight == "" || r.DrainedMinute > c.WorstDrained {
			c.WorstNight, c.WorstDrained = r.BatchDate, r.DrainedMinute
		}
	}
	if c.Nights > 0 {
		c.MeanUtilization = round(util/float64(c.Nights), 4)
	}
	return json.Marshal(c)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
