package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// BenchmarkClaims measures how fast N workers (each its own claimer, as
// separate processes would be, with one slot each, or one worker with 8
// slots that claims up to 8 jobs per transaction) get through a night of b.N
// one-millisecond jobs on DynamoDB Local, all due at once: claims per second
// (each job is claimed once, so also jobs per second, start and end writes
// included), the fraction of claim transactions that lost a race, and the
// jobs each winning transaction claimed. Every claim and release moves the
// one pool item, so more workers mean more lost races. Run with a fixed
// count, e.g.
//
//	go test -run '^$' -bench Claims -benchtime 400x ./queuekit/lease
func BenchmarkClaims(b *testing.B) {
	for _, tc := range []struct{ workers, slots int }{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 8}} {
		workers, slots := tc.workers, tc.slots
		b.Run(fmt.Sprintf("workers=%d,slots=%d", workers, slots), func(b *testing.B) {
			if b.N > 9999 {
				b.Fatalf("b.N = %d: job ids have four digits; use -benchtime 400x", b.N)
			}
			ex, _ := setup(b, nil)
			n := bigNight("2027-07-01", b.N, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cfg := lease.Config{Workers: workers * slots, Policy: sim.Barrier, Minute: time.Millisecond,
				Poll: 5 * time.Millisecond, Lease: 30 * time.Second, MaxRetry: lease.DefaultMaxRetry}
			runID, err := ex.Prepare(ctx, n, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var g errgroup.Group
			stats := make([]lease.WorkerStats, workers)
			for i := range workers {
				g.Go(func() error {
					var err error
					stats[i], err = ex.Join(ctx, n.BatchDate, lease.WorkerConfig{Slots: slots, Name: fmt.Sprintf("bench%d", i+1)})
					return err
				})
			}
			b.ResetTimer()
			began := time.Now()
			if err := ex.Start(ctx, n.BatchDate, runID); err != nil {
				b.Fatal(err)
			}
			if err := ex.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(began)
			b.StopTimer()
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			won, tx, lost := 0, 0, 0
			for _, s := range stats {
				won, tx, lost = won+s.Won, tx+s.Batches, lost+s.Lost
			}
			if won != b.N {
				b.Fatalf("%d claims won for %d jobs", won, b.N)
			}
			b.ReportMetric(float64(won)/elapsed.Seconds(), "claims/s")
			b.ReportMetric(float64(lost)/float64(tx+lost), "lost/attempt")
			b.ReportMetric(float64(won)/float64(tx), "jobs/transaction")
		})
	}
}
