package capacity

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/mmc"
	"gonum.org/v1/gonum/stat/distuv"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", name, got, want, tol)
	}
}

// TestSeed003FleetFromFirstPrinciples derives the corrected fleet by hand.
func TestSeed003FleetFromFirstPrinciples(t *testing.T) {
	p, err := Seed003.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// λ = 100,000,000 jobs / 86,400 s = 1,157.407 jobs/s.
	near(t, "arrivals/s", p.AverageArrivalsPerSecond, 100e6/86400, 1e-9)
	near(t, "arrivals/s (value)", p.ArrivalsPerSecond, 1157.407, 0.001)
	// Little: L = λW = 1,157.407 × 300 s = 347,222.2 jobs running at once.
	near(t, "concurrent jobs", p.ConcurrentJobs, 347222.22, 0.01)
	// Threads: 347,222.2 / 32 = 10,850.7 → 10,851 machines.
	if p.SlotsByThreads != 32 || p.MachinesByThreads != 10851 {
		t.Errorf("by threads: %d slots, %d machines; want 32 slots, 10851 machines", p.SlotsByThreads, p.MachinesByThreads)
	}
	// Memory: 16 GB = 16,000 MB (decimal, as the seed) / 50 MB = 320 jobs;
	// 347,222.2 / 320 = 1,085.07 → 1,086 machines.
	if p.SlotsByMemory != 320 || p.MachinesByMemory != 1086 {
		t.Errorf("by memory: %d slots, %d machines; want 320 slots, 1086 machines", p.SlotsByMemory, p.MachinesByMemory)
	}
	if p.Machines != 10851 || p.Binding != "threads" {
		t.Errorf("fleet %d machines bound by %s; want 10851 bound by threads", p.Machines, p.Binding)
	}
	// Utilisation at the peak: 347,222.2 / (10,851 × 32 = 347,232) = 0.99997.
	near(t, "utilization", p.Utilization, 347222.222/347232, 1e-6)
}

// TestSeedLines checks each line of the seed against values computed here by
// hand, independent of the package's arithmetic.
func TestSeedLines(t *testing.T) {
	lines := CheckSeed003()
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7", len(lines))
	}
	want := []struct {
		claimed, asWritten, correct float64
		right                       bool
	}{
		// 10⁸/24*60*60 is (10⁸/24)·3600 = 1.5e10 as written; 10⁸/86,400 = 1,157.4.
		{1157, 1.5e10, 1157.407, true},
		{32, 32, 32, true},
		// 32·60/18,000 = 1,920/18,000 = 0.10667 = 32 jobs / 300 s.
		{0.10, 0.106667, 0.106667, false},
		// 1157/0.10 = 11,570; right: ⌈347,222.2/32⌉ = 10,851.
		{11570, 11570, 10851, false},
		// As written: 16·1000·60/50 = 19,200, ·5 = 96,000, ·60 = 5,760,000.
		// Right: 320 jobs per 300 s = 1.0667 jobs/s (64 is per minute).
		{64, 5.76e6, 1.066667, false},
		// 1157/64 = 18.08; right: ⌈347,222.2/320⌉ = 1,086.
		{20, 18.078, 1086, false},
		{0, 0, 10851, false},
	}
	for i, w := range want {
		l := lines[i]
		tol := 1e-3 * math.Max(1, math.Abs(w.correct))
		near(t, l.Line+" claimed", l.Claimed, w.claimed, 1e-9)
		near(t, l.Line+" as written", l.AsWritten, w.asWritten, 1e-3*math.Max(1, math.Abs(w.asWritten)))
		near(t, l.Line+" correct", l.Correct, w.correct, tol)
		if l.Right != w.right {
			t.Errorf("%s: right = %v, want %v", l.Line, l.Right, w.right)
		}
		if l.Verdict == "" || strings.Contains(l.Verdict, "NaN") {
			t.Errorf("%s: verdict %q", l.Line, l.Verdict)
		}
	}
	// By how much: 11,570 / 10,851 = 1.0663 (6.6 % too many); 64/1.0667 = 60;
	// 20 / 1,086 = 0.0184 (54 times too few).
	near(t, "machines ratio", lines[3].Ratio(), 11570.0/10851, 1e-9)
	near(t, "memory rate ratio", lines[4].Ratio(), 60, 1e-9)
	near(t, "memory machines ratio", lines[5].Ratio(), 20.0/1086, 1e-9)
	if !lines[6].Missing || lines[6].Ratio() != 0 {
		t.Errorf("binding line: missing %v ratio %v, want a missing line with ratio 0", lines[6].Missing, lines[6].Ratio())
	}
}

