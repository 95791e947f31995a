package queuekit

import (
	"cmp"
	"math"
	"slices"
)

// Quantile is the module's one quantile rule: the q-quantile of values by
// nearest rank, the value at index ⌈q·n⌉−1 of the n sorted values (values
// itself is not modified; values already sorted are not copied, so the
// simulator, which sorts its reused buffer of waits, allocates nothing).
// The simulator's p95 wait, the executors' reports, a measured read's
// spread and the charts all use it. With fewer than 20 values the p95 is
// the largest one (⌈0.95·n⌉ = n for n < 20): a night of 10 to 12 jobs has
// its longest wait as its p95. ok is false for no values or q outside
// (0, 1]; each caller states what it shows then (0, NaN, a zero Spread).
func Quantile[T cmp.Ordered](values []T, q float64) (v T, ok bool) {
	if len(values) == 0 || !(q > 0 && q <= 1) {
		return v, false
	}
	if !slices.IsSorted(values) {
		values = slices.Clone(values)
		slices.Sort(values)
	}
	return values[int(math.Ceil(q*float64(len(values))))-1], true
}
