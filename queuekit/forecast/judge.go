package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

// The forecasters' names, as Errors, MAE and Paired take them.
const (
	NameRegression   = "regression"
	NameSimEstimates = "simulator + estimates"
	NameSimFitted    = "simulator + fitted"
	NameOracle       = "oracle (noise floor)"
)

// Forecasters are the three forecasters, in the notebook's order.
var Forecasters = []string{NameRegression, NameSimEstimates, NameSimFitted}

// forecast is row r's forecast by the named forecaster.
func (r Row) forecast(name string) (float64, error) {
	switch name {
	case NameRegression:
		return r.Regression, nil
	case NameSimEstimates:
		return r.SimEstimates, nil
	case NameSimFitted:
		return r.SimFitted, nil
	case NameOracle:
		if math.IsNaN(r.Oracle) {
			return 0, errors.New("no oracle forecast: call AddOracle first")
		}
		return r.Oracle, nil
	}
	return 0, fmt.Errorf("unknown forecaster %q (want one of %q, %q, %q, %q)", name, NameRegression, NameSimEstimates, NameSimFitted, NameOracle)
}

// Errors are the absolute errors of the named forecaster, one per row
// (heavyOnly keeps the heavy nights only).
func (e Evaluation) Errors(name string, heavyOnly bool) ([]float64, error) {
	var out []float64
	for _, r := range e.Rows {
		if heavyOnly && !r.Heavy {
			continue
		}
		f, err := r.forecast(name)
		if err != nil {
			return nil, fmt.Errorf("errors of %s: %w", name, err)
		}
		out = append(out, math.Abs(f-r.Realised))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("errors of %s: no rows (heavy only: %v)", name, heavyOnly)
	}
	return out, nil
}

// MAE is the named forecaster's mean absolute error with its 95 % Student t
// interval over the rows (the nights are the sample).
func (e Evaluation) MAE(name string, heavyOnly bool) (montecarlo.Interval, error) {
	xs, err := e.Errors(name, heavyOnly)
	if err != nil {
		return montecarlo.Interval{}, err
	}
	return montecarlo.MeanCI(xs), nil
}

// Paired is MAE(a) − MAE(b) with a paired 95 % t interval: the mean over the
// rows of |error of a| − |error of b| on the same night. Pairing removes
// what the nights share (a hard night is hard for both), as common random
// numbers do in notebook 04, so the interval is much narrower than the two
// MAEs' intervals side by side. An interval below 0 says a is better.
func (e Evaluation) Paired(a, b string, heavyOnly bool) (montecarlo.Interval, error) {
	ea, err := e.Errors(a, heavyOnly)
	if err != nil {
		return montecarlo.Interval{}, err
	}
	eb, err := e.Errors(b, heavyOnly)
	if err != nil {
		return montecarlo.Interval{}, err
	}
	d := make([]float64, len(ea))
	for i := range ea {
		d[i] = ea[i] - eb[i]
	}
	return montecarlo.MeanCI(d), nil
}

// AddOracle fills every row's Oracle: the forecast of someone who knows the
// truth (biases, noise law, load) but not the night's draw of the noise,
// the median of draws realisations of the night (the median minimises the
// mean absolute error). Its MAE is the noise floor: no forecaster of the
// drain minute can expect to do better on these nights.
func (e *Evaluation) AddOracle(truth Truth, draws int, seed uint64) error {
	if draws < 1 {
		return fmt.Errorf("oracle: %d draws: want at least 1", draws)
	}
	if truth.Bias == nil {
		truth = DefaultTruth
	}
	rng := rand.New(rand.NewPCG(seed, 0x0f4c1e))
	sum := 0.0
	for i := range e.Rows {
		r := &e.Rows[i]
		if r.night == nil {
			return fmt.Errorf("oracle: row %d (%s) has no night: rows must come from Evaluate", i, r.BatchDate)
		}
		drains := make([]float64, draws)
		for k := range drains {
			rec, err := Realise(*r.night, r.Workers, truth, rng)
			if err != nil {
				return fmt.Errorf("oracle: %w", err)
			}
			drains[k] = rec.Drain
		}
		sort.Float64s(drains)
		if draws%2 == 1 {
			r.Oracle = drains[draws/2]
		} else {
			r.Oracle = (drains[draws/2-1] + drains[draws/2]) / 2
		}
		sum += math.Abs(r.Oracle - r.Realised)
	}
	e.MAEOracle = sum / float64(len(e.Rows))
	return nil
}

// SeedResult is one seed's study on the held-out generated nights.
type SeedResult struct {
	Seed uint64
	// MAE per forecaster (Forecasters order), all held-out nights and the
	// heavy ones only.
	All, Heavy []float64
}

// Winner is the forecaster with the smallest MAE (Forecasters order), on
// all held-out nights or the heavy ones only.
func (s SeedResult) Winner(heavy bool) string {
	m := s.All
	if heavy {
		m = s.Heavy
	}
	best := 0
	for i := range m {
		if m[i] < m[best] {
			best = i
		}
	}
	return Forecasters[best]
}

// Seeds runs the study once per seed, each replacing cfg.History.Seed, with
// cfg's other settings (the history differs: other nights, other noise),
// and reports each seed's MAEs.
func Seeds(cfg StudyConfig, seeds []uint64) ([]SeedResult, error) {
	trainShare, err := cfg.trainShare()
	if err != nil {
		return nil, fmt.Errorf("seeds: %w", err)
	}
	var out []SeedResult
	for _, seed := range seeds {
		c := cfg.History
		c.Seed = seed
		hist, err := History(c)
		if err != nil {
			return nil, err
		}
		cut := int(math.Round(trainShare * float64(len(hist))))
		ev, err := Evaluate(hist[:cut], hist[cut:])
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		r := SeedResult{Seed: seed}
		for _, name := range Forecasters {
			all, err := ev.Errors(name, false)
			if err != nil {
				return nil, fmt.Errorf("seed %d: %w", seed, err)
			}
			r.All = append(r.All, mean(all))
			heavy, err := ev.Errors(name, true)
			if err != nil {
				return nil, fmt.Errorf("seed %d: %w", seed, err)
			}
			r.Heavy = append(r.Heavy, mean(heavy))
		}
		out = append(out, r)
	}
	return out, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Verdict says what holds across seeds: the forecaster that wins on every
// seed, or "" when the winner changes with the seed, and how many seeds
// each forecaster won (Forecasters order).
func Verdict(results []SeedResult, heavy bool) (winner string, wins []int) {
	wins = make([]int, len(Forecasters))
	for _, r := range results {
		w := r.Winner(heavy)
		for i, name := range Forecasters {
			if name == w {
				wins[i]++
			}
		}
	}
	for i, n := range wins {
		if n == len(results) && n > 0 {
			return Forecasters[i], wins
		}
	}
	return "", wins
}
