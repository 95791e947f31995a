package capacity

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/workload"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// MaxPeakNights is the most nights (replications) one PeakStudy simulates.
const MaxPeakNights = 100_000

// PeakSpread is the distribution of the busiest bin's arrivals over the mean
// arrivals per bin, one ratio per night: the peak factor a fleet is sized on,
// with its spread.
type PeakSpread struct {
	Ratios            []float64 // one ratio per night, ascending
	Median, P95, Max  float64   // of Ratios (empirical quantiles)
	MeanPerBin        float64   // expected arrivals per bin (the ratio's denominator)
	ExpectedPeakRatio float64   // the busiest bin's rate over the mean rate, without randomness
}

// PeakStudy describes a non-homogeneous Poisson arrival process by its
// expected arrivals in each bin of a night (bins of equal width), and how
// many nights to draw from it.
type PeakStudy struct {
	Rates  []float64 // expected arrivals per bin; the process's intensity times the bin width
	Nights int       // nights (replications) to draw, 1 to MaxPeakNights
	Seed   uint64    // seed of the PCG random source
}

// Simulate draws s.Nights nights, each bin's count an independent Poisson
// draw with the bin's expected arrivals, and returns the spread of the
// busiest bin's count over the mean expected count per bin.
func (s PeakStudy) Simulate() (PeakSpread, error) {
	if len(s.Rates) == 0 {
		return PeakSpread{}, errors.New("peak study: no bins: give the expected arrivals of each bin")
	}
	if s.Nights < 1 || s.Nights > MaxPeakNights {
		return PeakSpread{}, fmt.Errorf("peak study: nights = %d: want 1 to %d", s.Nights, MaxPeakNights)
	}
	total, top := 0.0, 0.0
	for i, r := range s.Rates {
		if !(r >= 0) || math.IsInf(r, 0) {
			return PeakSpread{}, fmt.Errorf("peak study: bin %d expects %v arrivals: want a finite number >= 0", i+1, r)
		}
		total += r
		top = max(top, r)
	}
	if total == 0 {
		return PeakSpread{}, errors.New("peak study: every bin expects 0 arrivals: give at least one positive rate")
	}
	mean := total / float64(len(s.Rates))
	src := rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15)
	ratios := make([]float64, s.Nights)
	for n := range ratios {
		peak := 0.0
		for _, r := range s.Rates {
			if r > 0 {
				peak = max(peak, distuv.Poisson{Lambda: r, Src: src}.Rand())
			}
		}
		ratios[n] = peak / mean
	}
	sp := spread(ratios)
	sp.MeanPerBin, sp.ExpectedPeakRatio = mean, top/mean
	return sp, nil
}

// ObservedPeaks returns the spread of PeakFactor over nights of recorded
// arrival times (each night's arrivals in [0, span), binned by bin): what
// the history says, night by night. Nights without arrivals are an error.
func ObservedPeaks(nights [][]float64, span, bin float64) (PeakSpread, error) {
	if len(nights) == 0 {
		return PeakSpread{}, errors.New("observed peaks: no nights")
	}
	ratios := make([]float64, len(nights))
	for i, a := range nights {
		pf, err := PeakFactor(a, span, bin)
		if err != nil {
			return PeakSpread{}, fmt.Errorf("observed peaks, night %d: %w", i+1, err)
		}
		ratios[i] = pf
	}
	rates, err := BinRates(nights, span, bin)
	if err != nil {
		return PeakSpread{}, err
	}
	sp := spread(ratios)
	total := 0.0
	for _, r := range rates {
		total += r
	}
	sp.MeanPerBin = total / float64(len(rates))
	sp.ExpectedPeakRatio = slices.Max(rates) / sp.MeanPerBin
	return sp, nil
}

