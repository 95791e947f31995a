package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// ErrNoTrace is returned for a Result run with NoTrace: it has no schedule or
// time series to read.
var ErrNoTrace = errors.New("the result has no schedule: run sim.Run with NoTrace false")

// Waits returns the per-job waits of a traced result, in schedule order.
func (r Result) Waits() []float64 {
	w := make([]float64, len(r.Schedule))
	for i, s := range r.Schedule {
		w[i] = s.Wait
	}
	return w
}

// WorkerBusy returns, per worker id, the busy minutes inside the window
// (0 to the cutoff) of a traced result; an exclusive job counts on every
// worker it holds. Their sum over c × cutoff is the result's Utilization.
func (r Result) WorkerBusy() ([]float64, error) {
	if len(r.Schedule) == 0 && r.Jobs > 0 {
		return nil, ErrNoTrace
	}
	busy := make([]float64, max(r.Workers, 0))
	for _, s := range r.Schedule {
		in := math.Max(0, math.Min(s.Finish, r.CutoffMinute)-math.Max(s.Start, 0))
		for _, w := range s.Workers {
			if w < 0 || w >= len(busy) {
				return nil, fmt.Errorf("job %s on worker id %d, outside 0..%d", s.ID, w, len(busy)-1)
			}
			busy[w] += in
		}
	}
	return busy, nil
}

// Bin is one histogram bin: the values v with Low <= v < High.
type Bin struct {
	Low, High float64
	Count     int
}

// Bins counts values (a result's Waits, or the per-replication p95 waits of
// a Monte Carlo run) into bins of the given width starting at
// floor(min/width)*width, with gonum's stat.Histogram. There are
// floor((max−start)/width)+1 bins, so the last one holds the maximum.
func Bins(values []float64, width float64) ([]Bin, error) {
	if len(values) == 0 {
		return nil, errors.New("no values")
	}
	if !(width > 0) || math.IsInf(width, 0) {
		return nil, fmt.Errorf("bin width %v, want a positive number", width)
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("value %d is %v", i, v)
		}
	}
	x := slices.Clone(values)
	slices.Sort(x)
	lo, hi := x[0], x[len(x)-1]
	start := math.Floor(lo/width) * width
	// Count in floats first: converting a huge quotient to int is undefined.
	nf := math.Floor((hi-start)/width) + 1
	if !(nf <= 10000) {
		return nil, fmt.Errorf("bin width %v makes %.3g bins for values %v..%v: use a wider bin", width, nf, lo, hi)
	}
	n := int(nf)
	dividers := make([]float64, n+1)
	for i := range dividers {
		dividers[i] = start + float64(i)*width
	}
	// Rounding must not leave the maximum on or past the last divider.
	if dividers[n] <= hi {
		dividers[n] = math.Nextafter(hi, math.Inf(1))
	}
	counts := stat.Histogram(nil, dividers, x, nil)
	bins := make([]Bin, n)
	for i := range bins {
		bins[i] = Bin{Low: start + float64(i)*width, High: start + float64(i+1)*width, Count: int(counts[i])}
	}
	return bins, nil
}

// AutoBinWidth picks a round bin width (1, 2, 5, 10, 20, 50, ...) giving
// about ten bins for the values; 1 if they are all equal.
func AutoBinWidth(values []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	span := hi - lo
	if !(span > 0) {
		return 1
	}
	raw := span / 10
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
