package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Variability is what Allen-Cunneen needs from a night: the coefficients of
// variation (standard deviation over mean, population form) of the gaps
// between arrivals, ca, and of the runtimes, cs.
//
// The gaps must describe the same arrival rate that Allen-Cunneen pairs
// them with, λ = n jobs / W window minutes (queuekit.Night.Params), so their
// mean must be W/n. The n − 1 gaps between the first and the last arrival
// do not have that mean (a night whose jobs all arrive by 03:00 spreads them
// over 120 minutes, not 240). Variability therefore takes the window as one
// period of a repeating pattern: the n gaps are the n − 1 between
// consecutive arrivals plus the wrap-around gap from the last arrival to
// the end of the window and on to the first arrival of the next period.
// They add up to W, so their mean is exactly W/n = 1/λ. Evenly spaced
// arrivals have ca = 0 (deterministic), one batch of n jobs at once has
// n − 1 zero gaps and one of W, so ca² = n − 1, and a Poisson stream has
// ca → 1.
func Variability(n queuekit.Night) (ca, cs float64, err error) {
	ts := sim.Tasks(n)
	if len(ts) < 2 {
		return 0, 0, fmt.Errorf("night %s: %d jobs, need at least 2 to measure variability", n.BatchDate, len(ts))
	}
	arrivals := make([]float64, len(ts))
	runtimes := make([]float64, len(ts))
	for i, t := range ts {
		arrivals[i], runtimes[i] = t.Arrival, t.Estimate
	}
	return ArrivalCV(arrivals, float64(n.Window.Minutes())), cv(runtimes), nil
}

// ArrivalCV is the coefficient of variation of the gaps between arrivals
// (minutes from the window start) in a window of w minutes taken as one
// period of a repeating pattern: the gaps between consecutive arrivals and
// the wrap-around gap from the last back to the first, w minutes later.
// Their mean is w / len(arrivals), the λ = n/w of the queue. An arrival
// after w counts as one at w (the wrap-around gap is never negative).
func ArrivalCV(arrivals []float64, w float64) float64 {
	if len(arrivals) == 0 {
		return 0
	}
	a := slices.Clone(arrivals)
	slices.Sort(a)
	gaps := make([]float64, len(a))
	for i := range len(a) - 1 {
		gaps[i] = a[i+1] - a[i]
	}
	gaps[len(a)-1] = max(w-a[len(a)-1], 0) + a[0]
	return cv(gaps)
}

// cv is the population coefficient of variation; 0 for a zero mean.
func cv(xs []float64) float64 {
	m := stat.Mean(xs, nil)
	if m == 0 {
		return 0
	}
	return stat.PopStdDev(xs, nil) / m
}

// EngineCheck is the night simulator run as an M/M/c queue, beside the
// theory it must reproduce there.
type EngineCheck struct {
	Queue mmc.Queue // rates per minute
	Jobs  int       // jobs simulated, WarmUp of them discarded
	// ErlangWq is Erlang C's mean wait in queue (minutes).
	ErlangWq float64
	// SimWq is the night engine's mean wait after the warm-up, with a 95%
	// batch-means interval [Low, High] (20 batches, Student t).
	SimWq, Low, High float64
	// Little's law on the whole run: the time-average number waiting
	// (from the engine's queue-length curve) against λ × mean wait, with
	// λ = jobs / T over the run [0, T] that starts and ends empty. They
	// agree to rounding whatever the queue.
	TimeAverageQueue, LambdaW float64
}

