package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// job builds a task that arrives at minute arr and runs rt minutes.
func job(id string, arr, rt float64, prio int, excl bool) Task {
	return Task{ID: id, Arrival: arr, Estimate: rt, Runtime: rt, Priority: prio, Exclusive: excl}
}

func starts(r Result) map[string]float64 {
	m := map[string]float64{}
	for _, s := range r.Schedule {
		m[s.ID] = s.Start
	}
	return m
}

func mustRun(t *testing.T, tasks []Task, cfg Config) Result {
	t.Helper()
	if cfg.Cutoff == 0 {
		cfg.Cutoff = 240
	}
	var e Engine
	r, err := e.Run(tasks, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Table of the barrier rules on tiny hand-built nights; each expected start
// follows from SPEC.md's rules as the comment explains.
func TestBarrierRules(t *testing.T) {
	tests := []struct {
		name    string
		workers int
		tasks   []Task
		want    map[string]float64
	}{
		{
			// One worker, three jobs at minute 0 with the same priority: arrival ties
			// are broken by job id, so A, B, C run back to back.
			name: "ties at one minute break by job id", workers: 1,
			tasks: []Task{job("C", 0, 10, 1, false), job("A", 0, 10, 1, false), job("B", 0, 10, 1, false)},
			want:  map[string]float64{"A": 0, "B": 10, "C": 20},
		},
		{
			// Priority beats arrival: L arrived first but H has higher priority.
			name: "priority first then arrival", workers: 1,
			tasks: []Task{job("R", 0, 30, 1, false), job("L", 5, 10, 1, false), job("H", 10, 10, 5, false)},
			want:  map[string]float64{"R": 0, "H": 30, "L": 40},
		},
		{
			// X (exclusive, priority 1) waits for R; while it waits, the free worker
			// stays idle even for H (priority 9): the exclusive barrier.
			name: "exclusive job blocks higher-priority ordinary jobs", workers: 2,
			tasks: []Task{job("R", 0, 30, 1, false), job("X", 1, 10, 1, true), job("H", 2, 5, 9, false)},
			want:  map[string]float64{"R": 0, "X": 30, "H": 40},
		},
		{
			// An exclusive job holds every worker: O waits although 2 of 3 workers
			// would be free under a one-worker rule.
			name: "exclusive runs alone", workers: 3,
			tasks: []Task{job("X", 0, 20, 3, true), job("O", 0, 5, 1, false)},
			want:  map[string]float64{"X": 0, "O": 20},
		},
		{
			// A finish and an arrival at the same minute: the finish is released
			// first, so B starts at 10 on the freed worker.
			name: "release before arrival at the same minute", workers: 1,
			tasks: []Task{job("A", 0, 10, 1, false), job("B", 10, 5, 1, false)},
			want:  map[string]float64{"A": 0, "B": 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, tt.tasks, Config{Workers: tt.workers, Policy: Barrier})
			if got := starts(r); !mapsEqual(got, tt.want) {
				t.Errorf("starts = %v, want %v", got, tt.want)
			}
		})
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Two 150-minute jobs on one worker with a 240-minute window: the second
// finishes at 300 > 240, so the night drains after the cutoff. By hand:
// waits 0 and 150, p95 = 150 (index ⌈1.9⌉−1 = 1); queue area inside the
// window = 1 job × 150 min → 150/240; busy area clipped at 240 → util 1.
func TestDrainAfterCutoff(t *testing.T) {
	r := mustRun(t, []Task{job("A", 0, 150, 1, false), job("B", 0, 150, 1, false)}, Config{Workers: 1})
	want := Metrics{AverageWait: 75, P95Wait: 150, AverageQueueLength: 150.0 / 240, MaxQueueLength: 1,
		Utilization: 1, OverflowJobs: 1, OverflowFraction: 0.5, DrainedMinute: 300}
	checkMetrics(t, r.Metrics, want)
	if !r.Overflowed() {
		t.Error("Overflowed() = false for a night draining at 300 > 240")
	}
}

func checkMetrics(t *testing.T, got, want Metrics) {
	t.Helper()
	pairs := []struct {
		name      string
		got, want float64
	}{
		{"average wait", got.AverageWait, want.AverageWait},
		{"p95 wait", got.P95Wait, want.P95Wait},
		{"average queue length", got.AverageQueueLength, want.AverageQueueLength},
		{"max queue length", float64(got.MaxQueueLength), float64(want.MaxQueueLength)},
		{"utilization", got.Utilization, want.Utilization},
		{"overflow jobs", float64(got.OverflowJobs), float64(want.OverflowJobs)},
		{"overflow fraction", got.OverflowFraction, want.OverflowFraction},
		{"drained minute", got.DrainedMinute, want.DrainedMinute},
	}
	for _, p := range pairs {
		if math.Abs(p.got-p.want) > 1e-9 {
			t.Errorf("%s = %.6f, want %.6f", p.name, p.got, p.want)
		}
	}
}

// The two reference scenarios, pinned to numbers worked out by hand from the
// rules (arrivals 0/60/120 for the 01:00/02:00/03:00 windows):
//
// 2026-05-13, c=3. t=0: backfill#3 (exclusive, p3) starts alone, 0-50.
// t=50: #1 (50-75), #2 (50-70), #4 (50-75). t=60: #5, #6 and exclusive #7
// arrive; #7 blocks until #1 and #4 finish at 75, runs 75-110. t=110: #5
// (110-135), #6 (110-130). t=120: #8 starts (120-145), #9 and #10 wait; #9
// 130-150, #10 135-160.
// Waits: 0,50,50,50 | 15,50,50 | 0,10,15 → sum 290 → mean 29; sorted, the
// value at index ⌈9.5⌉−1 = 9 is 50. Waiting jobs over time: 3 on [0,50),
// 3 on [60,75), 2 on [75,110), 2 on [120,130), 1 on [130,135) → area 290 →
// 290/240 = 1.208333; max 3. Busy worker-minutes: 150+60+10+105+20+30+15+
// 30+10+10 = 440 → 440/(3·240) = 0.611111. Last finish 160 < 240: no overflow.
//
// 2026-05-14, c=2. The five priority-4 exclusive jobs run first, alone, in
// priority/arrival/id order: #1 0-80, #2 80-150, #6 150-225, #9 225-285,
// #10 285-355; then the ordinary jobs by arrival and id on 2 workers:
// #3 355-395, #4 355-390, #5 390-425, #7 395-440, #8 425-460, #11 440-485,
// #12 460-490. Waits: 0,80,90,165,165,355,355,390,335,365,320,340 → sum 2960
// → 246.666667; p95 at index ⌈11.4⌉−1 = 11 → 390. Waiting jobs: 4 on [0,60),
// 8 on [60,80), 7 on [80,120), 10 on [120,150), 9 on [150,225), 8 on
// [225,240) → area 240+160+280+300+675+120 = 1775 → 1775/240 = 7.395833; the
// test also recomputes that area from the hand schedule. Max queue 10 (at
// t=120: 12 arrived, #1 done, #2 running). Both workers are busy the whole
// window → utilisation 1. Nine jobs finish after 240 (all but #1, #2, #6) →
// 9/12 = 0.75; drained at 490.
func TestReferenceScenarios(t *testing.T) {
	t.Run("2026-05-13 with 3 workers", func(t *testing.T) {
		n := sampleNight(t, "2026-05-13")
		r, err := Run(n, Config{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, r.Metrics, Metrics{AverageWait: 29, P95Wait: 50, AverageQueueLength: 290.0 / 240,
			MaxQueueLength: 3, Utilization: 440.0 / 720, OverflowJobs: 0, OverflowFraction: 0, DrainedMinute: 160})
		// Locks: #3 (50 min) and #7 (35 min) each hold 2 workers they do not use
		// → 2·85 = 170. Blocked: on [70,75) one worker is free while #5, #6, #7
		// wait behind the barrier → 5; at every other moment with a queue all 3
		// workers are busy.
		if r.LockHeldWorkerMinutes != 170 || r.BlockedWorkerMinutes != 5 {
			t.Errorf("lock-held %v, blocked %v worker-minutes; want 170 and 5", r.LockHeldWorkerMinutes, r.BlockedWorkerMinutes)
		}
	})
	t.Run("2026-05-14 with 2 workers", func(t *testing.T) {
		n := sampleNight(t, "2026-05-14")
		r, err := Run(n, Config{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		// Hand schedule (start, finish) per job, and the waiting-count area it implies.
		hand := map[string][2]float64{
			"001": {0, 80}, "002": {80, 150}, "006": {150, 225}, "009": {225, 285}, "010": {285, 355},
			"003": {355, 395}, "004": {355, 390}, "005": {390, 425}, "007": {395, 440}, "008": {425, 460},
			"011": {440, 485}, "012": {460, 490},
		}
		arrival := map[string]float64{"001": 0, "002": 0, "003": 0, "004": 0, "005": 0, "006": 60, "007": 60,
			"008": 60, "009": 60, "010": 120, "011": 120, "012": 120}
		for _, s := range r.Schedule {
			h := hand["0"+s.ID[len(s.ID)-2:]]
			if s.Start != h[0] || s.Finish != h[1] {
				t.Errorf("%s ran %v-%v, hand schedule %v-%v", s.ID, s.Start, s.Finish, h[0], h[1])
			}
		}
		// Area under "arrived and not started", clipped to [0,240].
		area := 0.0
		for id, h := range hand {
			area += math.Max(0, math.Min(h[0], 240)-arrival[id])
		}
		if area != 1775 {
			t.Errorf("hand schedule waiting area = %v, the comment's 1775", area)
		}
		checkMetrics(t, r.Metrics, Metrics{AverageWait: 2960.0 / 12, P95Wait: 390, AverageQueueLength: area / 240,
			MaxQueueLength: 10, Utilization: 1, OverflowJobs: 9, OverflowFraction: 0.75, DrainedMinute: 490})
	})
}

func sampleNight(t *testing.T, d string) queuekit.Night {
	t.Helper()
	n, err := queuekit.SampleNight(d)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// randomNight builds a night of up to 30 jobs with arrivals on a few windows,
// integer runtimes, a mix of priorities and some exclusive jobs.
func randomNight(rng *rand.Rand) []Task {
	n := 1 + rng.IntN(30)
	ts := make([]Task, n)
	for i := range ts {
		ts[i] = job(fmt.Sprintf("J%03d", i), float64(60*rng.IntN(4)+rng.IntN(3)*5), float64(5+rng.IntN(90)),
			1+rng.IntN(4), rng.IntN(5) == 0)
	}
	return ts
}

// Properties over random nights, for both policies: no job starts before it
// arrives; never more than c workers busy; an exclusive job runs alone;
// utilisation <= 1; every job runs exactly once.
func TestPropertiesOverRandomNights(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 1))
	for trial := range 500 {
		tasks := randomNight(rng)
		c := 1 + rng.IntN(5)
		for _, p := range Policies {
			r := mustRun(t, tasks, Config{Workers: c, Policy: p})
			if len(r.Schedule) != len(tasks) {
				t.Fatalf("trial %d %s: %d slots for %d jobs", trial, p, len(r.Schedule), len(tasks))
			}
			if r.Utilization > 1+1e-12 || r.Utilization < 0 {
				t.Fatalf("trial %d %s: utilization %v", trial, p, r.Utilization)
			}
			for _, b := range r.BusyWorkers {
				if b.N > c || b.N < 0 {
					t.Fatalf("trial %d %s: %d workers busy at %v with c=%d", trial, p, b.N, b.T, c)
				}
			}
			for _, s := range r.Schedule {
				if s.Start < s.Arrival {
					t.Fatalf("trial %d %s: %s starts at %v before it arrives at %v", trial, p, s.ID, s.Start, s.Arrival)
				}
				want := 1
				if s.Exclusive {
					want = c
				}
				if len(s.Workers) != want {
					t.Fatalf("trial %d %s: %s holds %d workers, want %d", trial, p, s.ID, len(s.Workers), want)
				}
				if !s.Exclusive {
					continue
				}
				for _, o := range r.Schedule {
					if o.ID != s.ID && o.Start < s.Finish && s.Start < o.Finish {
						t.Fatalf("trial %d %s: %s overlaps exclusive %s", trial, p, o.ID, s.ID)
					}
				}
			}
		}
	}
}

// Backfill never delays the exclusive job it backfills around when runtimes
// equal their estimates: every backfilled job finishes by the reservation,
// and the reservation holder starts exactly at the reserved minute, unless an
// exclusive job that arrived after the backfill decision outranked it and
// took that very slot.
func TestEasyHonoursReservations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	backfilled, honoured := 0, 0
	for trial := range 1000 {
		tasks := randomNight(rng)
		c := 2 + rng.IntN(4)
		r := mustRun(t, tasks, Config{Workers: c, Policy: Easy})
		slot := map[string]Slot{}
		for _, s := range r.Schedule {
			slot[s.ID] = s
		}
		for _, s := range r.Schedule {
			if s.ReservedFor == "" {
				continue
			}
			backfilled++
			if s.Finish > s.ReservedUntil {
				t.Fatalf("trial %d: %s backfilled before %s finishes at %v after the reservation %v",
					trial, s.ID, s.ReservedFor, s.Finish, s.ReservedUntil)
			}
			holder := slot[s.ReservedFor]
			if holder.Start == s.ReservedUntil {
				honoured++
				continue
			}
			overtaken := false
			for _, o := range r.Schedule {
				if o.Exclusive && o.Start == s.ReservedUntil && o.Arrival > s.Start && o.Priority > holder.Priority {
					overtaken = true
				}
			}
			if !overtaken {
				t.Fatalf("trial %d: %s reserved minute %v but started at %v, and no later exclusive job took the slot",
					trial, s.ReservedFor, s.ReservedUntil, holder.Start)
			}
		}
	}
	if backfilled == 0 || honoured == 0 {
		t.Fatalf("%d backfilled jobs, %d honoured reservations: the test checks nothing", backfilled, honoured)
	}
}

// On the sample nights backfill never drains later than barrier.
func TestEasyNoWorseOnSampleNights(t *testing.T) {
	for _, n := range mustSampleNights(t) {
		for _, c := range []int{2, 3, 4} {
			b, err := Run(n, Config{Workers: c, Policy: Barrier})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Run(n, Config{Workers: c, Policy: Easy})
			if err != nil {
				t.Fatal(err)
			}
			if f.DrainedMinute > b.DrainedMinute {
				t.Errorf("%s c=%d: backfill drains at %v, later than barrier %v", n.BatchDate, c, f.DrainedMinute, b.DrainedMinute)
			}
		}
	}
}

func mustSampleNights(t *testing.T) []queuekit.Night {
	ns, err := queuekit.SampleNights()
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestRunRejectsBadConfig(t *testing.T) {
	var e Engine
	for _, cfg := range []Config{{Workers: 0, Cutoff: 240}, {Workers: 1, Cutoff: 0}, {Workers: 1, Cutoff: 240, Policy: "lifo"}} {
		if _, err := e.Run([]Task{job("A", 0, 1, 1, false)}, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := e.Run([]Task{job("A", 0, 0, 1, false)}, Config{Workers: 1, Cutoff: 240}); err == nil {
		t.Error("zero runtime: no error")
	}
}

func TestEngineReuseGivesSameResult(t *testing.T) {
	var e Engine
	n := sampleNight(t, "2026-05-14")
	run := func(night queuekit.Night, workers int) Result {
		t.Helper()
		r, err := e.Run(Tasks(night), Config{Workers: workers, Cutoff: 240})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := run(n, 2)
	run(sampleNight(t, "2026-05-13"), 3)
	b := run(n, 2)
	if a.Jobs != 12 || a.Metrics != b.Metrics {
		t.Errorf("a reused engine gave other metrics:\n%+v\n%+v", a.Metrics, b.Metrics)
	}
	if !slices.EqualFunc(a.Schedule, b.Schedule, func(x, y Slot) bool {
		return x.ID == y.ID && x.Start == y.Start && x.Finish == y.Finish && slices.Equal(x.Workers, y.Workers)
	}) {
		t.Error("a reused engine gave a different schedule")
	}
}

func ExampleRun() {
	night, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := Run(night, Config{Workers: 3, Policy: Barrier})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("average wait %.1f min, p95 %.0f min, utilization %.1f%%, drained at minute %.0f\n",
		r.AverageWait, r.P95Wait, 100*r.Utilization, r.DrainedMinute)
	// Output: average wait 29.0 min, p95 50 min, utilization 61.1%, drained at minute 160
}

// A hand-built night where backfill pays: R runs 0-30 on one of 2 workers;
// exclusive X arrives at 1 and must wait for R (reservation at 30); S (10 min)
// arrives at 2. Barrier keeps S waiting until X is done (30-40) → S 40-50.
// Backfill starts S at 2 because 2+10 <= 30, and X still starts at 30.
func TestEasyFillsTheGapBeforeALock(t *testing.T) {
	tasks := []Task{job("R", 0, 30, 1, false), job("X", 1, 10, 2, true), job("S", 2, 10, 1, false)}
	b := starts(mustRun(t, tasks, Config{Workers: 2, Policy: Barrier}))
	f := mustRun(t, tasks, Config{Workers: 2, Policy: Easy})
	if want := map[string]float64{"R": 0, "X": 30, "S": 40}; !mapsEqual(b, want) {
		t.Errorf("barrier starts %v, want %v", b, want)
	}
	if want := map[string]float64{"R": 0, "X": 30, "S": 2}; !mapsEqual(starts(f), want) {
		t.Errorf("backfill starts %v, want %v", starts(f), want)
	}
	for _, s := range f.Schedule {
		if s.ID == "S" && (s.ReservedFor != "X" || s.ReservedUntil != 30) {
			t.Errorf("S backfilled before %q until %v, want X until 30", s.ReservedFor, s.ReservedUntil)
		}
	}
}

func TestParsePolicyNamesAndAlias(t *testing.T) {
	for in, want := range map[string]Policy{"barrier": Barrier, "easy": Easy, "backfill": Easy, "conservative": Conservative} {
		got, err := ParsePolicy(in)
		if err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParsePolicy("fifo"); err == nil {
		t.Error(`ParsePolicy("fifo"): no error`)
	}
	r := mustRun(t, []Task{job("A", 0, 1, 1, false)}, Config{Workers: 1, Policy: "backfill"})
	if r.Policy != Easy {
		t.Errorf("a run asked for backfill reports policy %q, want easy", r.Policy)
	}
}

// A hand-built night where the three policies part ways (c = 2). R (p1)
// runs 0-30. At minute 1 arrive A (p5, 40 min), X (p3, exclusive, 10 min)
// and B (p1, 20 min).
//   - barrier: X waits for R and runs 30-40; A and B then start at 40.
//   - easy: X holds the only reservation, at 30 (R's end). A (1+40 > 30)
//     cannot backfill; B (1+20 <= 30) can: B 1-21, X 30-40, A 40-80.
//   - conservative: reservations in priority order. A fits on the free
//     worker now (1 free for all of 1-41), so it starts at 1; X needs both
//     workers for 10 minutes: the first such gap is 41-51; B needs one
//     worker for 20 minutes: 30-41 has one free but 41-51 none, so B gets 51.
func TestThreePoliciesPartWays(t *testing.T) {
	tasks := []Task{job("R", 0, 30, 1, false), job("A", 1, 40, 5, false), job("X", 1, 10, 3, true), job("B", 1, 20, 1, false)}
	for p, want := range map[Policy]map[string]float64{
		Barrier:      {"R": 0, "X": 30, "A": 40, "B": 40},
		Easy:         {"R": 0, "B": 1, "X": 30, "A": 40},
		Conservative: {"R": 0, "A": 1, "X": 41, "B": 51},
	} {
		if got := starts(mustRun(t, tasks, Config{Workers: 2, Policy: p})); !mapsEqual(got, want) {
			t.Errorf("%s starts %v, want %v", p, got, want)
		}
	}
}

// With one priority and runtimes equal to their estimates, conservative
// backfilling keeps every promise: a new arrival goes behind everyone
// waiting, nothing finishes early, so no reservation ever moves and each job
// starts exactly at the first reservation it was given. (EASY makes no such
// promise to jobs other than the first exclusive one.)
func TestConservativeStartsEveryJobAtItsFirstReservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	later := 0 // jobs whose first reservation was not their arrival
	for trial := range 500 {
		tasks := randomNight(rng)
		for i := range tasks {
			tasks[i].Priority = 1
		}
		c := 1 + rng.IntN(5)
		first := map[string]float64{}
		e := Engine{onReserve: func(ti int, at float64) {}}
		e.onReserve = func(ti int, at float64) {
			if _, ok := first[e.tasks[ti].ID]; !ok {
				first[e.tasks[ti].ID] = at
			}
		}
		r, err := e.Run(tasks, Config{Workers: c, Policy: Conservative, Cutoff: 240})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Schedule {
			at, ok := first[s.ID]
			if !ok {
				t.Fatalf("trial %d: %s started without a reservation", trial, s.ID)
			}
			if s.Start != at {
				t.Fatalf("trial %d c=%d: %s first reserved minute %v, started at %v", trial, c, s.ID, at, s.Start)
			}
			if at > s.Arrival {
				later++
			}
		}
	}
	if later == 0 {
		t.Fatal("no job ever waited for its reservation: the test checks nothing")
	}
}

// In this pool a job needs one worker or all of them, so if exclusive jobs
// are reserved before ordinary ones (the precedence barrier and easy give
// them), conservative backfilling cannot do anything easy does not: before
// the first exclusive reservation T the running jobs only finish, so free
// capacity only grows, and an ordinary job that fits before T on one worker
// fits now if a worker is free now; after T nothing may overlap the
// exclusive jobs. With exact estimates the two schedules must be identical;
// conservative's strict priority order is what makes it differ.
func TestConservativeWithExclusivesFirstIsEasy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	differ := 0
	for trial := range 1000 {
		tasks := randomNight(rng)
		c := 1 + rng.IntN(5)
		easy := mustRun(t, tasks, Config{Workers: c, Policy: Easy})
		e := Engine{exclusiveFirst: true}
		cons, err := e.Run(tasks, Config{Workers: c, Policy: Conservative, Cutoff: 240})
		if err != nil {
			t.Fatal(err)
		}
		if !mapsEqual(starts(easy), starts(cons)) {
			t.Fatalf("trial %d c=%d: easy starts %v, conservative with exclusives first %v", trial, c, starts(easy), starts(cons))
		}
		strict := mustRun(t, tasks, Config{Workers: c, Policy: Conservative})
		if !mapsEqual(starts(easy), starts(strict)) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("strict-order conservative never differed from easy: the comparison checks nothing")
	}
	t.Logf("strict-order conservative differs from easy on %d of 1000 random nights", differ)
}

// The part-ways night at minute 1 (c = 2), planned by hand on a Profile: R
// holds one worker until 30; A (40 minutes, one worker) fits now; X (10
// minutes, both workers) first finds both free at 41, when A ends; B (20
// minutes, one worker) has one worker over 30-41 only, then none until 51.
func ExampleProfile() {
	var p Profile
	p.Reset(1, 2)
	p.Reserve(1, 30, 1) // R, running
	for _, j := range []struct {
		id   string
		dur  float64
		need int
	}{{"A", 40, 1}, {"X", 10, 2}, {"B", 20, 1}} {
		at := p.EarliestFit(j.dur, j.need)
		p.Reserve(at, at+j.dur, j.need)
		fmt.Printf("%s reserved at %g\n", j.id, at)
	}
	// Output:
	// A reserved at 1
	// X reserved at 41
	// B reserved at 51
}

// A job needing more workers than the pool has never fits: EarliestFit says
// +Inf ("never"), not "now", whether the pool is idle or busy; a job the
// pool can hold still fits now on an idle pool.
func TestEarliestFitOfMoreThanThePoolIsNever(t *testing.T) {
	var p Profile
	p.Reset(0, 2)
	if at := p.EarliestFit(1, 3); !math.IsInf(at, 1) {
		t.Errorf("idle pool of 2, need 3: EarliestFit = %v, want +Inf (never)", at)
	}
	if at := p.EarliestFit(1, 2); at != 0 {
		t.Errorf("idle pool of 2, need 2: EarliestFit = %v, want 0 (now)", at)
	}
	p.Reserve(0, 10, 1)
	if at := p.EarliestFit(1, 3); !math.IsInf(at, 1) {
		t.Errorf("busy pool of 2, need 3: EarliestFit = %v, want +Inf (never)", at)
	}
	if at := p.EarliestFit(1, 2); at != 10 {
		t.Errorf("pool of 2 with one worker busy until 10, need 2: EarliestFit = %v, want 10", at)
	}
}
