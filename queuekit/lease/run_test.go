package lease_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/fault"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/lease/poolrules"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Random nights (half of them heavy, with exclusive jobs) run for real
// under the three policies, each policy with two pool sizes; the recorded
// schedules obey every pool rule, and every job ends SUCCESS exactly once.
// (On generated nights conservative's forecast turned out equal to easy's:
// seeds 1 to 59, six nights each, c = 2 to 4, all the same; so
// TestConservativeNightMatchesTheSimulator runs a night where they part
// ways.)
func TestRandomNightsKeepThePoolRules(t *testing.T) {
	t.Parallel()
	nights := randomNights(t, 11, 6)
	for i, n := range nights {
		pol := sim.Policies[i%3]
		c := 2 + (i+i/3)%3 // barrier 2, 3; easy 3, 4; conservative 4, 2
		t.Run(fmt.Sprintf("%s_%s_c%d", n.BatchDate, pol, c), func(t *testing.T) {
			ex, _ := setup(t, n.Jobs)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := ex.Run(ctx, n, lease.RunConfig{Config: lease.Config{Workers: c, Policy: pol, Minute: 10 * time.Millisecond, MaxRetry: lease.DefaultMaxRetry}, Slots: c})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if err := poolrules.Check(n, rep.Schedule, c, pol); err != nil {
				t.Fatalf("pool rules broken:\n%v", err)
			}
			if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || len(rep.Schedule) != len(n.Jobs) || rep.Won != len(n.Jobs) {
				t.Fatalf("statuses %v, %d attempts, %d claims won; want %d jobs each SUCCESS after one attempt",
					rep.Statuses, len(rep.Schedule), rep.Won, len(n.Jobs))
			}
		})
	}
}

// A job whose work always fails is retried max_retry times with backoff,
// then ends FATAL_FAILURE with a dead-letter record; the others succeed.
// max_retry 0 means no retry: one attempt, then the dead letter.
func TestFailingJobIsDeadLettered(t *testing.T) {
	t.Parallel()
	for _, maxRetry := range []int{0, 2} {
		t.Run(fmt.Sprintf("max_retry=%d", maxRetry), func(t *testing.T) { failingJob(t, maxRetry) })
	}
}

func failingJob(t *testing.T, maxRetry int) {
	n := sample(t, "2026-05-13")
	ex, _ := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const bad = "JOB-20260513-006"
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: lease.Config{Workers: 3, Minute: 10 * time.Millisecond, MaxRetry: maxRetry}, Slots: 3, Work: fault.FailJobs([]string{bad}, nil)})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if rep.Statuses[queuekit.StatusFatalFailure] != 1 || rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs)-1 {
		t.Fatalf("statuses %v: want 1 FATAL_FAILURE and %d SUCCESS", rep.Statuses, len(n.Jobs)-1)
	}
	// 1 + max_retry attempts, retries counted max_retry times.
	if len(rep.DeadLetters) != 1 || rep.DeadLetters[0].JobID != bad || rep.DeadLetters[0].Attempts != 1+maxRetry {
		t.Fatalf("dead letters %+v: want %s after %d attempts", rep.DeadLetters, bad, 1+maxRetry)
	}
	if rep.Retries != maxRetry {
		t.Fatalf("retries = %d, want %d", rep.Retries, maxRetry)
	}
	st, err := ex.Status(ctx, n.BatchDate)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.DeadLetters) != 1 || st.DeadLetters[0].LastError == "" || st.Statuses[queuekit.StatusFatalFailure] != 1 {
		t.Fatalf("status %+v: want the dead letter with its last error", st)
	}
	// Backoff: attempt k+1 is due DefaultBackoff * 2^(k-1) job-minutes after attempt k failed.
	var prevFinish float64
	attempts := 0
	for _, e := range rep.Schedule {
		if e.ID != bad {
			continue
		}
		attempts++
		if e.Attempt > 1 {
			want := lease.DefaultBackoff * math.Pow(2, float64(e.Attempt-2))
			if e.Start < prevFinish+want-0.05 {
				t.Fatalf("attempt %d started at %.3f, before %.3f + backoff %.1f", e.Attempt, e.Start, prevFinish, want)
			}
		}
		prevFinish = e.Finish
	}
	if attempts != 1+maxRetry {
		t.Fatalf("%d attempts of %s in the schedule, want 1 + max_retry = %d", attempts, bad, 1+maxRetry)
	}
}

