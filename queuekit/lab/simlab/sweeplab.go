package simlab

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// WorkerTarget is notebook 04's target for a worker count: the upper 95 %
// bounds of P(p95 wait > Limit minutes) and of P(overflow) both below 5 %.
type WorkerTarget struct{ Limit float64 }

// Met says whether the sweep point s meets the target.
func (t WorkerTarget) Met(s montecarlo.Summary) bool {
	return montecarlo.Exceeds(s.P95Waits, t.Limit).High < 0.05 && s.OverflowProbability.High < 0.05
}

// TargetHeaders are the columns of TargetRows.
func (t WorkerTarget) TargetHeaders() []string {
	l := format.Num(t.Limit)
	return []string{"c", "P(p95 > " + format.Num(t.Limit/2) + " min)", "P(p95 > " + l + " min) [upper]", "P(overflow) [upper]", "meets the target"}
}

// TargetRows is a row per worker count of the sweep: P(p95 > half the
// limit), P(p95 > limit) and P(overflow) with their upper bounds, and
// "yes" or "no".
func (t WorkerTarget) TargetRows(sweep []montecarlo.Summary) [][]string {
	rows := make([][]string, 0, len(sweep))
	for _, s := range sweep {
		over := montecarlo.Exceeds(s.P95Waits, t.Limit)
		meets := "no"
		if t.Met(s) {
			meets = "yes"
		}
		pct := func(f float64) string { return format.PercentAt(f, 1) } // one rounding rule for the whole table
		rows = append(rows, []string{format.Int(s.Workers), pct(montecarlo.Exceeds(s.P95Waits, t.Limit/2).Estimate),
			pct(over.Estimate) + " [" + pct(over.High) + "]",
			pct(s.OverflowProbability.Estimate) + " [" + pct(s.OverflowProbability.High) + "]", meets})
	}
	return rows
}

// HalfLimitFloor is the sentence under a sweep about the table's first
// column, P(p95 > Limit/2): its lowest value over every worker count swept
// and where, so that prose about "every c" is computed from the run.
func (t WorkerTarget) HalfLimitFloor(date string, sweep []montecarlo.Summary) string {
	if len(sweep) == 0 {
		return fmt.Sprintf("%s: no worker counts were swept", date)
	}
	best := sweep[0]
	for _, s := range sweep[1:] {
		if montecarlo.Exceeds(s.P95Waits, t.Limit/2).Estimate < montecarlo.Exceeds(best.P95Waits, t.Limit/2).Estimate {
			best = s
		}
	}
	floor := montecarlo.Exceeds(best.P95Waits, t.Limit/2).Estimate
	if floor == 1 {
		return fmt.Sprintf("%s: every night's p95 wait is above %s min at every c swept", date, format.Num(t.Limit/2))
	}
	workers := "workers"
	if best.Workers == 1 {
		workers = "worker"
	}
	return fmt.Sprintf("%s: P(p95 > %s min) is at least %s at every c swept (lowest with %d %s)",
		date, format.Num(t.Limit/2), format.PercentAt(floor, 1), best.Workers, workers)
}

// Verdict is the Markdown sentence under a night's sweep: the smallest
// worker count meeting the target, or why none does (the night's exclusive
// jobs against its window).
func (t WorkerTarget) Verdict(date string, night queuekit.Night, sweep []montecarlo.Summary) string {
	if best, ok := montecarlo.Smallest(sweep, t.Met); ok {
		return fmt.Sprintf("**%s: smallest c meeting the target: %d** (P(p95 > %s min) at most %s, P(overflow) at most %s)",
			date, best.Workers, format.Num(t.Limit), format.Percent(montecarlo.Exceeds(best.P95Waits, t.Limit).High), format.Percent(best.OverflowProbability.High))
	}
	if len(sweep) == 0 {
		return fmt.Sprintf("**%s: no worker counts were swept**", date)
	}
	s, last := night.Summarize(), sweep[len(sweep)-1]
	o := last.OverflowProbability
	return fmt.Sprintf("**%s: no c up to %d meets the target**: with %d workers %s of %s nights overflow (%s); its %d exclusive jobs need %s minutes one after another, of a %s-minute window",
		date, last.Workers, last.Workers, format.Int(o.Successes), format.Int(o.Trials), format.Percent(o.Estimate), s.ExclusiveJobs,
		format.Int(s.ExclusiveRuntimeMinutes), format.Int(night.Window.Minutes()))
}

// NightsSummary is notebook 04's lines under a Monte Carlo run of one
// night: the mean wait and the p95 wait (the night's longest) with their
// 95 % intervals, and the probability that the night ends after cutoff (the
// window's end, "05:00") with its Wilson interval and the nights behind it;
// a blank line ends it.
func NightsSummary(s montecarlo.Summary, cutoff string) string {
	p := s.OverflowProbability
	return fmt.Sprintf("mean wait %.1f min [%.1f, %.1f]\np95 wait (the night's longest) %.1f min [%.1f, %.1f]\nP(night ends after %s) = %s, 95%% Wilson [%s, %s] (%s of %s nights)\n\n",
		s.AverageWait.Mean, s.AverageWait.Low, s.AverageWait.High, s.P95Wait.Mean, s.P95Wait.Low, s.P95Wait.High,
		cutoff, format.PercentAt(p.Estimate, 2), format.PercentAt(p.Low, 2), format.PercentAt(p.High, 2), format.Int(p.Successes), format.Int(p.Trials))
}

// ScenarioLine is notebook 04's line for one simulated night: its date and
// workers, the mean and p95 wait, the utilization, the jobs after the
// cutoff and the minute the queue drained.
func ScenarioLine(date string, workers int, r sim.Result) string {
	return fmt.Sprintf("%s, %d workers: mean wait %.2f min, p95 %.0f min, utilization %.1f%%, %d of %d jobs after the cutoff, drained at minute %.0f",
		date, workers, r.AverageWait, r.P95Wait, 100*r.Utilization, r.OverflowJobs, r.Jobs, r.DrainedMinute)
}