func TestPeakAndHeadroom(t *testing.T) {
	f := Seed003
	f.PeakFactor, f.TargetUtilization = 2, 0.8
	p, err := f.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// λ_peak = 2 × 1,157.407 = 2,314.8/s; L = 694,444.4;
	// by threads ⌈694,444.4 / (32 × 0.8 = 25.6)⌉ = ⌈27,126.7⌉ = 27,127.
	near(t, "peak arrivals", p.ArrivalsPerSecond, 2*100e6/86400, 1e-9)
	if p.MachinesByThreads != 27127 {
		t.Errorf("by threads = %d, want 27127", p.MachinesByThreads)
	}
	// Memory binds when a job needs more memory than a thread's share:
	// 800 MB jobs → ⌊16,000/800⌋ = 20 slots < 32 threads.
	f = Seed003
	f.JobMemoryMB = 800
	p, err = f.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// ⌈347,222.2 / 20⌉ = ⌈17,361.1⌉ = 17,362 machines, bound by memory.
	if p.Binding != "memory" || p.Machines != 17362 {
		t.Errorf("800 MB jobs: %d machines bound by %s; want 17362 by memory", p.Machines, p.Binding)
	}
	// 500 MB: 32 slots both ways: a tie.
	f.JobMemoryMB = 500
	if p, err = f.Plan(); err != nil || p.Binding != "threads and memory" {
		t.Errorf("500 MB jobs: binding %q, err %v; want a tie", p.Binding, err)
	}
}

func TestCeilUnitsIgnoresFloatNoise(t *testing.T) {
	// 0.1 × 3 / 0.1 is 3.0000000000000004 in floating point: 3 machines, not 4.
	if got := ceilUnits(0.1 * 3 / 0.1); got != 3 {
		t.Errorf("ceilUnits(3+ε) = %d, want 3", got)
	}
	if got := ceilUnits(3.01); got != 4 {
		t.Errorf("ceilUnits(3.01) = %d, want 4", got)
	}
}

func TestFleetValidate(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*Fleet)
		want string
	}{
		{func(f *Fleet) { f.JobsPerDay = 0 }, "jobs per day"},
		{func(f *Fleet) { f.JobsPerDay = math.Inf(1) }, "jobs per day"},
		{func(f *Fleet) { f.JobMinutes = -5 }, "job minutes"},
		{func(f *Fleet) { f.ThreadsPerMachine = 0 }, "threads per machine"},
		{func(f *Fleet) { f.JobMemoryMB = math.NaN() }, "job memory"},
		{func(f *Fleet) { f.MachineMemoryGB = 0.01 }, "no job fits"},
		{func(f *Fleet) { f.PeakFactor = 0.5 }, "peak factor"},
		{func(f *Fleet) { f.TargetUtilization = 1.2 }, "target utilization"},
	} {
		f := Seed003
		tc.mut(&f)
		_, err := f.Plan()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
}

