package lease_test

import (
	"math"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/lease/poolrules"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// fromSim turns a simulator schedule into attempts, one per job.
func fromSim(r sim.Result) []lease.Entry {
	var out []lease.Entry
	for _, s := range r.Schedule {
		out = append(out, lease.Entry{Slot: s, Attempt: 1, Outcome: queuekit.StatusSuccess})
	}
	return out
}

func randomNights(t *testing.T, seed uint64, count int) []queuekit.Night {
	t.Helper()
	ns, err := workload.Nights(workload.Config{Start: "2027-01-01", Nights: count, Seed: seed, HeavyNights: count / 2})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// The simulator's own schedules obey the rules the checker states, and
// Realise recomputes the simulator's metrics from them exactly: the real
// run's metrics are computed by the same definitions.
func TestCheckerAndRealiseAgreeWithTheSimulator(t *testing.T) {
	for _, n := range randomNights(t, 7, 40) {
		for _, pol := range sim.Policies {
			for c := 1; c <= 4; c++ {
				r, err := sim.Run(n, sim.Config{Workers: c, Policy: pol})
				if err != nil {
					t.Fatal(err)
				}
				att := fromSim(r)
				if err := poolrules.Check(n, att, c, pol); err != nil {
					t.Fatalf("%s c=%d %s: the simulator's schedule breaks a rule: %v", n.BatchDate, c, pol, err)
				}
				got := lease.Realise(n, att, c, pol).Metrics
				want := r.Metrics
				near := func(name string, a, b float64) {
					if math.Abs(a-b) > 1e-9 {
						t.Fatalf("%s c=%d %s: %s realised %v, simulator %v", n.BatchDate, c, pol, name, a, b)
					}
				}
				near("average wait", got.AverageWait, want.AverageWait)
				near("p95 wait", got.P95Wait, want.P95Wait)
				near("average queue", got.AverageQueueLength, want.AverageQueueLength)
				near("max queue", float64(got.MaxQueueLength), float64(want.MaxQueueLength))
				near("utilization", got.Utilization, want.Utilization)
				near("overflow", float64(got.OverflowJobs), float64(want.OverflowJobs))
				near("drained", got.DrainedMinute, want.DrainedMinute)
				near("lock held", got.LockHeldWorkerMinutes, want.LockHeldWorkerMinutes)
				near("blocked", got.BlockedWorkerMinutes, want.BlockedWorkerMinutes)
			}
		}
	}
}

// Each rule, broken on purpose in the stable night's barrier schedule
// (003 exclusive 0-50; 001, 002, 004 at 50; 007 exclusive 75-110; ...),
// is reported.
func TestCheckerCatchesBrokenRules(t *testing.T) {
	n := sample(t, "2026-05-13")
	r, err := sim.Run(n, sim.Config{Workers: 3, Policy: sim.Barrier})
	if err != nil {
		t.Fatal(err)
	}
	base := fromSim(r)
	cases := []struct {
		name string
		edit func([]lease.Entry)
		want string
	}{
		{"ordinary job inside the exclusive one", func(a []lease.Entry) { a[1].Start, a[1].Finish = 10, 35 }, "not alone"},
		{"over capacity", func(a []lease.Entry) { a[3].Workers = []int{0, 1} }, "outside 0..c"},
		{"out of order", func(a []lease.Entry) { a[1].Start, a[2].Start = 50.5, 50 }, "earlier in order"},
	}
	for _, tc := range cases {
		att := append([]lease.Entry(nil), base...)
		tc.edit(att)
		err := poolrules.Check(n, att, 3, sim.Barrier)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	dup := append(append([]lease.Entry(nil), base...), base[1])
	dup[len(dup)-1].Attempt = 2
	if err := poolrules.Check(n, dup, 3, sim.Barrier); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("two attempts of one job at once: got %v", err)
	}
	// Exclusive 007 arrives at 60 and waits for 001 and 004 until 75; slot
	// 1 is free from 70 (002 done). Under barrier nothing may start in
	// [70, 75): start 005 there (finishing at 72, before 007).
	bf := append([]lease.Entry(nil), base...)
	for i := range bf {
		if bf[i].ID == "JOB-20260513-005" {
			bf[i].Start, bf[i].Finish = 70, 72
		}
	}
	if err := poolrules.Check(n, bf, 3, sim.Barrier); err == nil || !strings.Contains(err.Error(), "barrier") {
		t.Errorf("start while an exclusive job waits: got %v", err)
	}
	// Under backfill the same start is judged by the reservation: 007 waits
	// for 001 and 004, estimated to end at 75, so a job started at 70 must
	// end by 75. 005 (25 minutes) does not fit.
	if err := poolrules.Check(n, bf, 3, sim.Backfill); err == nil || !strings.Contains(err.Error(), "after the reservation") {
		t.Errorf("backfill past the reservation: got %v", err)
	}
}

// Conservative's rule, on the night where the three policies part ways
// (R 001 runs 0-30 on one of c = 2 slots; at 1 arrive A 002 p5 40 min, X 003
// p3 exclusive 10 min, B 004 p1 20 min). The easy schedule starts B at 1.
// Under conservative B comes last in the order: A reserves the free slot at
// 1 (to 41), X both slots at 41 (to 51), so B's earliest reservation is 51;
// started at 1 it takes A's slot, pushing A from 1 to 21 (B's end). And the
// conservative schedule breaks easy's rule: A, started at 1 while X waits,
// ends by estimate at 41, after X's reservation at 30 (R's end).
func TestCheckerCatchesConservativeBreaches(t *testing.T) {
	n := partWays(t)
	run := func(p sim.Policy) []lease.Entry {
		r, err := sim.Run(n, sim.Config{Workers: 2, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return fromSim(r)
	}
	cons, easy := run(sim.Conservative), run(sim.Easy)
	if err := poolrules.Check(n, cons, 2, sim.Conservative); err != nil {
		t.Fatalf("the simulator's conservative schedule: %v", err)
	}
	err := poolrules.Check(n, easy, 2, sim.Conservative)
	want := "JOB-20270301-004 started at 1.000, but its earliest reservation was 51.000: it pushes JOB-20270301-002, earlier in order, from 1.000 to 21.000"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("easy's schedule checked as conservative: got %v, want %q", err, want)
	}
	if err := poolrules.Check(n, cons, 2, sim.Easy); err == nil || !strings.Contains(err.Error(), "JOB-20270301-002 started at 1.000 ends by estimate at 41.000, after the reservation of JOB-20270301-003 at 30.000") {
		t.Errorf("conservative's schedule checked as easy: got %v", err)
	}
}
