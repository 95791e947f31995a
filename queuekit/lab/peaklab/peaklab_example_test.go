package peaklab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/lab/peaklab"
)

// Three history nights and two simulated days: the counts are the lengths
// of Ratios, the ratios print with four significant digits.
func ExamplePeakSummary() {
	history := capacity.PeakSpread{Ratios: []float64{2.5, 3, 4.25}, Median: 3, P95: 4.25, Max: 4.25}
	days := capacity.PeakSpread{Ratios: []float64{1.2, 1.31234}, Median: 1.2, P95: 1.31234, Max: 1.31234, ExpectedPeakRatio: 1.15}
	fmt.Println(peaklab.PeakSummary(history, days, 10851))
	// Output:
	// Busiest 5-minute bin over the mean. **The history, night by night** (3 nights): median 3, p95 4.25, max 4.25. **The process at 100 M jobs a day** (2 simulated days): median 1.2, p95 1.312, max 1.312; its rate alone says 1.15. Sized on that p95, seed 003's fleet needs **10,851 machines**.
}
