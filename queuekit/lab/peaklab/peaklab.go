// Package peaklab holds notebook 08's sentence on the busiest 5-minute bin:
// the history's spread night by night beside the process's at 100 M jobs a
// day, and the machines a fleet sized on that p95 needs.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package peaklab

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/format"
)

// PeakSummary is the Markdown sentence under notebook 08's peak study, built
// from its values: the busiest bin over the mean in the history (one ratio
// a night, history.Ratios) and in the simulated days of the process
// (days.Ratios, and its rate alone: days.ExpectedPeakRatio), and the
// machines a fleet sized on the process's p95 needs. Ratios print with four
// significant digits.
func PeakSummary(history, days capacity.PeakSpread, machines int) string {
	s := func(v float64) string { return format.Sig(v, 4) }
	return fmt.Sprintf("Busiest 5-minute bin over the mean. **The history, night by night** (%s nights): median %s, p95 %s, max %s. "+
		"**The process at 100 M jobs a day** (%s simulated days): median %s, p95 %s, max %s; its rate alone says %s. "+
		"Sized on that p95, seed 003's fleet needs **%s machines**.",
		format.Int(len(history.Ratios)), s(history.Median), s(history.P95), s(history.Max),
		format.Int(len(days.Ratios)), s(days.Median), s(days.P95), s(days.Max), s(days.ExpectedPeakRatio), format.Int(machines))
}
