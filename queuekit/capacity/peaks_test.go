package capacity

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/workload"
	"gonum.org/v1/gonum/stat/distuv"
)

// For a homogeneous Poisson process with m expected arrivals in each of n
// independent bins, the busiest bin's count K has P(K <= k) = F(k)^n, F the
// Poisson(m) distribution function. The simulated nights must match it.
func TestPeakStudyMatchesTheMaxOfIndependentPoissons(t *testing.T) {
	const m, bins, nights = 10.0, 48, 4000
	rates := make([]float64, bins)
	for i := range rates {
		rates[i] = m
	}
	sp, err := PeakStudy{Rates: rates, Nights: nights, Seed: 7}.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	if sp.MeanPerBin != m || sp.ExpectedPeakRatio != 1 {
		t.Fatalf("mean per bin %v, expected peak ratio %v: want %v and 1", sp.MeanPerBin, sp.ExpectedPeakRatio, m)
	}
	f := distuv.Poisson{Lambda: m}
	theoryQuantile := func(p float64) float64 { // smallest k with F(k)^n >= p
		for k := 0.0; ; k++ {
			if math.Pow(f.CDF(k), bins) >= p {
				return k
			}
		}
	}
	for k := 14.0; k <= 26; k++ {
		want := math.Pow(f.CDF(k), bins)
		got := 0
		for _, r := range sp.Ratios {
			if r*m <= k+1e-9 {
				got++
			}
		}
		se := math.Sqrt(want * (1 - want) / nights)
		if d := math.Abs(float64(got)/nights - want); d > 4*se+1e-3 {
			t.Errorf("P(max <= %v) = %.4f simulated, %.4f by theory (4 standard errors = %.4f)", k, float64(got)/nights, want, 4*se)
		}
	}
	for _, q := range []struct {
		name string
		p    float64
		got  float64
	}{{"median", 0.5, sp.Median}, {"p95", 0.95, sp.P95}} {
		want := theoryQuantile(q.p)
		if math.Abs(q.got*m-want) > 1 {
			t.Errorf("%s of the busiest bin: %v arrivals simulated, %v by theory (within 1)", q.name, q.got*m, want)
		}
	}
}

// At a large volume the Poisson noise is about sqrt(m)/m of the mean, so the
// busiest bin's ratio is the profile's own max/mean within a few of those.
func TestPeakStudyAtScaleIsTheProfile(t *testing.T) {
	rates, err := Scaled([]float64{4, 1, 1, 2}, 8e6) // max/mean = 4/2 = 2
	if err != nil {
		t.Fatal(err)
	}
	sp, err := PeakStudy{Rates: rates, Nights: 200, Seed: 1}.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	tol := 5 * math.Sqrt(4e6) / 2e6 // 5 standard deviations of the top bin, over the mean
	if sp.ExpectedPeakRatio != 2 || math.Abs(sp.Median-2) > tol || math.Abs(sp.Max-2) > tol {
		t.Fatalf("expected %v, median %v, max %v: want 2 within %v", sp.ExpectedPeakRatio, sp.Median, sp.Max, tol)
	}
}

func TestObservedPeaksByHand(t *testing.T) {
	// 240 minutes in 5-minute bins: 48 bins. Night 1: 4 of 10 in bin 0 -> 4 / (10/48) = 19.2.
	// Night 2: 2 of 8 in one bin -> 2 / (8/48) = 12.
	n1 := []float64{0, 1, 2, 3, 60, 60, 60, 120, 120, 200}
	n2 := []float64{0, 30, 60, 61, 90, 120, 150, 180}
	sp, err := ObservedPeaks([][]float64{n1, n2}, 240, 5)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Max != 19.2 || sp.Ratios[0] != 12 {
		t.Fatalf("ratios %v: want 12 and 19.2", sp.Ratios)
	}
	// Pooled: bin 0 holds 4 + 1 = 5 arrivals in 2 nights = 2.5 a night; the mean is 18/2/48 = 0.1875.
	if math.Abs(sp.MeanPerBin-0.1875) > 1e-12 || math.Abs(sp.ExpectedPeakRatio-2.5/0.1875) > 1e-12 {
		t.Fatalf("mean per bin %v, expected peak ratio %v: want 0.1875 and %v", sp.MeanPerBin, sp.ExpectedPeakRatio, 2.5/0.1875)
	}
}

func TestPeakInputsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"no bins", func() error { _, err := PeakStudy{Nights: 1}.Simulate(); return err }, "no bins"},
		{"no nights", func() error { _, err := PeakStudy{Rates: []float64{1}}.Simulate(); return err }, "nights = 0"},
		{"negative rate", func() error { _, err := PeakStudy{Rates: []float64{1, -1}, Nights: 1}.Simulate(); return err }, "bin 2 expects -1"},
		{"NaN rate", func() error { _, err := PeakStudy{Rates: []float64{math.NaN()}, Nights: 1}.Simulate(); return err }, "bin 1 expects NaN"},
		{"all zero", func() error { _, err := PeakStudy{Rates: []float64{0, 0}, Nights: 1}.Simulate(); return err }, "every bin expects 0"},
		{"arrival outside", func() error { _, err := BinRates([][]float64{{240}}, 240, 5); return err }, "arrival 240 outside"},
		{"empty night", func() error { _, err := ObservedPeaks([][]float64{{}}, 240, 5); return err }, "night 1: peak factor: no arrivals"},
		{"scale zero", func() error { _, err := Scaled([]float64{0}, 1); return err }, "want both finite"},
	} {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func ExamplePeakStudy_Simulate() {
	// A flat night: 48 five-minute bins expecting 10 arrivals each. The busiest
	// bin is above the mean on every night, by chance alone. By theory
	// (P(max <= k) = F(k)^48 for the Poisson(10) distribution function F) the
	// median of the busiest bin is 18 arrivals (1.8) and its p95 21 (2.1).
	rates := make([]float64, 48)
	for i := range rates {
		rates[i] = 10
	}
	sp, err := PeakStudy{Rates: rates, Nights: 1000, Seed: 1}.Simulate()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("busiest bin over the mean: median %.1f, p95 %.1f, max %.1f\n", sp.Median, sp.P95, sp.Max)
	// Output:
	// busiest bin over the mean: median 1.8, p95 2.1, max 2.6
}

// The sample nights request windows on the hour (01:00, 02:00, 03:00), so
// every arrival of the history falls in the first 5 minutes of an hour of
// the window: the 5-minute rate profile is the hourly one packed into a
// twelfth of the time, and its peak ratio is 12 times the hourly one.
// Scaling the rate to 100 M jobs a day keeps the ratio, and the Poisson
// noise of bins of millions of arrivals moves it by well under 1 %.
func TestHistoryPeaks(t *testing.T) {
	est := func(bin float64) (PeakSpread, PeakSpread) {
		h, p, err := HistoryPeaks{Workload: workloadSeed1, BinMinutes: bin, JobsPerDay: Seed003.JobsPerDay, Days: 200, Seed: 1}.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		return h, p
	}
	h5, p5 := est(5)
	h60, p60 := est(60)
	if math.Abs(h5.ExpectedPeakRatio-12*h60.ExpectedPeakRatio) > 1e-9 {
		t.Fatalf("5-minute peak ratio %v, hourly %v: want 12 times", h5.ExpectedPeakRatio, h60.ExpectedPeakRatio)
	}
	for _, c := range []struct{ h, p PeakSpread }{{h5, p5}, {h60, p60}} {
		if math.Abs(c.p.ExpectedPeakRatio-c.h.ExpectedPeakRatio) > 1e-9*c.h.ExpectedPeakRatio {
			t.Errorf("scaled peak ratio %v, history %v: want equal", c.p.ExpectedPeakRatio, c.h.ExpectedPeakRatio)
		}
		if d := math.Abs(c.p.Max/c.p.ExpectedPeakRatio - 1); d > 0.01 {
			t.Errorf("simulated max %v against the rate's %v: %v apart, want under 1 %%", c.p.Max, c.p.ExpectedPeakRatio, d)
		}
	}
	// Night by night a ratio is bins × (busiest count) / (jobs of the night):
	// with 48 bins and 8 to 24 jobs it lies in [48/24, 48].
	if h5.Ratios[0] < 2 || h5.Max > 48 || len(h5.Ratios) != 365 {
		t.Errorf("history ratios from %v to %v over %d nights: want within [2, 48] over 365", h5.Ratios[0], h5.Max, len(h5.Ratios))
	}
	if _, _, err := (HistoryPeaks{Workload: workloadSeed1, BinMinutes: 5, Days: 1}).Estimate(); err == nil || !strings.Contains(err.Error(), "jobs per day = 0") {
		t.Errorf("no volume: error %v, want one naming jobs per day", err)
	}
}

var workloadSeed1 = workload.Config{Seed: 1}

func ExampleHistoryPeaks_Estimate() {
	history, process, err := HistoryPeaks{Workload: workload.Config{Seed: 1}, BinMinutes: 5,
		JobsPerDay: Seed003.JobsPerDay, Days: 1000, Seed: 1}.Estimate()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("history night by night: median %.1f, p95 %.1f, max %.1f\n", history.Median, history.P95, history.Max)
	fmt.Printf("the process at 100 M a day: median %.2f, p95 %.2f, max %.2f\n", process.Median, process.P95, process.Max)
	// The figures are pinned regression values of seed 1 (TestHistoryPeaks
	// checks what theory says of them: the process's spread under 1 %).
	// Output:
	// history night by night: median 24.0, p95 32.0, max 38.4
	// the process at 100 M a day: median 18.16, p95 18.17, max 18.19
}
