package queuekit

import (
	"fmt"
	"sort"
)

// Count is a labelled count, e.g. jobs of one requested window.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Summary describes a night's workload as SPEC.md defines it.
type Summary struct {
	BatchDate           string  `json:"batch_date"`
	Jobs                int     `json:"jobs"`
	PerWindow           []Count `json:"per_window"` // in window order
	PerClass            []Count `json:"per_class"`  // in the order of WorkloadClasses, zero counts omitted
	ExclusiveJobs       int     `json:"exclusive_jobs"`
	HighPriorityJobs    int     `json:"high_priority_jobs"` // priority >= HighPriority
	MeanRuntimeMinutes  float64 `json:"mean_runtime_minutes"`
	TotalRuntimeMinutes int     `json:"total_runtime_minutes"`
	// ExclusiveRuntimeMinutes is the runtime of the exclusive-lock jobs: they
	// run one at a time on the whole pool, so no worker count makes the night
	// shorter than this.
	ExclusiveRuntimeMinutes int `json:"exclusive_runtime_minutes"`
}

// Summarize counts a night's jobs by window and class.
func (n Night) Summarize() Summary {
	s := Summary{BatchDate: n.BatchDate, Jobs: len(n.Jobs)}
	win := map[string]int{}
	cls := map[string]int{}
	for _, j := range n.Jobs {
		win[j.RequestedWindow]++
		cls[j.WorkloadClass]++
		if j.RequiresExclusiveLock {
			s.ExclusiveJobs++
			s.ExclusiveRuntimeMinutes += j.RuntimeMinutes
		}
		if j.Priority >= HighPriority {
			s.HighPriorityJobs++
		}
		s.TotalRuntimeMinutes += j.RuntimeMinutes
	}
	for k, c := range win {
		s.PerWindow = append(s.PerWindow, Count{k, c})
	}
	sort.Slice(s.PerWindow, func(a, b int) bool { return s.PerWindow[a].Key < s.PerWindow[b].Key })
	for _, k := range WorkloadClasses {
		if c := cls[k]; c > 0 {
			s.PerClass = append(s.PerClass, Count{k, c})
		}
	}
	if s.Jobs > 0 {
		s.MeanRuntimeMinutes = float64(s.TotalRuntimeMinutes) / float64(s.Jobs)
	}
	return s
}

// Params are the queueing parameters of a night served by c workers.
//
//	lambda = jobs / window hours            (arrivals per hour)
//	mu     = 60 / mean runtime in minutes   (services per hour per worker)
//	rho    = lambda / (c mu)                (offered load per worker)
type Params struct {
	Lambda  float64 `json:"lambda_per_hour"`
	Mu      float64 `json:"mu_per_hour"`
	Workers int     `json:"workers"`
	Rho     float64 `json:"rho"`
}

// Params derives lambda, mu and rho for the night with c workers.
// A night without jobs or a worker count below 1 is an error.
func (n Night) Params(workers int) (Params, error) {
	if err := n.checkPool(workers, "lambda and mu"); err != nil {
		return Params{}, err
	}
	s := n.Summarize()
	p := Params{
		Lambda:  float64(s.Jobs) / n.Window.Hours(),
		Mu:      60 / s.MeanRuntimeMinutes,
		Workers: workers,
	}
	p.Rho = p.Lambda / (float64(workers) * p.Mu)
	return p, nil
}

// checkPool refuses what no pool figure can be derived from: fewer than one
// worker, a night without jobs, an empty window. what names the figures.
func (n Night) checkPool(workers int, what string) error {
	if workers < 1 {
		return fmt.Errorf("workers = %d: need at least 1 worker", workers)
	}
	if len(n.Jobs) == 0 {
		return fmt.Errorf("night %s has no jobs: nothing to derive %s from", n.BatchDate, what)
	}
	if n.Window.Minutes() <= 0 {
		return fmt.Errorf("night %s: empty batch window %s", n.BatchDate, n.Window)
	}
	return nil
}
