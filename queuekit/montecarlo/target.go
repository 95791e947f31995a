package montecarlo

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nightqueue/workshop/queuekit"
)

// Exceeds is the share of values above limit as a probability with its
// Wilson interval: applied to Summary.P95Waits it is P(a night's p95 wait >
// limit), a target judged night by night, which the mean of the p95s is not.
func Exceeds(values []float64, limit float64) Proportion {
	k := 0
	for _, v := range values {
		if v > limit {
			k++
		}
	}
	return Wilson(k, len(values))
}

// HalfWidth is half the width of the interval.
func (i Interval) HalfWidth() float64 { return (i.High - i.Low) / 2 }

// Independent is the comparison Compare would make without common random
// numbers: B − A of the means of two runs with different seeds, with a
// Welch 95% interval. Its width is what the pairing saves.
type Independent struct {
	A, B            Summary
	DiffAverageWait Interval
	DiffP95Wait     Interval
}

// CompareIndependent runs a with a.Seed and b with a.Seed + 1, so that no
// replication of B shares random numbers with one of A, and compares the
// means with Welch's interval: (m_B − m_A) ± t·√(s_A²/n_A + s_B²/n_B), with
// the Welch-Satterthwaite degrees of freedom.
func CompareIndependent(ctx context.Context, night queuekit.Night, a, b Config) (Independent, error) {
	b.Seed = a.Seed + 1
	sa, err := Run(ctx, night, a)
	if err != nil {
		return Independent{}, fmt.Errorf("compare independent: configuration A: %w", err)
	}
	sb, err := Run(ctx, night, b)
	if err != nil {
		return Independent{}, fmt.Errorf("compare independent: configuration B: %w", err)
	}
	return Independent{A: sa, B: sb, DiffAverageWait: welch(sa.AverageWaits, sb.AverageWaits), DiffP95Wait: welch(sa.P95Waits, sb.P95Waits)}, nil
}

// welch is the mean of y minus the mean of x with Welch's 95% interval.
func welch(x, y []float64) Interval {
	if len(x) < 2 || len(y) < 2 {
		d := stat.Mean(y, nil) - stat.Mean(x, nil)
		return Interval{d, d, d}
	}
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	nx, ny := float64(len(x)), float64(len(y))
	ax, ay := vx/nx, vy/ny
	d := my - mx
	if !(ax+ay > 0) {
		return Interval{d, d, d}
	}
	df := (ax + ay) * (ax + ay) / (ax*ax/(nx-1) + ay*ay/(ny-1))
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975) * math.Sqrt(ax+ay)
	return Interval{d, d - h, d + h}
}

// SweepCV runs cfg for each runtime coefficient of variation (lognormal
// runtimes, as LogNormalCV; the model's load and arrival jitter are kept),
// all with cfg.Seed, and returns one summary per CV: how much an answer
// depends on a CV that was assumed, not fitted.
func SweepCV(ctx context.Context, night queuekit.Night, cfg Config, cvs []float64) ([]Summary, error) {
	out := make([]Summary, 0, len(cvs))
	for _, cv := range cvs {
		if !(cv > 0) || cv > MaxCV {
			return nil, fmt.Errorf("sweep CV: %v: want 0 < CV <= %v", cv, MaxCV)
		}
		cc := cfg
		m := LogNormalCV(cv)
		cc.Model.Default, cc.Model.ByClass = m.Default, nil
		s, err := Run(ctx, night, cc)
		if err != nil {
			return nil, fmt.Errorf("sweep CV: %v: %w", cv, err)
		}
		out = append(out, s)
	}
	return out, nil
}