// TestPoolErlangCAtFleetScale checks mmc at c in the hundreds of thousands
// against the Halfin-Whitt limit, which is exact as a → ∞ with
// c = a + β√a: C → [1 + β Φ(β)/φ(β)]⁻¹.
func TestPoolErlangCAtFleetScale(t *testing.T) {
	a := 340000.0
	beta := 1.0
	c := int(math.Round(a + beta*math.Sqrt(a)))
	b := (float64(c) - a) / math.Sqrt(a)
	n := distuv.UnitNormal
	want := 1 / (1 + b*n.CDF(b)/n.Prob(b))
	got, err := mmc.ErlangC(c, a)
	if err != nil {
		t.Fatal(err)
	}
	// The limit's error is O(1/√a) ≈ 0.2 %; allow 1 % relative.
	if math.Abs(got-want) > 0.01*want {
		t.Errorf("ErlangC(%d, %.0f) = %.5f, Halfin-Whitt %.5f", c, a, got, want)
	}
	// Seed 003's fleet as one pool: 347,232 slots for a = 347,222.2 Erlangs.
	p, err := Seed003.Plan()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := Seed003.Pool(p)
	if err != nil {
		t.Fatal(err)
	}
	if pool.Servers != 347232 {
		t.Errorf("servers = %d, want 10,851 × 32 = 347,232", pool.Servers)
	}
	// β = (347,232 − 347,222.2)/√347,222.2 = 0.0166: almost every job waits,
	// C ≈ 1/(1 + 0.0166 · 0.5066/0.3989) = 0.979; Wq = C/(cμ − λ) with
	// cμ − λ = 9.78/300 s⁻¹ = 0.0326/s, so Wq ≈ 30 s.
	bb := (347232 - 347222.222) / math.Sqrt(347222.222)
	hw := 1 / (1 + bb*n.CDF(bb)/n.Prob(bb))
	if math.Abs(pool.PWait-hw) > 0.01 {
		t.Errorf("P(wait) = %.4f, Halfin-Whitt %.4f", pool.PWait, hw)
	}
	near(t, "mean wait s", pool.MeanWaitSeconds, pool.PWait/((347232-347222.222)/300), 1e-3)
	if math.IsNaN(pool.P95WaitSeconds) || pool.P95WaitSeconds <= pool.MeanWaitSeconds {
		t.Errorf("p95 wait %v s should exceed the mean %v s", pool.P95WaitSeconds, pool.MeanWaitSeconds)
	}
}

func TestPoolWithoutSteadyState(t *testing.T) {
	// 86,400 jobs a day of 1 minute on 1 thread: λ = 1/s, L = 60 = 60 machines × 1
	// slot exactly: ρ = 1.
	f := Fleet{JobsPerDay: 86400, JobMinutes: 1, ThreadsPerMachine: 1, JobMemoryMB: 1, MachineMemoryGB: 1}
	p, err := f.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Machines != 60 {
		t.Fatalf("machines = %d, want 60", p.Machines)
	}
	if _, err := f.Pool(p); !errors.Is(err, ErrNoSteadyState) {
		t.Errorf("pool at ρ = 1: err %v, want ErrNoSteadyState", err)
	}
}

func TestPeakFactor(t *testing.T) {
	// Flat: one arrival in each of 4 bins → 1.
	if pf, err := PeakFactor([]float64{0, 60, 120, 180}, 240, 60); err != nil || pf != 1 {
		t.Errorf("flat: %v %v, want 1", pf, err)
	}
	// The stable night 2026-05-13 over its 240-minute window in 60-minute bins:
	// 4, 3, 3, 0 arrivals → mean 2.5, peak 4 → 1.6.
	arr := []float64{0, 0, 0, 0, 60, 60, 60, 120, 120, 120}
	if pf, err := PeakFactor(arr, 240, 60); err != nil || math.Abs(pf-1.6) > 1e-12 {
		t.Errorf("2026-05-13 hourly: %v %v, want 1.6", pf, err)
	}
	// Same night in 5-minute bins: 48 bins, mean 10/48, peak 4 → 19.2.
	if pf, err := PeakFactor(arr, 240, 5); err != nil || math.Abs(pf-19.2) > 1e-12 {
		t.Errorf("2026-05-13 5-minute: %v %v, want 19.2", pf, err)
	}
	for _, bad := range [][]float64{nil, {-1}, {240}} {
		if _, err := PeakFactor(bad, 240, 60); err == nil {
			t.Errorf("arrivals %v: want an error", bad)
		}
	}
	if _, err := PeakFactor([]float64{1}, 240, 0); err == nil {
		t.Error("bin 0: want an error")
	}
}
