package forecastlab

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/nightqueue/workshop/queuekit/forecast"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

// Interval is a mean with its 95 % interval: "32.1 [25 to 39.2]".
func Interval(i montecarlo.Interval) string {
	return fmt.Sprintf("%s [%s to %s]", format.Num(i.Mean), format.Num(i.Low), format.Num(i.High))
}

// JudgementRows is a row per forecaster (and the oracle): its MAE with its
// interval, and its paired difference from the simulator with fitted
// runtimes ("–" for that one itself).
func JudgementRows(ev forecast.Evaluation, heavyOnly bool) ([][]string, error) {
	var rows [][]string
	for _, name := range append(append([]string{}, forecast.Forecasters...), forecast.NameOracle) {
		m, err := ev.MAE(name, heavyOnly)
		if err != nil {
			return nil, err
		}
		paired := "–"
		if name != forecast.NameSimFitted {
			p, err := ev.Paired(name, forecast.NameSimFitted, heavyOnly)
			if err != nil {
				return nil, err
			}
			paired = Interval(p)
		}
		rows = append(rows, []string{name, Interval(m), paired})
	}
	return rows, nil
}

// ShowJudgement shows JudgementRows as a table.
func ShowJudgement(ev forecast.Evaluation, heavyOnly bool) {
	rows, err := JudgementRows(ev, heavyOnly)
	lab.Stop(err)
	lab.ShowTable([]string{"forecaster", "MAE, minutes [95% interval]", "minus simulator + fitted, paired [95% interval]"}, rows)
}

// SeedRows is a row per seed of forecast.Seeds: the smallest MAE on all
// held-out nights and on the heavy ones, and the heavy nights' MAE of the
// regression and of the fitted simulator.
func SeedRows(res []forecast.SeedResult) [][]string {
	rows := make([][]string, 0, len(res))
	for _, r := range res {
		rows = append(rows, []string{fmt.Sprint(r.Seed), r.Winner(false), r.Winner(true), format.Num(r.Heavy[0]), format.Num(r.Heavy[2])})
	}
	return rows
}

// SeedRanking says which forecaster had the smallest MAE on every seed, or
// how the first places split: a ranking of point estimates, which the
// paired intervals must confirm before it is a verdict.
func SeedRanking(world, which string, res []forecast.SeedResult, heavy bool) string {
	w, wins := forecast.Verdict(res, heavy)
	if w != "" {
		return fmt.Sprintf("%s, %s: %s had the smallest MAE on every one of %d seeds (a ranking; the paired interval says whether the gap is real)",
			world, which, w, len(res))
	}
	var parts []string
	for i, name := range forecast.Forecasters {
		if wins[i] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, wins[i]))
		}
	}
	return fmt.Sprintf("%s, %s: the smallest MAE changes with the seed (%s of %d)", world, which, strings.Join(parts, ", "), len(res))
}

// FindRecord returns the record of the night date in records.
func FindRecord(records []forecast.Record, date string) (forecast.Record, error) {
	for _, r := range records {
		if r.Night.BatchDate == date {
			return r, nil
		}
	}
	return forecast.Record{}, fmt.Errorf("night %s is not in the %d records", date, len(records))
}

// LateShare realises the night runs times with workers and the truth
// (seeded) and returns the share that drained after minute cutoff, with
// its Wilson interval.
func LateShare(r forecast.Record, workers int, truth forecast.Truth, runs int, cutoff float64, seed uint64) (montecarlo.Proportion, error) {
	rng := rand.New(rand.NewPCG(seed, seed))
	late := 0
	for range runs {
		got, err := forecast.Realise(r.Night, workers, truth, rng)
		if err != nil {
			return montecarlo.Proportion{}, err
		}
		if got.Drain > cutoff {
			late++
		}
	}
	return montecarlo.Wilson(late, runs), nil
}
