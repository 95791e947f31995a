package chart

import (
	"testing"

	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

func TestFromSweepCarriesEveryInterval(t *testing.T) {
	s := montecarlo.Summary{Workers: 3,
		P95Wait:             montecarlo.Interval{Mean: 40, Low: 38, High: 42},
		Utilization:         montecarlo.Interval{Mean: 0.6, Low: 0.59, High: 0.61},
		OverflowProbability: montecarlo.Proportion{Estimate: 0.03, Low: 0.02, High: 0.04}}
	got := FromSweep([]montecarlo.Summary{s})
	want := SweepPoint{Workers: 3, P95Wait: 40, P95Low: 38, P95High: 42, Overflow: 0.03, OverflowLow: 0.02,
		OverflowHigh: 0.04, Utilization: 0.6, UtilizationLow: 0.59, UtilizationHigh: 0.61}
	if len(got) != 1 || got[0] != want {
		t.Errorf("FromSweep = %+v, want %+v", got, want)
	}
}
