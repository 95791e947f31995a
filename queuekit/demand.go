package queuekit

// Demand is what a night asks of a pool of c workers once exclusive locks
// are counted. ρ = λ/(cμ) counts every job as one worker for its runtime,
// so it is the share of the pool's worker-minutes the night would use if no
// job locked the pool. An exclusive job holds all c workers for its
// runtime, so the worker-minutes the night really takes are
//
//	WorkerMinutes = Σ ordinary runtimes + c × Σ exclusive runtimes
//
// and Share = WorkerMinutes / (c × window minutes). The exclusive jobs run
// one after another, with nothing beside them, so no schedule drains the
// night sooner than
//
//	CriticalPath = Σ exclusive runtimes + Σ ordinary runtimes / c
//
// (the ordinary work spread perfectly over c workers in the rest of the
// time). When Σ exclusive runtimes alone exceeds the window, no c is enough.
// ρ < 1 is necessary for the night to fit; Share < 1 and CriticalPath <=
// window are necessary too, and none of them is sufficient: arrival times
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
	CriticalPath     float64 // minutes: Σ exclusive + Σ ordinary / c
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
		CriticalPath:  float64(s.ExclusiveRuntimeMinutes) + ordinary/c,
	}
	d.Rho = float64(d.RuntimeMinutes) / d.Capacity
	d.Share = d.WorkerMinutes / d.Capacity
	return d, nil
}

// Fits reports whether the necessary conditions hold: ρ < 1, Share <= 1
// and CriticalPath <= the window. False means no schedule on c workers
// finishes the night inside the window; true does not promise one does.
func (d Demand) Fits() bool {
	return d.Rho < 1 && d.Share <= 1 && d.CriticalPath <= float64(d.WindowMinutes)
}
