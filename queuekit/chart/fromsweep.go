package chart

import "github.com/nightqueue/workshop/queuekit/montecarlo"

// FromSweep turns Monte Carlo summaries (e.g. from montecarlo.SweepWorkers)
// into sweep points: the p95 wait and utilisation with their Student-t
// intervals, the overflow probability with its Wilson interval.
func FromSweep(sweep []montecarlo.Summary) []SweepPoint {
	out := make([]SweepPoint, len(sweep))
	for i, s := range sweep {
		out[i] = SweepPoint{
			Workers: s.Workers,
			P95Wait: s.P95Wait.Mean, P95Low: s.P95Wait.Low, P95High: s.P95Wait.High,
			Overflow: s.OverflowProbability.Estimate, OverflowLow: s.OverflowProbability.Low, OverflowHigh: s.OverflowProbability.High,
			Utilization: s.Utilization.Mean, UtilizationLow: s.Utilization.Low, UtilizationHigh: s.Utilization.High,
		}
	}
	return out
}
