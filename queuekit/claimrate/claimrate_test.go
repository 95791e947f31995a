package claimrate_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

func buildCLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "queuekit")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/queuekit").CombinedOutput()
	if err != nil {
		t.Fatalf("go build the CLI: %v\n%s", err, out)
	}
	return bin
}

// One small comparison, for real: every configuration gets a row per worker
// count with a positive median inside its range, the fleet's rows carry a
// measured write ceiling and 4 index write units per job (the index rules),
// and the night executor's rows none.
func TestCompareMeasuresEveryConfiguration(t *testing.T) {
	t.Parallel()
	cat := ddbtest.NewCatalog(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if ex, err := lease.New(cat); err == nil {
			_ = ex.DeleteTable(ctx)
		}
		if f, err := fleet.New(cat); err == nil {
			_ = f.DeleteTable(ctx)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rows, err := claimrate.Compare(ctx, cat, claimrate.Config{Bin: buildCLI(t), Workers: []int{1, 2}, Slots: 2, Shards: 4,
		FleetJobs: 150, NightJobs: 40, Rounds: 1, PollAll: true, Progress: func(p queuekit.Progress) { t.Log(p.Note) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 3 executors × 2 worker counts", len(rows))
	}
	for _, r := range rows {
		if !(r.Median > 0) || r.Median < r.Min || r.Median > r.Max || len(r.JobsPerSecond) != 1 {
			t.Errorf("%s at %d workers: median %v, range %v..%v over %d rounds", r.Executor, r.Workers, r.Median, r.Min, r.Max, len(r.JobsPerSecond))
		}
		isFleet := strings.HasPrefix(r.Executor, "fleet")
		if isFleet && (r.Ceiling <= 0 || r.IndexWUPerJob < 3.999 || r.IndexWUPerJob > 4.001) {
			t.Errorf("%s at %d workers: ceiling %v, index write units per job %v; want a ceiling and 4", r.Executor, r.Workers, r.Ceiling, r.IndexWUPerJob)
		}
		if !isFleet && r.Ceiling != 0 {
			t.Errorf("night row with a ceiling %v", r.Ceiling)
		}
		// Every night job is claimed, started and ended: at least the start's
		// 1 table unit, and its lease_until moving in the "leases" index (2)
		// (lease's TestWriteUnitsPerJobFollowDynamoDBRules checks the rest).
		if !isFleet && (r.TableWUPerJob < 1 || r.IndexWUPerJob < 2) {
			t.Errorf("night at %d workers: write units per job %.2f + %.2f, want at least 1 + 2", r.Workers, r.TableWUPerJob, r.IndexWUPerJob)
		}
	}
}

// The pool bound is one client's conditional write rate over 1 + 1/k: a
// release per job and a claim per k jobs (half the rate when k = 1).
func TestPoolBoundIsHalfOneClientsWriteRate(t *testing.T) {
	cat := ddbtest.NewCatalog(t)
	t.Cleanup(func() {
		if f, err := fleet.New(cat); err == nil {
			_ = f.DeleteTable(context.Background())
		}
	})
	for _, k := range []int{1, 4} {
		rtt, bound, err := claimrate.PoolBound(context.Background(), cat, 300*time.Millisecond, k)
		if err != nil {
			t.Fatal(err)
		}
		if rtt <= 0 || bound <= 0 {
			t.Fatalf("round trip %s, bound %v", rtt, bound)
		}
		if want := (1 / rtt.Seconds()) / (1 + 1/float64(k)); bound < want*0.999 || bound > want*1.001 {
			t.Errorf("k = %d: bound %v, want (1/%s)/(1 + 1/%d) = %v", k, bound, rtt, k, want)
		}
	}
	if _, _, err := claimrate.PoolBound(context.Background(), cat, time.Millisecond, 0); err == nil {
		t.Error("0 jobs per claim: want an error")
	}
}

func ExampleMedian() {
	fmt.Println(claimrate.Median([]float64{3, 1, 2}), claimrate.Median([]float64{4, 1, 3, 2}))
	// Output: 2 2.5
}

var benchWorkers = flag.String("fleet-workers", "2,8", "worker counts BenchmarkCompare measures")

// BenchmarkCompare prints the night executor beside the fleet (owned shards,
// and every worker polling every shard) at the same worker counts, measured
// in one run, interleaved rounds; run it with -benchtime 1x, e.g.
//
//	go test -run '^$' -bench Compare -benchtime 1x -timeout 60m ./queuekit/claimrate \
//	    -args -fleet-jobs 20000 -fleet-workers 2,8
func BenchmarkCompare(b *testing.B) {
	var workers []int
	for _, s := range strings.Split(*benchWorkers, ",") {
		var w int
		if _, err := fmt.Sscan(s, &w); err != nil || w < 1 {
			b.Fatalf("-fleet-workers %q: want counts like 2,8", *benchWorkers)
		}
		workers = append(workers, w)
	}
	cat := ddbtest.NewCatalog(b)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if ex, err := lease.New(cat); err == nil {
			_ = ex.DeleteTable(ctx)
		}
		if f, err := fleet.New(cat); err == nil {
			_ = f.DeleteTable(ctx)
		}
	})
	ctx := context.Background()
	for range b.N {
		rows, err := claimrate.Compare(ctx, cat, claimrate.Config{Bin: buildCLI(b), Workers: workers, Slots: *benchSlots, Shards: *benchShards,
			FleetJobs: *benchJobs, NightJobs: *benchNightJobs, Rounds: *benchRounds, PollAll: true,
			Progress: func(p queuekit.Progress) { fmt.Fprintln(os.Stderr, p.Note) }})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\n%-40s %7s %5s %9s %17s %10s %12s %14s %16s\n", "executor", "workers", "slots", "jobs/s", "range", "lost/won", "writes/job", "WU/job t+i", "ceiling/s")
		for _, r := range rows {
			wu := "-"
			if r.TableWUPerJob > 0 {
				wu = fmt.Sprintf("%.2f+%.2f", r.TableWUPerJob, r.IndexWUPerJob)
			}
			fmt.Printf("%-40s %7d %5d %9.0f %8.0f..%-8.0f %10.3f %12.2f %14s %16.0f\n", r.Executor, r.Workers, r.Slots, r.Median, r.Min, r.Max,
				r.LostPerWon, r.WritesPerJob, wu, r.Ceiling)
		}
		for _, w := range workers {
			var nightRate, owned, all, ceil, wpj float64
			for _, r := range rows {
				if r.Workers != w {
					continue
				}
				switch r.Executor {
				case claimrate.Night:
					nightRate = r.Median
				case claimrate.FleetOwned:
					owned, ceil, wpj = r.Median, r.Ceiling, r.WritesPerJob
				case claimrate.FleetAll:
					all = r.Median
				}
			}
			fmt.Printf("%d workers: fleet %.1f× the night executor; owned shards %.2f× polling every shard; fleet at %.0f%% of ceiling/writes-per-job (%.0f/%.2f = %.0f jobs/s)\n",
				w, owned/nightRate, owned/all, 100*owned/(ceil/wpj), ceil, wpj, ceil/wpj)
		}
	}
}

var (
	benchJobs      = flag.Int("fleet-jobs", 2000, "jobs per fleet run in BenchmarkCompare")
	benchNightJobs = flag.Int("night-jobs", 400, "jobs per night-executor run in BenchmarkCompare")
	benchSlots     = flag.Int("fleet-slots", 4, "slots per worker in BenchmarkCompare")
	benchShards    = flag.Int("fleet-shards", 16, "shards in BenchmarkCompare")
	benchRounds    = flag.Int("rounds", 3, "interleaved rounds in BenchmarkCompare")
)
