package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// The runtime fit recovers the truth: with actual = estimate·b·ε and
// ln ε ~ N(0, σ²), E[actual | estimate] = estimate·b·e^{σ²/2}, and the
// through-the-origin slope Σxy/Σx² is an unbiased estimate of b·e^{σ²/2}
// (1.25 · e^{0.03125} = 1.2897 for ETL). Its standard error is about
// 0.25·b/√n with n in the hundreds: 0.02 or less; allow 0.06.
func TestFitRuntimesRecoversTheBias(t *testing.T) {
	hist, err := History(HistoryConfig{Nights: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, err := FitRuntimes(hist)
	if err != nil {
		t.Fatal(err)
	}
	for class, b := range DefaultTruth.Bias {
		want := b * math.Exp(DefaultTruth.Sigma*DefaultTruth.Sigma/2)
		if got := m.Factor[class]; math.Abs(got-want) > 0.06 {
			t.Errorf("%s: factor %.4f from %d jobs, want %.4f", class, got, m.Jobs[class], want)
		}
	}
}

// Least squares on data that is exactly linear in the features returns the
// coefficients that made it.
func TestFitRegressionExactData(t *testing.T) {
	hist, err := History(HistoryConfig{Nights: 60, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 2, 3, -1}
	for i := range hist {
		hist[i].Drain = floatsDot(want, Features(hist[i].Night, hist[i].Workers))
	}
	reg, err := FitRegression(hist)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if math.Abs(reg.Coef[i]-w) > 1e-6 {
			t.Errorf("coef %s = %v, want %v", FeatureNames[i], reg.Coef[i], w)
		}
	}
	if _, err := FitRegression(hist[:3]); err == nil {
		t.Error("3 nights for 4 coefficients: want an error")
	}
}

// When estimates are the truth (bias 1, no noise), the simulator fed the
// estimates is exact: its error is zero on every night, and the reference
// night 2026-05-13 on 3 workers drains at minute 160 (queuekit/sim's
// TestReferenceScenarios derives it by hand).
func TestSimulatorExactWhenEstimatesAreRight(t *testing.T) {
	exact := Truth{Bias: map[string]float64{}, Sigma: 1e-12}
	for _, c := range queuekit.WorkloadClasses {
		exact.Bias[c] = 1
	}
	train, err := History(HistoryConfig{Nights: 50, Seed: 3, Truth: exact})
	if err != nil {
		t.Fatal(err)
	}
	samples, err := SampleRecords(exact, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(train, samples)
	if err != nil {
		t.Fatal(err)
	}
	if ev.MAESimEstimates > 1e-6 {
		t.Errorf("simulator with exact estimates: MAE %v, want 0", ev.MAESimEstimates)
	}
	for _, d := range ev.ByDate() {
		if d.BatchDate == "2026-05-13" && math.Abs(d.MeanRealised-160) > 1e-6 {
			t.Errorf("2026-05-13 on 3 workers drained at %v, want 160", d.MeanRealised)
		}
		if d.BatchDate == "2026-05-14" && math.Abs(d.MeanRealised-490) > 1e-6 {
			t.Errorf("2026-05-14 on 2 workers drained at %v, want 490", d.MeanRealised)
		}
	}
}

// The study's verdict, with the metric stated: mean absolute error of the
// drain minute on held-out nights. The ordering is the claim the notebook
// makes; the figures in the comments are pinned regression values for seed 1
// (not derived), seen on seeds 1 to 3 with the same ordering.
func TestStudyVerdict(t *testing.T) {
	s, err := RunStudy(StudyConfig{History: HistoryConfig{Seed: 1}, TrainShare: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if s.Train != 292 || s.Test != 73 {
		t.Errorf("train %d, test %d; want 292 and 73 (80 %% of 365)", s.Train, s.Test)
	}
	g := s.Generated
	// Seed 1: simulator + fitted runtimes 32.1, regression 41.9, simulator + estimates 84.1 minutes.
	if !(g.MAESimFitted < g.MAERegression && g.MAERegression < g.MAESimEstimates) {
		t.Errorf("held-out MAE: sim+fitted %.1f, regression %.1f, sim+estimates %.1f; want them in that order",
			g.MAESimFitted, g.MAERegression, g.MAESimEstimates)
	}
	by := s.Samples.ByDate()
	if len(by) != 4 || by[3].BatchDate != "2026-05-14" || by[3].Workers != 2 || by[3].Draws != SampleDraws {
		t.Fatalf("sample nights: %+v", by)
	}
	// The overloaded night: seed 1 gives 47.4 (sim+fitted) vs 65.4 (regression) vs 134.7 minutes.
	o := by[3]
	if !(o.MAESimFitted < o.MAERegression && o.MAERegression < o.MAESimEstimates) {
		t.Errorf("2026-05-14: sim+fitted %.1f, regression %.1f, sim+estimates %.1f", o.MAESimFitted, o.MAERegression, o.MAESimEstimates)
	}
	for _, v := range []float64{g.MAERegression, g.MAESimEstimates, g.MAESimFitted, o.MeanRealised} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("non-finite figure %v", v)
		}
	}
	if _, err := RunStudy(StudyConfig{History: HistoryConfig{Seed: 1}, TrainShare: 1}); err == nil {
		t.Error("train share 1: want an error")
	}
	// Zero means the documented default, 0.8: the same split as above.
	if d, err := RunStudy(StudyConfig{History: HistoryConfig{Seed: 1}}); err != nil || d.Train != 292 || d.Test != 73 {
		t.Errorf("train share 0: train %d, test %d, %v; want the default 0.8 split, 292 and 73", d.Train, d.Test, err)
	}
}

func TestRealiseRejectsUnknownClass(t *testing.T) {
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Realise(n, 3, Truth{Bias: map[string]float64{"etl": 1}, Sigma: 0.1}, rand.New(rand.NewPCG(1, 2)))
	if err == nil {
		t.Error("truth without a bias for refresh: want an error")
	}
}

func ExampleRunStudy() {
	s, err := RunStudy(StudyConfig{History: HistoryConfig{Seed: 1}, TrainShare: 0.8})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := s.Generated
	fmt.Printf("held-out nights: %d; MAE of the drain minute:\n", s.Test)
	fmt.Printf("simulator + fitted runtimes %.0f min, regression %.0f min, simulator + estimates %.0f min\n",
		g.MAESimFitted, g.MAERegression, g.MAESimEstimates)
	// Output:
	// held-out nights: 73; MAE of the drain minute:
	// simulator + fitted runtimes 32 min, regression 42 min, simulator + estimates 84 min
}
