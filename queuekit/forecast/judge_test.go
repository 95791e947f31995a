package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// The stable night has 270 estimated minutes; on 3 workers that is 90 a
// worker. With reference 45 and exponent 0.5 every job runs √2 times its
// estimate × bias (no noise: σ = 0).
func TestLoadTruthStretchesRuntimesWithTheNightsLoad(t *testing.T) {
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	truth := Truth{Bias: DefaultTruth.Bias, Sigma: 0, LoadExponent: 0.5, LoadReference: 45}
	r, err := Realise(n, 3, truth, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range n.Jobs {
		want := float64(j.RuntimeMinutes) * DefaultTruth.Bias[j.WorkloadClass] * math.Sqrt2
		if math.Abs(r.Runtimes[i]-want) > 1e-9 {
			t.Errorf("job %s: runtime %v, want %v", j.JobID, r.Runtimes[i], want)
		}
	}
	// At the reference load the factor is 1.
	same := Truth{Bias: DefaultTruth.Bias, Sigma: 0, LoadExponent: 0.5, LoadReference: 90}
	r, err = Realise(n, 3, same, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if want := 25 * DefaultTruth.Bias[queuekit.ClassETL]; math.Abs(r.Runtimes[0]-want) > 1e-9 {
		t.Errorf("first job (etl, 25 min) at the reference load: %v, want %v", r.Runtimes[0], want)
	}
}

// Without noise the oracle knows each night's drain exactly: its MAE is 0.
func TestOracleIsExactWithoutNoise(t *testing.T) {
	truth := Truth{Bias: DefaultTruth.Bias, Sigma: 0}
	hist, err := History(HistoryConfig{Nights: 40, Heavy: 4, Seed: 3, Truth: truth})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(hist[:30], hist[30:])
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(ev.MAEOracle) {
		t.Errorf("MAEOracle before AddOracle = %v, want NaN", ev.MAEOracle)
	}
	if _, err := ev.MAE(NameOracle, false); err == nil || !strings.Contains(err.Error(), "AddOracle") {
		t.Errorf("oracle MAE before AddOracle: %v, want an error naming AddOracle", err)
	}
	if err := ev.AddOracle(truth, 3, 1); err != nil {
		t.Fatal(err)
	}
	if ev.MAEOracle != 0 {
		t.Errorf("MAEOracle = %v, want 0", ev.MAEOracle)
	}
	for _, r := range ev.Rows {
		if r.Oracle != r.Realised {
			t.Errorf("%s: oracle %v, realised %v", r.BatchDate, r.Oracle, r.Realised)
		}
	}
	if err := ev.AddOracle(truth, 0, 1); err == nil {
		t.Error("0 draws: want an error")
	}
}

// With noise the oracle's MAE is above 0 and no forecaster's MAE is far
// below it: it is a floor (allowing for the sampling error of 73 nights).
func TestOracleIsAFloor(t *testing.T) {
	hist, err := History(HistoryConfig{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(hist[:292], hist[292:])
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.AddOracle(DefaultTruth, 31, 2); err != nil {
		t.Fatal(err)
	}
	if !(ev.MAEOracle > 0) {
		t.Fatalf("MAEOracle = %v, want > 0", ev.MAEOracle)
	}
	for _, name := range Forecasters {
		p, err := ev.Paired(name, NameOracle, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.High < 0 {
			t.Errorf("%s is better than the oracle beyond doubt: %+v", name, p)
		}
	}
}

// Errors {2, 4, 6} against {1, 2, 3} on the same nights: differences
// {1, 2, 3}, mean 2, s = 1, t(0.975, 2) = 4.302653, half-width 4.302653/√3.
func TestPairedIntervalIsTheMeanDifferenceWithT(t *testing.T) {
	ev := Evaluation{Rows: []Row{
		{Realised: 10, Regression: 12, SimFitted: 11, SimEstimates: 10},
		{Realised: 10, Regression: 6, SimFitted: 8, SimEstimates: 10},
		{Realised: 10, Regression: 16, SimFitted: 13, SimEstimates: 10, Heavy: true},
	}}
	p, err := ev.Paired(NameRegression, NameSimFitted, false)
	if err != nil {
		t.Fatal(err)
	}
	half := 4.302652729911275 / math.Sqrt(3)
	if math.Abs(p.Mean-2) > 1e-12 || math.Abs(p.Low-(2-half)) > 1e-6 || math.Abs(p.High-(2+half)) > 1e-6 {
		t.Errorf("paired = %+v, want 2 ± %v", p, half)
	}
	m, err := ev.MAE(NameRegression, false)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.Mean-4) > 1e-12 || math.Abs(m.High-(4+2*half)) > 1e-6 {
		t.Errorf("MAE(regression) = %+v, want 4 ± %v", m, 2*half)
	}
	heavy, err := ev.Errors(NameRegression, true)
	if err != nil || len(heavy) != 1 || heavy[0] != 6 {
		t.Errorf("heavy errors %v, %v; want [6]", heavy, err)
	}
	if _, err := ev.Errors("crystal ball", false); err == nil || !strings.Contains(err.Error(), `"crystal ball"`) {
		t.Errorf("unknown forecaster: %v", err)
	}
	if err := ev.AddOracle(DefaultTruth, 3, 1); err == nil {
		t.Error("rows without nights: want an error")
	}
}

func TestVerdictNamesAWinnerOnlyWhenEverySeedAgrees(t *testing.T) {
	agree := []SeedResult{{Seed: 1, All: []float64{40, 80, 30}, Heavy: []float64{100, 180, 60}},
		{Seed: 2, All: []float64{38, 70, 27}, Heavy: []float64{120, 150, 50}}}
	if w, wins := Verdict(agree, false); w != NameSimFitted || wins[2] != 2 {
		t.Errorf("agreeing seeds: %q %v", w, wins)
	}
	flip := append(agree, SeedResult{Seed: 5, All: []float64{36, 72, 29}, Heavy: []float64{30, 145, 48}})
	if w, wins := Verdict(flip, true); w != "" || wins[0] != 1 || wins[2] != 2 {
		t.Errorf("a seed that flips the heavy winner: %q %v, want no winner, wins [1 0 2]", w, wins)
	}
	if w, _ := Verdict(nil, false); w != "" {
		t.Errorf("no seeds: %q", w)
	}
}

// Two forecasters judged on the same three nights: the regression's errors
// are 2, 4 and 6 minutes, the fitted simulator's 1, 2 and 3, so the paired
// difference is 2 minutes a night on average, with a t interval.
func ExampleEvaluation_Paired() {
	ev := Evaluation{Rows: []Row{
		{Realised: 10, Regression: 12, SimFitted: 11},
		{Realised: 10, Regression: 6, SimFitted: 8},
		{Realised: 10, Regression: 16, SimFitted: 13},
	}}
	p, err := ev.Paired(NameRegression, NameSimFitted, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.2f [%.2f, %.2f]\n", p.Mean, p.Low, p.High)
	// Output: 2.00 [-0.48, 4.48]
}
