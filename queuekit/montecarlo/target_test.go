package montecarlo

import (
	"context"
	"math"
	"testing"
)

// 3 of 5 values above 10: Wilson(3, 5).
func TestExceedsCountsValuesAboveTheLimit(t *testing.T) {
	got := Exceeds([]float64{5, 10, 11, 20, 30}, 10)
	if want := Wilson(3, 5); got != want {
		t.Errorf("Exceeds = %+v, want %+v", got, want)
	}
}

// Welch by hand: x = 1..5 (mean 3, variance 2.5), y = 2, 4, 6, 8, 10 (mean
// 6, variance 10): se² = 2.5/5 + 10/5 = 2.5, df = 2.5² / (0.5²/4 + 2²/4) =
// 6.25/1.0625 = 5.882; t(0.975, 5.882) = 2.4588 (between t(6) = 2.4469 and
// t(5) = 2.5706, interpolated in 1/df); half = 2.4588·√2.5 = 3.8877.
func TestWelchInterval(t *testing.T) {
	i := welch([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10})
	near(t, "difference", i.Mean, 3, 1e-12)
	near(t, "half-width", i.HalfWidth(), 3.8877, 0.001)
}

// Common random numbers make the c=2 versus c=3 difference far more
// precise than two independent runs: the paired interval must be narrower
// by more than half on the stable night (measured ratio about 0.3; the
// bound is loose on purpose).
func TestPairedIntervalIsNarrowerThanIndependent(t *testing.T) {
	n := night(t, "2026-05-13")
	a := Config{Workers: 2, Model: LogNormalCV(0.5), Replications: 2000, Seed: 7}
	b := a
	b.Workers = 3
	paired, err := Compare(context.Background(), n, a, b)
	if err != nil {
		t.Fatal(err)
	}
	ind, err := CompareIndependent(context.Background(), n, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if ind.B.Replications != 2000 || ind.A.P95Wait == ind.B.P95Wait {
		t.Fatalf("independent runs look identical: %+v vs %+v", ind.A.P95Wait, ind.B.P95Wait)
	}
	pw, iw := paired.DiffP95Wait.HalfWidth(), ind.DiffP95Wait.HalfWidth()
	if !(pw > 0) || !(pw < iw/2) {
		t.Errorf("paired half-width %.3f, independent %.3f: want paired under half", pw, iw)
	}
	if math.Abs(paired.DiffP95Wait.Mean-ind.DiffP95Wait.Mean) > iw {
		t.Errorf("the two estimates disagree: paired %.2f, independent %.2f ± %.2f", paired.DiffP95Wait.Mean, ind.DiffP95Wait.Mean, iw)
	}
}

// A larger runtime CV spreads the nights: P(overflow) on the stable night
// with 3 workers must rise with the CV (deterministic runtimes never
// overflow it; see sim's reference scenario, drained at minute 160).
func TestSweepCVRaisesOverflowWithVariability(t *testing.T) {
	ss, err := SweepCV(context.Background(), night(t, "2026-05-13"), Config{Workers: 3, Replications: 2000, Seed: 1}, []float64{0.25, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ss); i++ {
		if !(ss[i].OverflowProbability.Estimate > ss[i-1].OverflowProbability.Estimate) {
			t.Errorf("P(overflow) %v at the higher CV, %v before", ss[i].OverflowProbability.Estimate, ss[i-1].OverflowProbability.Estimate)
		}
	}
	if _, err := SweepCV(context.Background(), night(t, "2026-05-13"), Config{Workers: 3, Replications: 10}, []float64{0}); err == nil {
		t.Error("CV 0 accepted")
	}
}
