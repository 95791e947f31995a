package fanout_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/fanout/pacing"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// setup seeds n generated nights into a table of this test and returns a
// Config for them, with a results table of this test.
func setup(t *testing.T, n int) fanout.Config {
	t.Helper()
	ctx := context.Background()
	src := ddbtest.Catalog(t)
	jobs, err := workload.Generate(workload.Config{Nights: n, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Seed(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	results := fanout.NewResults(ddbtest.NewCatalog(t))
	if err := results.Create(ctx); err != nil {
		t.Fatal(err)
	}
	keys, err := nights.Keys(workload.DefaultStart, n)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fanout.Config{Queues: sqstest.Client(t), Results: results, Run: hex.EncodeToString(b[:]), Keys: keys,
		Source: nights.Source(src, 3, sim.Barrier), Combine: nights.Combine, Processing: fanout.Processing{Wait: time.Second}}
}

// A slice that runs three times as long as the visibility timeout keeps its
// message: the processor extends the timeout every half timeout, so no
// other worker receives the message while it runs.
func TestLongSlicesExtendTheirVisibility(t *testing.T) {
	t.Parallel()
	cfg := setup(t, 3)
	cfg.Source = fanout.Slow(cfg.Source, 3*time.Second)
	cfg.Workers, cfg.Visibility = 6, time.Second // more workers than slices: any redelivery would be picked up
	out, err := fanout.Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Processed != 3 || out.Stats.Received != 3 || out.Stats.Redelivered != 0 || out.Stats.Duplicates != 0 {
		t.Fatalf("outcome %+v, stats %+v; want 3 processed from 3 receives, no redelivery", out.Final, out.Stats)
	}
	// 3 s per slice, extended every 0.5 s: about 5 extensions each.
	if out.Stats.Extended < 3 {
		t.Fatalf("visibility extended %d times, want several per slice", out.Stats.Extended)
	}
}

// The collated capacity report equals the one computed directly from the
// same nights by the report's rules, written out here (not nights.Combine,
// the code under test): nights and jobs counted from the generated nights,
// overflow summed from each night's simulation, utilization their mean, the
// worst night the first with the latest drain. The fan-out changes where the
// work runs, not its result.
func TestCollationEqualsTheDirectComputation(t *testing.T) {
	cfg := setup(t, 8)
	out, err := fanout.Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	generated, err := workload.Nights(workload.Config{Nights: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		jobs, overflowJobs, overflowNights int
		util, worstDrained                 float64
		worst                              string
	)
	for _, n := range generated {
		jobs += len(n.Jobs)
		r, err := sim.Run(n, sim.Config{Workers: 3, NoTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		overflowJobs += r.OverflowJobs
		if r.OverflowJobs > 0 {
			overflowNights++
		}
		util += r.Utilization
		if worst == "" || r.DrainedMinute > worstDrained {
			worst, worstDrained = n.BatchDate, r.DrainedMinute
		}
	}
	var got nights.Capacity
	if err := json.Unmarshal(out.Result, &got); err != nil {
		t.Fatalf("result %s: %v", out.Result, err)
	}
	if got.Nights != 8 || got.Jobs != jobs || got.OverflowJobs != overflowJobs || got.OverflowNights != overflowNights ||
		got.WorstNight != worst || got.WorstDrained != worstDrained || len(got.MissingNights) != 0 {
		t.Fatalf("collated %+v; want 8 nights, %d jobs, %d overflow jobs in %d nights, worst night %s drained at %v, none missing",
			got, jobs, overflowJobs, overflowNights, worst, worstDrained)
	}
	// Each night's utilization is stored to 4 decimals and the mean rounded
	// to 4: within 1e-4 of the exact mean.
	if mean := util / 8; math.Abs(got.MeanUtilization-mean) > 1e-4 {
		t.Fatalf("mean utilization %v, want %v within 1e-4", got.MeanUtilization, mean)
	}
	if fin, ok, err := cfg.Results.Final(context.Background(), cfg.Run); err != nil || !ok || fin.Processed != 8 {
		t.Fatalf("stored final = %+v, %v, %v", fin, ok, err)
	}
}

// A stampede on a rate-limited source spends receives on throttles and
// loses healthy slices to the dead-letter queue; one paced worker does not.
// Derivation: with maxReceiveCount 2 and a retry after 1 s, a slice dies
// after 2 throttled attempts. One worker asks the source at most once per
// slice time (300 ms) plus a Query, under the limit of 5/s with burst 1
// (200 ms between requests), so it is never throttled; 12 workers ask at
// once and all but one request in each round is refused.
func TestStampedeLosesSlicesPacedDoesNot(t *testing.T) {
	t.Parallel()
	cfg := setup(t, 12)
	cfg.Source = fanout.Slow(cfg.Source, 300*time.Millisecond)
	cfg.MaxReceives, cfg.RetryAfter = 2, time.Second
	rows, err := pacing.Compare(context.Background(), cfg, 5, 1, []int{12, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stampede, paced := rows[0], rows[1]
	if paced.Throttled != 0 || paced.Dead != 0 || paced.Processed != 12 {
		t.Errorf("paced: %+v; want 12 processed, none throttled or dead", paced)
	}
	if stampede.Throttled == 0 || stampede.Dead == 0 || stampede.Processed+stampede.Dead != 12 {
		t.Errorf("stampede: %+v; want throttles and dead-lettered healthy slices, processed + dead = 12", stampede)
	}
}

// A slice that fails every attempt ends dead-lettered with the cause of its
// last attempt: each attempt records its cause (here "attempt N"), and the
// dead-letter marker keeps the last one. With maxReceiveCount 2 the message
// is received twice, fails twice, and moves on its third receive, after the
// second attempt's cause was written.
func TestDeadLetterMarkerKeepsTheLastAttemptsCause(t *testing.T) {
	cfg := setup(t, 3)
	cfg.MaxReceives = 2
	var mu sync.Mutex
	attempts := 0
	cfg.Fail = func(p fanout.Pointer) error {
		if p.Slice != 1 {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		attempts++
		return fmt.Errorf("slice 1 broke on attempt %d", attempts)
	}
	out, err := fanout.Execute(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out.DeadLettered) != "[1]" || out.Processed != 2 {
		t.Fatalf("outcome %+v; want slice 1 dead-lettered, 2 processed", out.Final)
	}
	if attempts != 2 {
		t.Fatalf("slice 1 was attempted %d times, want 2 (maxReceiveCount)", attempts)
	}
	if got, want := out.LastErrors[1], "slice 1 broke on attempt 2"; got != want {
		t.Fatalf("last error of slice 1 = %q, want %q", got, want)
	}
	if len(out.LastErrors) != 1 {
		t.Fatalf("last errors %v: want slice 1 only", out.LastErrors)
	}
	s := out.Stats
	if s.Failed != 2 || s.ExtendFailed != 0 || s.RetryFailed != 0 || s.DeleteFailed != 0 || s.RecordFailed != 0 {
		t.Fatalf("stats %+v: want 2 failed attempts and no failed SQS or DynamoDB call", s)
	}
}