// Model versus reality: the stable night with 3 workers at the default
// clock is claimed in the simulator's order, on the simulator's slots counts,
// and no job starts before its simulated start (the rules forbid it).
//
// How late a real start is, is not asserted: it is measured and logged. A
// real start lags the simulated one for reasons bounded per "hop": an idle
// worker notices a due job within one poll interval P; the claim (pool read,
// index Query, transaction) and the start and end writes take a latency L;
// a job at depth d of a chain of starts-at-finishes inherits the lag of the
// jobs before it, so it may lag by (d+1)(P + L). L is the only term this
// test does not control: on a quiet machine it is a few milliseconds, on a
// shared machine at load 40 it was seen past 100 ms a hop. So the log prints
// each run's worst lag in hops of (P + 100 ms), and a timing claim shown to
// people is made by notebook 05 and the benchmarks, from measured medians.
func TestStableNightMatchesTheSimulator(t *testing.T) {
	t.Parallel()
	n := sample(t, "2026-05-13")
	ex, _ := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Policy: sim.Barrier, MaxRetry: lease.DefaultMaxRetry}.WithDefaults()
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 3})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	matchesForecast(t, rep, cfg)
	t.Logf("stable night: %.1f s of wall time; drained at %.2f (simulated %.0f)", rep.Elapsed.Seconds(), rep.Realised.DrainedMinute, rep.Forecast.DrainedMinute)
}

// The night where the three policies part ways (sim's
// TestThreePoliciesPartWays), run for real under conservative with c = 2:
// the claims follow the simulator's conservative schedule R 0, A 1, X 41,
// B 51 (not easy's R, B, X, A nor barrier's R, X, A, B), each within the
// tolerance derived above, and the schedule keeps conservative's rule.
func TestConservativeNightMatchesTheSimulator(t *testing.T) {
	t.Parallel()
	n := partWays(t)
	ex, _ := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 2, Policy: sim.Conservative, MaxRetry: lease.DefaultMaxRetry}.WithDefaults()
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 2})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var order []string
	for _, s := range rep.Forecast.Schedule {
		order = append(order, s.ID)
	}
	if want := "JOB-20270301-001 JOB-20270301-002 JOB-20270301-003 JOB-20270301-004"; strings.Join(order, " ") != want {
		t.Fatalf("forecast order %v, want R, A, X, B: %s", order, want)
	}
	matchesForecast(t, rep, cfg)
	if err := poolrules.Check(n, rep.Schedule, 2, sim.Conservative); err != nil {
		t.Fatalf("pool rules broken:\n%v", err)
	}
}

// matchesForecast checks that a run's attempts are the forecast's jobs in
// the forecast's start order, on its slot counts, none early, and logs the
// worst lag against the per-hop allowance derived at
// TestStableNightMatchesTheSimulator.
func matchesForecast(t *testing.T, rep lease.Report, cfg lease.Config) {
	t.Helper()
	const L = 100 * time.Millisecond
	perHop := float64(cfg.Poll+L) / float64(cfg.Minute)
	fc := rep.Forecast.Schedule
	if len(rep.Schedule) != len(fc) {
		t.Fatalf("%d real attempts, %d simulated jobs", len(rep.Schedule), len(fc))
	}
	depth := map[string]int{}
	for _, s := range fc {
		d := 0
		if s.Start > s.Arrival {
			for _, o := range fc {
				if o.Finish == s.Start {
					d = max(d, depth[o.ID]+1)
				}
			}
		}
		depth[s.ID] = d
	}
	worst, worstHops, worstDepth := "", 0.0, 0
	for i, s := range fc {
		r := rep.Schedule[i]
		if r.ID != s.ID || len(r.Workers) != len(s.Workers) {
			t.Fatalf("start %d: real %s on %d slots, simulated %s on %d", i+1, r.ID, len(r.Workers), s.ID, len(s.Workers))
		}
		if lag := r.Start - s.Start; lag < -0.01 {
			t.Errorf("%s: real start %.3f before its simulated start %.0f (lag %.3f): the rules forbid an early start", s.ID, r.Start, s.Start, lag)
		} else if hops := lag / perHop; hops > worstHops {
			worst, worstHops, worstDepth = s.ID, hops, depth[s.ID]
		}
	}
	if worst != "" {
		t.Logf("worst lag: %s, %.2f hops of P + 100 ms at depth %d (allowance: depth + 1 = %d hops)", worst, worstHops, worstDepth, worstDepth+1)
	}
}
