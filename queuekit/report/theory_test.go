package report

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// 2026-05-13 arrives at minutes 0 (4 jobs), 60 (3) and 120 (3) of a
// 240-minute window: the ten gaps are seven 0s, two 60s and the
// wrap-around 240 − 120 = 120, mean 240/10 = 24 = 1/λ, population variance
// (2·60² + 120²)/10 − 24² = 1584, so ca² = 1584/576 = 2.75. Runtimes 25, 20,
// 50, 25, 25, 20, 35, 25, 20, 25: mean 27, population sd 8.718, cs = 0.3229.
func TestVariabilityOfTheStableNight(t *testing.T) {
	ca, cs, err := Variability(night(t, "2026-05-13"))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ca-math.Sqrt(2.75)) > 1e-12 || math.Abs(cs-math.Sqrt(76.0)/27) > 1e-12 {
		t.Errorf("ca %v cs %v, want √2.75 = %v and √76/27 = %v", ca, cs, math.Sqrt(2.75), math.Sqrt(76.0)/27)
	}
}

// The arrival gaps' mean is the window over the jobs, 1/λ, so ca is the
// textbook value for streams whose ca theory knows: evenly spaced arrivals
// are deterministic (ca = 0); one batch of n at once has ca² = n − 1
// (n − 1 zero gaps and one gap of w: E[g²] = w²/n, mean w/n); a Poisson
// stream has ca = 1 (exponential gaps), here within sampling error of
// 100,000 arrivals (the estimate's standard error is about 0.005).
func TestArrivalCVMatchesTheory(t *testing.T) {
	even := []float64{0, 24, 48, 72, 96, 120, 144, 168, 192, 216}
	if got := ArrivalCV(even, 240); math.Abs(got) > 1e-12 {
		t.Errorf("evenly spaced: ca %v, want 0", got)
	}
	batch := make([]float64, 12)
	if got := ArrivalCV(batch, 240); math.Abs(got-math.Sqrt(11)) > 1e-12 {
		t.Errorf("one batch of 12: ca %v, want √11 = %v", got, math.Sqrt(11))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var poisson []float64
	const w = 100_000.0
	for t := rng.ExpFloat64(); t < w; t += rng.ExpFloat64() {
		poisson = append(poisson, t)
	}
	if got := ArrivalCV(poisson, w); math.Abs(got-1) > 0.02 {
		t.Errorf("Poisson stream of %d arrivals: ca %v, want 1 ± 0.02", len(poisson), got)
	}
}

// On an M/M/3 workload with λ = 2, μ = 1 (per minute) Erlang C gives
// Wq = 4/9 minute (derived in sim's TestNightEngineMatchesErlangC); the
// engine's 95% interval must contain it, and Little's law must hold to
// rounding on a run that starts and ends empty.
func TestCheckEngineAgreesWithErlangCAndLittle(t *testing.T) {
	c, err := CheckEngine(mmc.Queue{Lambda: 2, Mu: 1, C: 3}, 200_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.ErlangWq-4.0/9) > 1e-12 {
		t.Errorf("Erlang C Wq %v, want 4/9", c.ErlangWq)
	}
	if c.Low > c.ErlangWq || c.High < c.ErlangWq || (c.High-c.Low) > 0.2*c.ErlangWq {
		t.Errorf("engine Wq %v [%v, %v] does not contain 4/9 or is too wide", c.SimWq, c.Low, c.High)
	}
	if math.Abs(c.TimeAverageQueue-c.LambdaW) > 1e-9*c.LambdaW {
		t.Errorf("Little: time-average queue %v, λW %v", c.TimeAverageQueue, c.LambdaW)
	}
}

// Erlang C's wait grows like 1/(1−ρ): for c = 1 (M/M/1, μ = 1) Wq =
// ρ/(1−ρ): 1 at ρ = 0.5, 9 at ρ = 0.9. The simulation's interval must
// contain it.
func TestWaitVsLoadGrowsAsRhoApproachesOne(t *testing.T) {
	ps, err := WaitVsLoad(context.Background(), 1, []float64{0.5, 0.9}, 400_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1, 9} {
		p := ps[i]
		if math.Abs(p.ErlangWq-want) > 1e-9 {
			t.Errorf("ρ = %v: Erlang Wq %v, want %v", p.Rho, p.ErlangWq, want)
		}
		if p.Low > want || p.High < want {
			t.Errorf("ρ = %v: simulated Wq %v [%v, %v] does not contain %v", p.Rho, p.SimWq, p.Low, p.High, want)
		}
	}
	if _, err := WaitVsLoad(context.Background(), 3, []float64{1}, 1000, 1); err == nil {
		t.Error("ρ = 1 accepted")
	}
}

// The stable night's queue is empty before the cutoff, so L = λW exactly:
// 10 jobs / 240 min × 29 min = 1.2083 jobs waiting on average. The
// overloaded night still has jobs waiting at the cutoff: the time average
// over the window (clipped) is below λW.
func TestLittleOnTheNights(t *testing.T) {
	r, err := sim.Run(night(t, "2026-05-13"), sim.Config{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	l, lw := Little(r, 240)
	if math.Abs(l-lw) > 1e-12 || math.Abs(lw-10.0/240*29) > 1e-12 {
		t.Errorf("stable night: L %v, λW %v; want both 290/240", l, lw)
	}
	r, err = sim.Run(night(t, "2026-05-14"), sim.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l, lw := Little(r, 240); !(l < lw) {
		t.Errorf("overloaded night: L %v should be below λW %v (waits after the cutoff are clipped)", l, lw)
	}
}
