// Package montecarlo runs many replications of a night with random runtimes
// (and optionally jittered arrivals) and summarises them with confidence
// intervals: Student t for means, Wilson for the overflow probability.
//
// # Randomness
//
// Replication r draws from its own PCG stream seeded by (Seed, r), and draws
// for the jobs in catalog order before it simulates. So:
//
//   - results are identical for a given seed whatever GOMAXPROCS or
//     Parallelism is: replications are independent and aggregated in order;
//   - two configurations run with the same seed see the same runtimes in
//     replication r: common random numbers, which turn "c=2 or c=3?" into a
//     paired comparison with a far narrower interval than two independent runs.
//
// # Runtime models
//
// A job's runtime has mean equal to its estimate times the load multiplier.
// Deterministic uses the mean; Exponential has CV 1; LogNormal takes the
// coefficient of variation CV: σ² = ln(1+CV²), μ = ln(mean) − σ²/2.
//
// # Overflow probability
//
// A single deterministic run gives the overflow fraction (jobs finishing late
// over jobs); across replications the package estimates the probability that
// the night's work finishes after the cutoff, P(drained > cutoff), with a
// Wilson score interval, which stays inside [0, 1] and behaves at 0 and 1.
package montecarlo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Dist is a runtime distribution family.
type Dist string

// Runtime distribution families.
const (
	Deterministic Dist = "deterministic"
	Exponential   Dist = "exponential"
	LogNormal     Dist = "lognormal"
)

// MaxCV bounds the lognormal coefficient of variation: beyond it the
// distribution's draws underflow to zero or overflow, and no real runtime
// varies that much.
const MaxCV = 100

// MaxReplications bounds Config.Replications: every replication keeps its
// metrics (about 100 bytes) for the intervals and paired comparisons, so ten
// million already take a gigabyte.
const MaxReplications = 10_000_000

// Runtime describes how a job's actual runtime varies around its estimate.
type Runtime struct {
	Dist Dist
	CV   float64 // coefficient of variation, for LogNormal
}

// Model describes the randomness of a night.
type Model struct {
	Default Runtime            // for classes without an entry in ByClass; zero value: deterministic
	ByClass map[string]Runtime // by workload class
	// ArrivalJitter delays each arrival by a uniform draw in [0, ArrivalJitter) minutes.
	ArrivalJitter float64
	// Load multiplies every runtime, estimated and actual (0 means 1): a
	// load sweep asks "what if every job took 20% longer?".
	Load float64
}

// LogNormalCV is a model where every class has lognormal runtimes with the given CV.
func LogNormalCV(cv float64) Model { return Model{Default: Runtime{Dist: LogNormal, CV: cv}} }

func (m Model) runtime(class string) Runtime {
	if r, ok := m.ByClass[class]; ok {
		return r
	}
	return m.Default
}

func (m Model) validate() error {
	check := func(name string, r Runtime) error {
		switch r.Dist {
		case "", Deterministic, Exponential:
		case LogNormal:
			if !(r.CV >= 0) || r.CV > MaxCV {
				return fmt.Errorf("%s: lognormal CV = %v: must be a number from 0 to %v", name, r.CV, float64(MaxCV))
			}
		default:
			return fmt.Errorf("%s: unknown runtime distribution %q: use deterministic, exponential or lognormal", name, r.Dist)
		}
		return nil
	}
	if err := check("default runtime", m.Default); err != nil {
		return err
	}
	for c, r := range m.ByClass {
		if err := check("class "+c, r); err != nil {
			return err
		}
	}
	if !(m.ArrivalJitter >= 0) || math.IsInf(m.ArrivalJitter, 0) {
		return fmt.Errorf("arrival jitter = %v minutes: must be finite and >= 0", m.ArrivalJitter)
	}
	if !(m.Load >= 0) || math.IsInf(m.Load, 0) {
		return fmt.Errorf("load multiplier = %v: must be a positive number", m.Load)
	}
	return nil
}

// Config sets up a Monte Carlo study of one night.
type Config struct {
	Workers      int
	Policy       sim.Policy // "" means barrier
	Model        Model
	Replications int
	Seed         uint64
	// Parallelism is how many goroutines run replications (0: GOMAXPROCS).
	// It changes speed, never results.
	Parallelism int
	// Progress, if set, is called with the finished replications (Done) of
	// Replications (Total), from one goroutine at a time, at most about 100
	// times a run.
	Progress func(queuekit.Progress)
}

