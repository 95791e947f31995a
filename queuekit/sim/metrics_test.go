package sim

import (
	"errors"
	"math"
	"testing"
)

func TestBinsCountEveryValueOnce(t *testing.T) {
	vals := []float64{0, 0, 4.9, 5, 12, 30}
	bins, err := Bins(vals, 5)
	if err != nil {
		t.Fatal(err)
	}
	// [0,5): 0, 0, 4.9; [5,10): 5; [10,15): 12; nothing until [30,35): 30.
	want := []int{3, 1, 1, 0, 0, 0, 1}
	if len(bins) != len(want) {
		t.Fatalf("%d bins, want %d: %+v", len(bins), len(want), bins)
	}
	for i, b := range bins {
		if b.Count != want[i] || b.Low != float64(5*i) || b.High != float64(5*i+5) {
			t.Errorf("bin %d = %+v, want [%d, %d) count %d", i, b, 5*i, 5*i+5, want[i])
		}
	}
	for _, bad := range []struct {
		vals  []float64
		width float64
	}{{nil, 5}, {vals, -1}, {[]float64{math.NaN()}, 5}, {[]float64{0, 1e9}, 1}, {[]float64{-1e300, 1e300}, 1e-300}} {
		if _, err := Bins(bad.vals, bad.width); err == nil {
			t.Errorf("Bins(%v, %v): no error", bad.vals, bad.width)
		}
	}
	if w := AutoBinWidth([]float64{0, 73}); w != 10 {
		t.Errorf("AutoBinWidth over 0..73 = %v, want 10 (7.3 rounded up to 1, 2, 5, 10)", w)
	}
}

// Per-worker busy minutes inside the window add up to the utilisation; the
// waits are the schedule's, in start order.
func TestWorkerBusyAndWaitsAgreeWithTheMetrics(t *testing.T) {
	for _, date := range []string{"2026-05-13", "2026-05-14"} {
		r, err := Run(sampleNight(t, date), Config{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		busy, err := r.WorkerBusy()
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, b := range busy {
			total += b
		}
		if got := total / (3 * r.CutoffMinute); math.Abs(got-r.Utilization) > 1e-9 {
			t.Errorf("%s: per-worker busy minutes give %v, result %v", date, got, r.Utilization)
		}
		sum := 0.0
		for _, w := range r.Waits() {
			sum += w
		}
		if got := sum / float64(r.Jobs); math.Abs(got-r.AverageWait) > 1e-9 {
			t.Errorf("%s: mean of Waits %v, AverageWait %v", date, got, r.AverageWait)
		}
	}
	untraced, err := Run(sampleNight(t, "2026-05-13"), Config{Workers: 3, NoTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untraced.WorkerBusy(); !errors.Is(err, ErrNoTrace) {
		t.Errorf("WorkerBusy of an untraced result: %v, want ErrNoTrace", err)
	}
}
