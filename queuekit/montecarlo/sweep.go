package montecarlo

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
)

// Comparison is a paired comparison of two configurations run with common
// random numbers: replication r of A and of B saw the same runtimes, so the
// per-replication differences B − A carry the effect, not the noise.
type Comparison struct {
	A, B Summary
	// DiffAverageWait and DiffP95Wait are B − A with 95% t intervals over the
	// paired differences.
	DiffAverageWait Interval
	DiffP95Wait     Interval
	DiffDrained     Interval
	// OnlyAOverflows and OnlyBOverflows count replications where exactly one
	// configuration overflowed (the discordant pairs of McNemar's test).
	OnlyAOverflows, OnlyBOverflows int
}

// Compare runs a and b on the same night with the same seed (a's seed is
// used for both) and pairs their replications.
func Compare(ctx context.Context, night queuekit.Night, a, b Config) (Comparison, error) {
	b.Seed = a.Seed
	if a.Replications != b.Replications {
		return Comparison{}, fmt.Errorf("compare: %d vs %d replications: a paired comparison needs the same number", a.Replications, b.Replications)
	}
	sa, err := Run(ctx, night, a)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: configuration A: %w", err)
	}
	sb, err := Run(ctx, night, b)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: configuration B: %w", err)
	}
	diff := func(x, y []float64) Interval {
		d := make([]float64, len(x))
		for i := range x {
			d[i] = y[i] - x[i]
		}
		return MeanCI(d)
	}
	c := Comparison{A: sa, B: sb,
		DiffAverageWait: diff(sa.AverageWaits, sb.AverageWaits),
		DiffP95Wait:     diff(sa.P95Waits, sb.P95Waits),
		DiffDrained:     diff(sa.DrainedMinutes, sb.DrainedMinutes),
	}
	for i := range sa.Overflowed {
		switch {
		case sa.Overflowed[i] && !sb.Overflowed[i]:
			c.OnlyAOverflows++
		case sb.Overflowed[i] && !sa.Overflowed[i]:
			c.OnlyBOverflows++
		}
	}
	return c, nil
}

// SweepWorkers runs cfg for each worker count, all with cfg.Seed (common
// random numbers), and returns one summary per count in the given order.
func SweepWorkers(ctx context.Context, night queuekit.Night, cfg Config, workers []int) ([]Summary, error) {
	out := make([]Summary, 0, len(workers))
	for _, c := range workers {
		cc := cfg
		cc.Workers = c
		s, err := Run(ctx, night, cc)
		if err != nil {
			return nil, fmt.Errorf("sweep workers: c=%d: %w", c, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// SweepLoad runs cfg for each load multiplier (every runtime scaled by it),
// all with cfg.Seed, and returns one summary per multiplier.
func SweepLoad(ctx context.Context, night queuekit.Night, cfg Config, loads []float64) ([]Summary, error) {
	out := make([]Summary, 0, len(loads))
	for _, l := range loads {
		if !(l > 0) {
			return nil, fmt.Errorf("sweep load: multiplier %v: must be > 0", l)
		}
		cc := cfg
		cc.Model.Load = l
		s, err := Run(ctx, night, cc)
		if err != nil {
			return nil, fmt.Errorf("sweep load: x%.2f: %w", l, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Smallest returns the first summary meeting ok, in sweep order, and whether
// one did: e.g. the fewest workers with p95 wait under 30 minutes and an
// overflow probability under 5%.
func Smallest(sweep []Summary, ok func(Summary) bool) (Summary, bool) {
	for _, s := range sweep {
		if ok(s) {
			return s, true
		}
	}
	return Summary{}, false
}