// Interval is a mean with a 95% confidence interval.
type Interval struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"ci95_low"`
	High float64 `json:"ci95_high"`
}

// Proportion is an estimated probability with a 95% Wilson score interval.
type Proportion struct {
	Estimate  float64 `json:"estimate"`
	Low       float64 `json:"wilson95_low"`
	High      float64 `json:"wilson95_high"`
	Successes int     `json:"events"`
	Trials    int     `json:"trials"`
}

// Summary aggregates the replications of one configuration.
type Summary struct {
	BatchDate           string     `json:"batch_date,omitempty"`
	Workers             int        `json:"workers"`
	Policy              sim.Policy `json:"policy"`
	Load                float64    `json:"load"`
	Replications        int        `json:"replications"`
	AverageWait         Interval   `json:"average_wait_minutes"`
	P95Wait             Interval   `json:"p95_wait_minutes"`
	AverageQueueLength  Interval   `json:"average_queue_length"`
	MaxQueueLength      Interval   `json:"max_queue_length"`
	Utilization         Interval   `json:"worker_utilization"`
	OverflowJobs        Interval   `json:"overflow_jobs"`
	OverflowFraction    Interval   `json:"overflow_fraction"`
	DrainedMinute       Interval   `json:"queue_drained_minute"`
	OverflowProbability Proportion `json:"overflow_probability"`
	// Per-replication values, in replication order, for distributions and
	// paired comparisons.
	P95Waits       []float64 `json:"-"`
	AverageWaits   []float64 `json:"-"`
	DrainedMinutes []float64 `json:"-"`
	Overflowed     []bool    `json:"-"`
}

// chunkSize is the most replications one goroutine runs: small enough to
// spread a run over the cores and to stop soon after a cancellation, large
// enough that its engine and buffers are reused many times.
const chunkSize = 256

// sample is one replication's metrics.
type sample struct {
	avgWait, p95, avgQ, maxQ, util, overJobs, overFrac, drained float64
	overflowed                                                  bool
}

// Run simulates cfg.Replications random versions of the night and
// summarises them. It stops early with the context's error.
func Run(ctx context.Context, night queuekit.Night, cfg Config) (Summary, error) {
	if cfg.Policy == "" {
		cfg.Policy = sim.Barrier
	}
	if cfg.Model.Load == 0 {
		cfg.Model.Load = 1
	}
	switch {
	case cfg.Replications < 2:
		return Summary{}, fmt.Errorf("monte carlo: replications = %d: need at least 2 for an interval", cfg.Replications)
	case cfg.Replications > MaxReplications:
		return Summary{}, fmt.Errorf("monte carlo: replications = %d: at most %d (each keeps its metrics in memory)", cfg.Replications, MaxReplications)
	case cfg.Workers < 1:
		return Summary{}, fmt.Errorf("monte carlo: workers = %d: need at least 1", cfg.Workers)
	case len(night.Jobs) == 0:
		return Summary{}, fmt.Errorf("monte carlo: night %s has no jobs", night.BatchDate)
	}
	if err := cfg.Model.validate(); err != nil {
		return Summary{}, fmt.Errorf("monte carlo: %w", err)
	}
	pol, err := sim.ParsePolicy(string(cfg.Policy))
	if err != nil {
		return Summary{}, fmt.Errorf("monte carlo: %w", err)
	}
	cfg.Policy = pol // "backfill" is reported as easy

	base := sim.Tasks(night)
	samplers := make([]func(*rand.Rand, float64) float64, len(base))
	for i, t := range base {
		samplers[i] = cfg.Model.sampler(t.Class)
	}
	simCfg := sim.Config{Workers: cfg.Workers, Policy: cfg.Policy, Cutoff: float64(night.Window.Minutes()), NoTrace: true}

	samples := make([]sample, cfg.Replications)
	par := cfg.Parallelism
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	var (
		progressMu sync.Mutex // guards done, so progress is reported in order
		done       int
		step       = max(1, cfg.Replications/100)
	)
	// One goroutine per chunk of replications, at most par at a time; the
	// first error cancels gctx and the chunks still to come stop at once.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	chunk := max(1, min(chunkSize, cfg.Replications/par))
	for first := 0; first < cfg.Replications; first += chunk {
		if gctx.Err() != nil {
			break
		}
		last := min(first+chunk, cfg.Replications)
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return fmt.Errorf("monte carlo: stopped at replication %d: %w", first, context.Cause(gctx))
			}
			var eng sim.Engine
			tasks := make([]sim.Task, len(base))
			pcg := rand.NewPCG(0, 0)
			rng := rand.New(pcg)
			for r := first; r < last; r++ {
				pcg.Seed(cfg.Seed, uint64(r)) // replication r's own stream, reseeded, not reallocated
				for i, t := range base {
					t.Estimate *= cfg.Model.Load
					t.Runtime = samplers[i](rng, t.Estimate)
					if cfg.Model.ArrivalJitter > 0 {
						t.Arrival += rng.Float64() * cfg.Model.ArrivalJitter
					}
					tasks[i] = t
				}
				res, err := eng.Run(tasks, simCfg)
				if err != nil {
					return fmt.Errorf("monte carlo: replication %d: %w", r, err)
				}
				samples[r] = sample{res.AverageWait, res.P95Wait, res.AverageQueueLength, float64(res.MaxQueueLength),
					res.Utilization, float64(res.OverflowJobs), res.OverflowFraction, res.DrainedMinute, res.Overflowed()}
			}
			if cfg.Progress != nil {
				progressMu.Lock()
				before := done
				done += last - first
				if done/step > before/step || done == cfg.Replications {
					cfg.Progress(queuekit.Progress{Done: done, Total: cfg.Replications})
				}
				progressMu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Summary{}, err
	}
	if ctx.Err() != nil { // cancelled before the remaining chunks started
		return Summary{}, fmt.Errorf("monte carlo: stopped before %d replications: %w", cfg.Replications, context.Cause(ctx))
	}
	return summarize(night.BatchDate, cfg, samples), nil
}

// sampler returns a function drawing an actual runtime with the given mean.
// Draws come from gonum's distuv with the replication's source.
func (m Model) sampler(class string) func(*rand.Rand, float64) float64 {
	rt := m.runtime(class)
	switch {
	case rt.Dist == Exponential:
		return func(rng *rand.Rand, mean float64) float64 {
			return distuv.Exponential{Rate: 1 / mean, Src: rng}.Rand()
		}
	case rt.Dist == LogNormal && rt.CV > 0:
		s2 := math.Log1p(rt.CV * rt.CV)
		sigma := math.Sqrt(s2)
		return func(rng *rand.Rand, mean float64) float64 {
			return distuv.LogNormal{Mu: math.Log(mean) - s2/2, Sigma: sigma, Src: rng}.Rand()
		}
	}
	return func(_ *rand.Rand, mean float64) float64 { return mean }
}

func summarize(date string, cfg Config, s []sample) Summary {
	n := len(s)
	col := func(f func(sample) float64) []float64 {
		out := make([]float64, n)
		for i := range s {
			out[i] = f(s[i])
		}
		return out
	}
	sum := Summary{BatchDate: date, Workers: cfg.Workers, Policy: cfg.Policy, Load: cfg.Model.Load, Replications: n}
	sum.AverageWaits = col(func(x sample) float64 { return x.avgWait })
	sum.P95Waits = col(func(x sample) float64 { return x.p95 })
	sum.DrainedMinutes = col(func(x sample) float64 { return x.drained })
	sum.AverageWait = MeanCI(sum.AverageWaits)
	sum.P95Wait = MeanCI(sum.P95Waits)
	sum.DrainedMinute = MeanCI(sum.DrainedMinutes)
	sum.AverageQueueLength = MeanCI(col(func(x sample) float64 { return x.avgQ }))
	sum.MaxQueueLength = MeanCI(col(func(x sample) float64 { return x.maxQ }))
	sum.Utilization = MeanCI(col(func(x sample) float64 { return x.util }))
	sum.OverflowJobs = MeanCI(col(func(x sample) float64 { return x.overJobs }))
	sum.OverflowFraction = MeanCI(col(func(x sample) float64 { return x.overFrac }))
	sum.Overflowed = make([]bool, n)
	k := 0
	for i, x := range s {
		sum.Overflowed[i] = x.overflowed
		if x.overflowed {
			k++
		}
	}
	sum.OverflowProbability = Wilson(k, n)
	return sum
}

// MeanCI returns the mean of xs with a 95% Student t interval,
// mean ± t(0.975, n−1)·s/√n. With fewer than two values, or no spread, the
// interval collapses onto the mean.
func MeanCI(xs []float64) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	if len(xs) == 1 {
		return Interval{xs[0], xs[0], xs[0]}
	}
	m, sd := stat.MeanStdDev(xs, nil)
	if !(sd > 0) {
		return Interval{m, m, m}
	}
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975) * sd / math.Sqrt(float64(len(xs)))
	return Interval{m, m - h, m + h}
}

// Wilson returns k successes in n trials as a proportion with its 95% Wilson
// score interval: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
func Wilson(k, n int) Proportion {
	if n <= 0 {
		return Proportion{}
	}
	z := distuv.UnitNormal.Quantile(0.975)
	p := float64(k) / float64(n)
	nn := float64(n)
	den := 1 + z*z/nn
	center := (p + z*z/(2*nn)) / den
	half := z * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn)) / den
	return Proportion{Estimate: p, Low: math.Max(0, center-half), High: math.Min(1, center+half), Successes: k, Trials: n}
}
