package fanoutlab

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

// SliceList lists slice numbers as "3, 17", or "none".
func SliceList(s []int) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = format.Int(n)
	}
	return strings.Join(parts, ", ")
}

// FanOutHeaders are the columns of FanOutRow.
var FanOutHeaders = []string{"slices", "processed", "dead-lettered", "redelivered", "nights in the report", "nights overflowing", "late jobs", "mean utilization", "worst night"}

// FanOutRow is a fan-out run's counts and its capacity report (the
// collator's result) as one table row.
func FanOutRow(out fanout.Outcome) ([]string, error) {
	var c nights.Capacity
	if err := json.Unmarshal(out.Result, &c); err != nil {
		return nil, fmt.Errorf("read the run's capacity report: %w", err)
	}
	return []string{format.Int(out.Slices), format.Int(out.Processed), SliceList(out.DeadLettered), format.Int(out.Stats.Redelivered),
		format.Int(c.Nights), format.Int(c.OverflowNights), format.Int(c.OverflowJobs), format.Percent(c.MeanUtilization), c.WorstNight}, nil
}

// ShowFanOut shows FanOutRow as a table.
func ShowFanOut(out fanout.Outcome) {
	row, err := FanOutRow(out)
	lab.Stop(err)
	lab.ShowTable(FanOutHeaders, [][]string{row})
}

// FlakySlices is a fan-out's Fail function: slice poison always fails, any
// other slice fails on each receive with probability p.
func FlakySlices(p float64, poison int) func(fanout.Pointer) error {
	return func(ptr fanout.Pointer) error {
		if ptr.Slice == poison {
			return fmt.Errorf("slice %d: the night's partition is corrupt", ptr.Slice)
		}
		if rand.Float64() < p {
			return fmt.Errorf("slice %d: the source is briefly unavailable", ptr.Slice)
		}
		return nil
	}
}

// SliceRuntimes draws n runtimes of notebook 07's slice type: lognormal
// with median 1 s and σ = 0.5, from the seeded stream (seed, stream).
func SliceRuntimes(seed, stream uint64, n int) []time.Duration {
	r := rand.New(rand.NewPCG(seed, stream))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(math.Exp(0.5*r.NormFloat64()) * float64(time.Second))
	}
	return out
}

// Outliving counts the runtimes longer than timeout.
func Outliving(runtimes []time.Duration, timeout time.Duration) int {
	n := 0
	for _, d := range runtimes {
		if d > timeout {
			n++
		}
	}
	return n
}

// ShowRuntimePercentiles shows a history of runtimes as its count, p50,
// p90, p95, p99 and longest, in seconds.
func ShowRuntimePercentiles(label string, runtimes []time.Duration) {
	xs := make([]float64, len(runtimes))
	for i, d := range runtimes {
		xs[i] = d.Seconds()
	}
	row := []string{format.Int(len(xs))}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 1} {
		row = append(row, fmt.Sprintf("%.2f s", leaselab.Percentile(xs, q)))
	}
	lab.ShowTable([]string{label, "p50", "p90", "p95", "p99", "longest"}, [][]string{row})
}

// SlowSource wraps a fan-out's source so that slice i takes runtimes[i]
// before its work (ctx cancels the wait).
func SlowSource(src fanout.Source, runtimes []time.Duration) fanout.Source {
	return fanout.SourceFunc(func(ctx context.Context, p fanout.Pointer) (json.RawMessage, error) {
		if p.Slice >= 0 && p.Slice < len(runtimes) {
			select {
			case <-time.After(runtimes[p.Slice]):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return src.Process(ctx, p)
	})
}
