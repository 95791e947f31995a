package claimrate_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
)

// One small comparison of the tiers, for real: a row for each fleet with a
// positive median inside its range, every job claimed once and no more
// (claims won = jobs), each job's own writes (claim, end) plus the leases'
// share, and the due index's 3 write units a job (a claim moves the key:
// 2; the end removes it: 1; the submit's is not counted) up to the shard
// items' share; the two tiers sent every job at least once.
func TestCompareTiersMeasuresBothFleets(t *testing.T) {
	cat := ddbtest.NewCatalog(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if f, err := fleet.New(cat); err == nil {
			_ = f.DeleteTable(ctx)
		}
	})
	const jobs = 200
	rows, err := claimrate.CompareTiers(context.Background(), cat, sqstest.Client(t), claimrate.TiersConfig{Workers: []int{2}, Jobs: jobs, Rounds: 1, Shards: 8,
		Queue: sqstest.Name(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Fleet != claimrate.OneTier || rows[1].Fleet != claimrate.TwoTier {
		t.Fatalf("rows %+v: want the one tier then the two tiers", rows)
	}
	for _, r := range rows {
		if !(r.Median > 0) || r.Median < r.Min || r.Median > r.Max || len(r.JobsPerSecond) != 1 {
			t.Errorf("%s: median %.1f, range %.1f..%.1f, rounds %d", r.Fleet, r.Median, r.Min, r.Max, len(r.JobsPerSecond))
		}
		if r.WritesPerJob < 2 || r.TableWUPerJob < 2 {
			t.Errorf("%s: %.2f writes and %.2f table units a job: want at least the claim and the end", r.Fleet, r.WritesPerJob, r.TableWUPerJob)
		}
		if math.Abs(r.IndexWUPerJob-3) > 0.5 {
			t.Errorf("%s: %.2f index write units a job: want 3 (claim 2, end 1)", r.Fleet, r.IndexWUPerJob)
		}
	}
	if rows[1].Dispatched < 1 {
		t.Errorf("the two tiers sent %.2f messages a job: want every job at least once", rows[1].Dispatched)
	}
}

var benchDispatchers = flag.Int("dispatchers", 2, "dispatchers of the two tiers in BenchmarkTiers")

// BenchmarkTiers prints the one-tier fleet beside the two-tier fleet at the
// same worker counts (W fleet workers against W executors and D
// dispatchers), measured in one run, interleaved rounds, with the ratio of
// the medians; run it with -benchtime 1x, e.g.
//
//	go test -run '^$' -bench Tiers -benchtime 1x ./queuekit/claimrate \
//	    -args -fleet-jobs 2000 -fleet-workers 2,8 -rounds 3
func BenchmarkTiers(b *testing.B) {
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
		if f, err := fleet.New(cat); err == nil {
			_ = f.DeleteTable(ctx)
		}
	})
	for range b.N {
		rows, err := claimrate.CompareTiers(context.Background(), cat, sqstest.Client(b), claimrate.TiersConfig{Workers: workers,
			Dispatchers: *benchDispatchers, Slots: *benchSlots, Shards: *benchShards, Jobs: *benchJobs, Rounds: *benchRounds,
			Queue: sqstest.Name(b), Progress: func(p queuekit.Progress) { fmt.Fprintln(os.Stderr, p.Note) }})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\n%-44s %7s %5s %9s %17s %10s %11s %14s %9s\n", "fleet", "workers", "slots", "jobs/s", "range", "lost/won", "writes/job", "WU/job t+i", "sent/job")
		for _, r := range rows {
			sent := "-"
			if r.Fleet == claimrate.TwoTier {
				sent = fmt.Sprintf("%.2f", r.Dispatched)
			}
			fmt.Printf("%-44s %7d %5d %9.0f %8.0f..%-8.0f %10.3f %11.2f %14s %9s\n", r.Fleet, r.Workers, r.Slots, r.Median, r.Min, r.Max,
				r.LostPerWon, r.WritesPerJob, fmt.Sprintf("%.2f+%.2f", r.TableWUPerJob, r.IndexWUPerJob), sent)
		}
		for _, w := range workers {
			var one, two claimrate.TierRow
			for _, r := range rows {
				if r.Workers == w && r.Fleet == claimrate.OneTier {
					one = r
				}
				if r.Workers == w && r.Fleet == claimrate.TwoTier {
					two = r
				}
			}
			fmt.Printf("%d workers: two tiers %.2f× the one tier's jobs/s (medians %.0f and %.0f), %.2f× its write units a job (%.2f and %.2f)\n",
				w, two.Median/one.Median, two.Median, one.Median,
				(two.TableWUPerJob+two.IndexWUPerJob)/(one.TableWUPerJob+one.IndexWUPerJob),
				two.TableWUPerJob+two.IndexWUPerJob, one.TableWUPerJob+one.IndexWUPerJob)
		}
	}
}
