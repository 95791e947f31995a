package queuekit

// Demand is what a night asks of a pool of c workers once exclusive locks
// are counted. ρ = λ/(cμ) counts every job as one worker for its runtime,
// so it is the share of the pool's worker-minutes the night would use if no
// job locked the pool. An exclusive job holds all c workers for its
// runtime, so the worker-minutes the night really takes are
//
//	WorkerMinutes = Σ ordinary runtimes + c × Σ exclusive runtimes
//
// and Share = WorkerMinutes / (c × window minutes). Spread over c workers
// that never idle, that work keeps the pool busy for
//
//	PackedMinutes = WorkerMinutes / c = Σ exclusive runtimes + Σ ordinary runtimes / c
//
// minutes. It is not a critical path: it ignores when the jobs arrive (a
// job requested for 03:00 cannot start at 01:00) and how locks and
// priorities order them, so it is only a floor under the drain time, and
// PackedMinutes <= window is the same test as Share <= 1. When Σ exclusive
// runtimes alone exceed the window, no c is enough. ρ < 1 and Share <= 1 are
// necessary for the night to fit, and neither is sufficient: arrival times
// and priorities decide the rest, which is what the simulator is for.
type Demand struct {
	Workers          int
	WindowMinutes    int
	RuntimeMinutes   int     // Σ runtimes: what ρ counts
	ExclusiveMinutes int     // Σ runtimes of exclusive-lock jobs
	WorkerMinutes    float64 // Σ ordinary + c × Σ exclusive
	Capacity         float64 // c × window minutes
	Rho              float64 // RuntimeMinutes / Capacity = λ/(cμ)
	Share            float64 // WorkerMinutes / Capacity
	PackedMinutes    float64 // WorkerMinutes / c = Σ exclusive + Σ ordinary / c
}

// Demand computes the night's demand on c workers. A night without jobs or
// c below 1 is an error.
func (n Night) Demand(workers int) (Demand, error) {
	if err := n.checkPool(workers, "a demand"); err != nil {
		return Demand{}, err
	}
	s := n.Summarize()
	c := float64(workers)
	ordinary := float64(s.TotalRuntimeMinutes - s.ExclusiveRuntimeMinutes)
	d := Demand{
		Workers: workers, WindowMinutes: n.Window.Minutes(),
		RuntimeMinutes: s.TotalRuntimeMinutes, ExclusiveMinutes: s.ExclusiveRuntimeMinutes,
		WorkerMinutes: ordinary + c*float64(s.ExclusiveRuntimeMinutes),
		Capacity:      c * float64(n.Window.Minutes()),
		PackedMinutes: float64(s.ExclusiveRuntimeMinutes) + ordinary/c,
	}
	d.Rho = float64(d.RuntimeMinutes) / d.Capacity
	d.Share = d.WorkerMinutes / d.Capacity
	return d, nil
}

// WorkFits reports whether the night's worker-minutes, locks counted, fit
// in the pool's: Share <= 1 (so ρ <= 1 too, as Share >= ρ), which is the
// same test as PackedMinutes <= the window. False means no schedule on c
// workers finishes the night inside the window; true does not promise one
// does, because arrival times and priorities are not counted.
func (d Demand) WorkFits() bool {
	return d.Share <= 1
}
