package leaselab

import (
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/lab"
)

func TestSpreadOfGivesMedianAndRange(t *testing.T) {
	for _, c := range []struct {
		xs          []float64
		med, lo, hi float64
		n           int
		text        string
	}{
		{[]float64{7.2, 20.6, 6.6}, 7.2, 6.6, 20.6, 3, "7.2 (6.6 to 20.6)"},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, 4, "2.5 (1 to 4)"},
		{[]float64{5, math.NaN()}, 5, 5, 5, 1, "5 (5 to 5)"},
	} {
		s := SpreadOf(c.xs)
		if s.N != c.n || s.Median != c.med || s.Min != c.lo || s.Max != c.hi || s.String() != c.text {
			t.Errorf("SpreadOf(%v) = %+v %q, want median %v range %v..%v n %d %q", c.xs, s, s.String(), c.med, c.lo, c.hi, c.n, c.text)
		}
	}
	if s := SpreadOf(nil); s.N != 0 || !math.IsNaN(s.Median) || s.String() != "–" {
		t.Errorf("SpreadOf(nil) = %+v %q", s, s.String())
	}
}

func TestOrderSaysAboveBelowOrOverlap(t *testing.T) {
	lo, hi, mid := SpreadOf([]float64{1, 2, 3}), SpreadOf([]float64{4, 5}), SpreadOf([]float64{2.5, 4.5})
	for _, c := range []struct {
		a, b Spread
		want int
	}{{hi, lo, 1}, {lo, hi, -1}, {mid, lo, 0}, {mid, hi, 0}, {lo, SpreadOf(nil), 0}} {
		if got := Order(c.a, c.b); got != c.want {
			t.Errorf("Order(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestInterleaveRotatesTheArmsEachRound(t *testing.T) {
	var order []int
	if err := Interleave(3, 3, func(r, a int) error { order = append(order, a); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	boom := errors.New("boom")
	runs := 0
	if err := Interleave(2, 2, func(r, a int) error { runs++; return boom }); !errors.Is(err, boom) || runs != 1 {
		t.Errorf("error %v after %d runs, want boom after 1", err, runs)
	}
	if err := Interleave(0, 2, func(int, int) error { return nil }); err == nil || !strings.Contains(err.Error(), "rounds = 0") {
		t.Errorf("zero rounds: %v", err)
	}
}

// A 25-minute job with a 5-minute lease renews every 1.25 minutes: 20
// heartbeats of 3 units = 60 units.
func TestLeaseArithmetic(t *testing.T) {
	l := Lease{Runtime: 25 * time.Minute, Lease: 5 * time.Minute, Poll: 30 * time.Second, UnitsPerHeartbeat: 3}
	if got := l.Heartbeats(); got != 20 {
		t.Errorf("heartbeats %d, want 20", got)
	}
	if got := l.HeartbeatUnits(); got != 60 {
		t.Errorf("units %v, want 60", got)
	}
	if got := (Lease{Runtime: time.Minute}).Heartbeats(); got != 0 {
		t.Errorf("no lease: %d heartbeats", got)
	}
}

// The worst detection time, derived by hand from the reaper's rule for
// idle workers polling every 30 s: reaps every max(poll, lease/8) rounded
// up to whole polls (R), and a take-over at most lease + 2R after the
// last heartbeat. Leases of 8 to 9.5 minutes miss a 10-minute target.
func TestLeaseDetectionFollowsTheReapersRule(t *testing.T) {
	for _, c := range []struct {
		lease, reap, worst time.Duration
	}{
		{2 * time.Minute, 30 * time.Second, 3 * time.Minute},                                // lease/8 = 15 s < poll: R = 30 s
		{4 * time.Minute, 30 * time.Second, 5 * time.Minute},                                // lease/8 = 30 s = poll
		{5 * time.Minute, time.Minute, 7 * time.Minute},                                     // lease/8 = 37.5 s: the look at 60 s
		{7*time.Minute + 54*time.Second, time.Minute, 9*time.Minute + 54*time.Second},       // 59.25 s: 60 s
		{8 * time.Minute, time.Minute, 10 * time.Minute},                                    // 60 s: exactly 2 polls
		{9*time.Minute + 30*time.Second, 90 * time.Second, 12*time.Minute + 30*time.Second}, // 71.25 s: 90 s
	} {
		l := Lease{Lease: c.lease, Poll: 30 * time.Second}
		if got := l.ReapInterval(); got != c.reap {
			t.Errorf("lease %v: reap interval %v, want %v", c.lease, got, c.reap)
		}
		if got := l.Detection(); got != c.worst {
			t.Errorf("lease %v: worst detection %v, want %v", c.lease, got, c.worst)
		}
	}
}

func TestRetryArithmetic(t *testing.T) {
	// 0.3^6 = 0.000729; backoff 1+2+4+8+16 = 31.
	if got := AllFail(0.3, 5); math.Abs(got-0.000729) > 1e-12 {
		t.Errorf("AllFail(0.3, 5) = %v", got)
	}
	if got := BackoffTotal(1, 5); got != 31 {
		t.Errorf("BackoffTotal(1, 5) = %v", got)
	}
	if got := BackoffTotal(1, 0); got != 0 {
		t.Errorf("BackoffTotal(1, 0) = %v", got)
	}
	if !math.IsNaN(AllFail(0.3, -1)) || !math.IsNaN(BackoffTotal(1, -1)) {
		t.Error("negative max retry must be NaN")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // sorted 1..10
	for _, c := range []struct{ q, want float64 }{{0.95, 10}, {0.9, 9}, {0.5, 5}, {0.01, 1}, {1, 10}} {
		if got := Percentile(xs, c.q); got != c.want {
			t.Errorf("Percentile(q=%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 0.5)) || !math.IsNaN(Percentile(xs, 0)) {
		t.Error("no values or q = 0 must be NaN")
	}
}

// 10 requests a second, 0.3 s a slice: 3 workers ask 10 a second (3/0.3),
// a fourth would ask 13.3.
func TestPacedWorkers(t *testing.T) {
	for _, c := range []struct {
		limit, slice float64
		want         int
	}{{10, 0.3, 3}, {5, 0.3, 1}, {5, 0.1, 1}, {20, 0.5, 10}, {0, 1, 0}} {
		if got := PacedWorkers(c.limit, c.slice); got != c.want {
			t.Errorf("PacedWorkers(%v, %v) = %d, want %d", c.limit, c.slice, got, c.want)
		}
	}
}

func TestCheckEqualSaysWhenNothingWasWritten(t *testing.T) {
	out := captureStdout(t, func() { lab.CheckEqual("binding", "", "threads", "compare") })
	if strings.Contains(out, "got .") || !strings.Contains(out, "no answer written yet") || strings.Contains(out, "threads") {
		t.Errorf("output %q", out)
	}
	out = captureStdout(t, func() { lab.CheckEqual("late jobs", -1, 9, "simulate") })
	if !strings.Contains(out, "no answer written yet") || strings.Contains(out, "9") {
		t.Errorf("placeholder -1: output %q", out)
	}
	out = captureStdout(t, func() { lab.CheckEqual("late jobs", 7, 9, "simulate") })
	if !strings.Contains(out, "got 7") || strings.Contains(out, "9") {
		t.Errorf("a wrong answer: output %q", out)
	}
}

// captureStdout returns what f prints to os.Stdout.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = old }()
	f()
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
