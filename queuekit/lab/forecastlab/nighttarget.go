package forecastlab

import (
	"fmt"
	"slices"

	"github.com/nightqueue/workshop/queuekit/forecast"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

// NightTarget is notebook 04's per-night target applied to one night in
// notebook 09: the night drains by Cutoff on at least 95 % of its
// realisations, judged on the upper end of the late share's 95 % (Wilson)
// interval, as WorkerTarget judges P(overflow).
type NightTarget struct {
	Cutoff float64        // minute the night must drain by
	Truth  forecast.Truth // the world the night is realised in
	Runs   int            // realisations per pool size
	Seed   uint64         // seed of the realisations
}

// Late is the share of Runs realisations of r on workers that drain after
// Cutoff, with its interval (LateShare).
func (t NightTarget) Late(r forecast.Record, workers int) (montecarlo.Proportion, error) {
	return LateShare(r, workers, t.Truth, t.Runs, t.Cutoff, t.Seed)
}

// Met says whether a late share meets the target: its upper bound under 5 %.
func (t NightTarget) Met(p montecarlo.Proportion) bool { return p.High < 0.05 }

// SmallestPool is the smallest pool of 1 to maxWorkers whose late share
// meets the target, or 0 when none does.
func (t NightTarget) SmallestPool(r forecast.Record, maxWorkers int) (int, error) {
	for c := 1; c <= maxWorkers; c++ {
		p, err := t.Late(r, c)
		if err != nil {
			return 0, err
		}
		if t.Met(p) {
			return c, nil
		}
	}
	return 0, nil
}

// The levers notebook 09's decision offers when no pool size meets the
// target.
const (
	LeverWorkers   = "more-workers"   // a larger pool
	LeverExclusive = "exclusive-jobs" // the exclusive jobs first in the window (or shorter, or a narrower lock)
	LeverCutoff    = "later-cutoff"   // move the cutoff: a different target, not a change to the night
)

// ExclusiveFirst is r with its exclusive jobs requested in the night's first
// window, so that they run before the others arrive instead of stopping the
// pool in the busy hours.
func ExclusiveFirst(r forecast.Record) forecast.Record {
	out := r
	out.Night.Jobs = slices.Clone(r.Night.Jobs)
	first := ""
	for _, j := range out.Night.Jobs {
		if first == "" || j.RequestedWindow < first {
			first = j.RequestedWindow
		}
	}
	for i := range out.Night.Jobs {
		if out.Night.Jobs[i].RequiresExclusiveLock {
			out.Night.Jobs[i].RequestedWindow = first
		}
	}
	return out
}

// LeverResult is what a lever does to the night at a pool size.
type LeverResult struct {
	Lever   string
	Workers int
	Late    montecarlo.Proportion
	Met     bool
}

// TryLever applies lever to r on workers and realises it: more-workers runs
// twice the pool, exclusive-jobs runs ExclusiveFirst, later-cutoff is
// refused (it changes the target, not the night).
func (t NightTarget) TryLever(r forecast.Record, workers int, lever string) (LeverResult, error) {
	res := LeverResult{Lever: lever, Workers: workers}
	switch lever {
	case LeverWorkers:
		res.Workers = 2 * workers
	case LeverExclusive:
		r = ExclusiveFirst(r)
	case LeverCutoff:
		return res, fmt.Errorf("lever %q moves the target, not the night", lever)
	default:
		return res, fmt.Errorf("lever %q: want %q, %q or %q", lever, LeverWorkers, LeverExclusive, LeverCutoff)
	}
	p, err := t.Late(r, res.Workers)
	if err != nil {
		return res, err
	}
	res.Late, res.Met = p, t.Met(p)
	return res, nil
}

// HeldOutNight is the record of date among the history's nights after the
// first train, with the runtimes fitted on those train nights.
func HeldOutNight(cfg forecast.HistoryConfig, train int, date string) (forecast.Record, forecast.Runtimes, error) {
	hist, err := forecast.History(cfg)
	if err != nil {
		return forecast.Record{}, forecast.Runtimes{}, err
	}
	if train < 1 || train >= len(hist) {
		return forecast.Record{}, forecast.Runtimes{}, fmt.Errorf("held-out night %s: %d training nights of %d", date, train, len(hist))
	}
	m, err := forecast.FitRuntimes(hist[:train])
	if err != nil {
		return forecast.Record{}, forecast.Runtimes{}, err
	}
	r, err := FindRecord(hist[train:], date)
	return r, m, err
}

// ForecastRows is a row per pool size from..to: the size and the drain
// minute m forecasts for r's night.
func ForecastRows(m forecast.Runtimes, r forecast.Record, from, to int) ([][]string, error) {
	var rows [][]string
	for c := from; c <= to; c++ {
		d, err := m.Simulate(r.Night, c)
		if err != nil {
			return nil, err
		}
		rows = append(rows, []string{fmt.Sprint(c), format.Num(d)})
	}
	return rows, nil
}

// ForecastPick is the smallest pool of 1 to maxWorkers whose forecast by m
// drains by cutoff, or 0 when none does.
func ForecastPick(m forecast.Runtimes, r forecast.Record, cutoff float64, maxWorkers int) (int, error) {
	for c := 1; c <= maxWorkers; c++ {
		d, err := m.Simulate(r.Night, c)
		if err != nil {
			return 0, err
		}
		if d <= cutoff {
			return c, nil
		}
	}
	return 0, nil
}

// LeverSentence says how late the night is with the forecast's pick, and
// what the participant's lever did (or why it is no lever).
func LeverSentence(pick int, late montecarlo.Proportion, lv LeverResult, leverErr error) string {
	s := fmt.Sprintf("With %s, the fitted forecast's pick, the night realised 1,000 times is late on **%s** of them [%s to %s].",
		lab.Plural(pick, "worker", "workers"), format.Percent(late.Estimate), format.Percent(late.Low), format.Percent(late.High))
	switch {
	case lv.Lever == "":
		return s
	case leverErr != nil:
		return s + " Your lever: " + leverErr.Error() + "."
	}
	verdict := "meets the target"
	if !lv.Met {
		verdict = "does not meet the target"
	}
	return s + fmt.Sprintf(" Your lever, %s, on %s: late on %s [%s to %s]: it %s.", lv.Lever, lab.Plural(lv.Workers, "worker", "workers"),
		format.Percent(lv.Late.Estimate), format.Percent(lv.Late.Low), format.Percent(lv.Late.High), verdict)
}