// BinRates estimates a non-homogeneous Poisson process's expected arrivals
// per bin from nights of recorded arrivals: each bin's count averaged over
// the nights (the maximum-likelihood estimate of a piecewise-constant rate).
func BinRates(nights [][]float64, span, bin float64) ([]float64, error) {
	if len(nights) == 0 {
		return nil, errors.New("bin rates: no nights")
	}
	if !finitePositive(span) || !finitePositive(bin) || bin > span {
		return nil, fmt.Errorf("bin rates: span %v and bin %v: want 0 < bin <= span", span, bin)
	}
	n := int(math.Ceil(span/bin - 1e-9))
	rates := make([]float64, n)
	for i, night := range nights {
		for _, a := range night {
			if !(a >= 0 && a < span) {
				return nil, fmt.Errorf("bin rates, night %d: arrival %v outside [0, %v)", i+1, a, span)
			}
			rates[min(int(a/bin), n-1)]++
		}
	}
	for i := range rates {
		rates[i] /= float64(len(nights))
	}
	return rates, nil
}

// Scaled returns rates multiplied so that they sum to total: a rate profile
// carried to another volume (e.g. the history's shape at 100 M jobs a day).
func Scaled(rates []float64, total float64) ([]float64, error) {
	sum := 0.0
	for _, r := range rates {
		sum += r
	}
	if !(sum > 0) || math.IsInf(sum, 0) || !finitePositive(total) {
		return nil, fmt.Errorf("scale rates summing to %v to %v: want both finite and > 0", sum, total)
	}
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = r * total / sum
	}
	return out, nil
}

func spread(ratios []float64) PeakSpread {
	slices.Sort(ratios)
	return PeakSpread{
		Ratios: ratios,
		Median: stat.Quantile(0.5, stat.Empirical, ratios, nil),
		P95:    stat.Quantile(0.95, stat.Empirical, ratios, nil),
		Max:    ratios[len(ratios)-1],
	}
}

// HistoryPeaks estimates the peak factor from a synthetic history of nights
// (notebook 08's method, one call for notebook 10): the nights' arrivals
// give a rate per bin (BinRates), that rate carried to JobsPerDay (the
// window's share of a day at that volume) is a non-homogeneous Poisson
// process, and Days simulated days of it give the spread (PeakStudy).
type HistoryPeaks struct {
	Workload   workload.Config // the history (zero value plus a Seed: one year of nights)
	BinMinutes float64         // bin width, minutes (e.g. 5, a job's duration in seed 003)
	JobsPerDay float64         // the volume to carry the rate to (e.g. Seed003.JobsPerDay)
	Days       int             // simulated days, 1 to MaxPeakNights
	Seed       uint64          // seed of the simulation's random source
}

// Estimate returns the spread night by night in the history and over the
// simulated days at JobsPerDay.
func (h HistoryPeaks) Estimate() (history, process PeakSpread, err error) {
	nights, err := workload.Nights(h.Workload)
	if err != nil {
		return PeakSpread{}, PeakSpread{}, err
	}
	if !finitePositive(h.JobsPerDay) || h.JobsPerDay > MaxJobsPerDay {
		return PeakSpread{}, PeakSpread{}, fmt.Errorf("history peaks: jobs per day = %v: want more than 0 and at most %v", h.JobsPerDay, MaxJobsPerDay)
	}
	w := h.Workload.Window
	if w == (queuekit.Window{}) {
		w = queuekit.DefaultWindow
	}
	span := float64(w.Minutes())
	arrivals := workload.Arrivals(nights)
	if history, err = ObservedPeaks(arrivals, span, h.BinMinutes); err != nil {
		return PeakSpread{}, PeakSpread{}, err
	}
	rates, err := BinRates(arrivals, span, h.BinMinutes)
	if err != nil {
		return PeakSpread{}, PeakSpread{}, err
	}
	if rates, err = Scaled(rates, h.JobsPerDay*span/MinutesPerDay); err != nil {
		return PeakSpread{}, PeakSpread{}, err
	}
	process, err = PeakStudy{Rates: rates, Nights: h.Days, Seed: h.Seed}.Simulate()
	return history, process, err
}

// MinutesPerDay is 24 × 60.
const MinutesPerDay = 24 * 60