// CheckEngine runs the night engine on an M/M/c workload (sim.PoissonTasks:
// Poisson arrivals, exponential runtimes, no locks, one priority; rates per
// minute) of the given number of jobs and compares its mean wait with
// Erlang C, and its time-average queue with Little's law.
func CheckEngine(q mmc.Queue, jobs int, seed uint64) (EngineCheck, error) {
	const batches = 20
	warmUp := jobs / 10
	if jobs < 10*batches {
		return EngineCheck{}, fmt.Errorf("check engine: %d jobs: want at least %d", jobs, 10*batches)
	}
	m, err := q.Solve()
	if err != nil {
		return EngineCheck{}, fmt.Errorf("check engine: %w", err)
	}
	tasks := sim.PoissonTasks(q.Lambda, q.Mu, jobs, seed)
	var e sim.Engine
	// A first run finds when the queue drains; the second uses that as
	// the window, so the run starts and ends empty and every wait lies
	// inside it: that is where Little's law holds exactly.
	r, err := e.Run(tasks, sim.Config{Workers: q.C, Cutoff: tasks[jobs-1].Arrival + 1, NoTrace: true})
	if err != nil {
		return EngineCheck{}, fmt.Errorf("check engine: %w", err)
	}
	horizon := math.Max(r.DrainedMinute, tasks[jobs-1].Arrival+1)
	r, err = e.Run(tasks, sim.Config{Workers: q.C, Cutoff: horizon})
	if err != nil {
		return EngineCheck{}, fmt.Errorf("check engine: %w", err)
	}
	waits := make([]float64, len(r.Schedule))
	for _, s := range r.Schedule { // the schedule is in start order; arrival order is the id order
		var i int
		if _, err := fmt.Sscanf(s.ID, "J%07d", &i); err != nil {
			return EngineCheck{}, fmt.Errorf("check engine: job id %q: %w", s.ID, err)
		}
		waits[i] = s.Wait
	}
	per := (jobs - warmUp) / batches
	means := make([]float64, batches)
	for b := range means {
		means[b] = stat.Mean(waits[warmUp+b*per:warmUp+(b+1)*per], nil)
	}
	mean, sd := stat.MeanStdDev(means, nil)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: batches - 1}.Quantile(0.975) * sd / math.Sqrt(batches)
	return EngineCheck{Queue: q, Jobs: jobs, ErlangWq: m.Wq, SimWq: mean, Low: mean - half, High: mean + half,
		TimeAverageQueue: r.AverageQueueLength, LambdaW: float64(jobs) / horizon * stat.Mean(waits, nil)}, nil
}

// LoadPoint is the mean wait at one utilisation: Erlang C's, and a
// steady-state simulation's with its 95% interval, in units of the mean
// runtime 1/μ.
type LoadPoint struct {
	Rho, ErlangWq, SimWq, Low, High float64
}

// WaitVsLoad shows how the mean wait grows as ρ approaches 1 on c workers
// (μ = 1, so waits are in mean runtimes): Erlang C, Wq = C/(cμ − λ), grows
// like 1/(1 − ρ), and a steady-state M/M/c simulation (sim.SteadyState,
// customers per point) agrees within its interval. Every ρ must lie in
// (0, 1).
func WaitVsLoad(ctx context.Context, c int, rhos []float64, customers int, seed uint64) ([]LoadPoint, error) {
	if len(rhos) == 0 {
		return nil, errors.New("wait vs load: no utilisations; try []float64{0.5, 0.8, 0.9, 0.95}")
	}
	out := make([]LoadPoint, 0, len(rhos))
	for _, rho := range rhos {
		if !(rho > 0 && rho < 1) {
			return nil, fmt.Errorf("wait vs load: ρ = %v: want 0 < ρ < 1 (at ρ >= 1 there is no steady state)", rho)
		}
		q := mmc.Queue{Lambda: rho * float64(c), Mu: 1, C: c}
		m, err := q.Solve()
		if err != nil {
			return nil, fmt.Errorf("wait vs load: ρ = %v: %w", rho, err)
		}
		s, err := sim.SteadyState(ctx, sim.SteadyConfig{Lambda: q.Lambda, Mu: 1, Workers: c, Customers: customers, Seed: seed})
		if err != nil {
			return nil, fmt.Errorf("wait vs load: ρ = %v: %w", rho, err)
		}
		out = append(out, LoadPoint{Rho: rho, ErlangWq: m.Wq, SimWq: s.Wq, Low: s.Wq95Low, High: s.Wq95High})
	}
	return out, nil
}

// Little checks Little's law, L = λW, on one simulated night: the
// time-average number of jobs waiting over the window (the area under the
// queue curve divided by the window) against λ = jobs / window times the
// mean wait. They are equal when every wait lies inside the window (the
// night starts and ends with an empty queue before the cutoff); when jobs
// still wait after the cutoff the time average, clipped at the cutoff, is
// smaller.
func Little(r sim.Result, windowMinutes float64) (timeAverage, lambdaW float64) {
	return r.AverageQueueLength, float64(r.Jobs) / windowMinutes * r.AverageWait
}
