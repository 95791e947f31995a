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

// BenchmarkClaims measures how fast N workers (one slot each, each its own
// claimer, as separate processes would be) get through a night of b.N
// one-millisecond jobs on DynamoDB Local, all due at once: claims per second
// (each job is claimed once, so also jobs per second, start and end writes
// included) and the fraction of claim transactions that lost a race. Every
// claim and release moves the one pool item, so more workers mean more lost
// races. Run with a fixed count, e.g.
//
//	go test -run '^$' -bench Claims -benchtime 400x ./queuekit/lease
func BenchmarkClaims(b *testing.B) {
	for _, workers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			if b.N > 9999 {
				b.Fatalf("b.N = %d: job ids have four digits; use -benchtime 400x", b.N)
			}
			ex, _ := setup(b, nil)
			n := bigNight("2027-07-01", b.N, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cfg := lease.Config{Workers: workers, Policy: sim.Barrier, Minute: time.Millisecond,
				Poll: 5 * time.Millisecond, Lease: 30 * time.Second}
			runID, err := ex.Prepare(ctx, n, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var g errgroup.Group
			stats := make([]lease.WorkerStats, workers)
			for i := range workers {
				g.Go(func() error {
					var err error
					stats[i], err = ex.Join(ctx, n.BatchDate, lease.WorkerConfig{Slots: 1, Name: fmt.Sprintf("bench%d", i+1)})
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
			won, lost := 0, 0
			for _, s := range stats {
				won, lost = won+s.Won, lost+s.Lost
			}
			if won != b.N {
				b.Fatalf("%d claims won for %d jobs", won, b.N)
			}
			b.ReportMetric(float64(won)/elapsed.Seconds(), "claims/s")
			b.ReportMetric(float64(lost)/float64(won+lost), "lost/attempt")
		})
	}
}
