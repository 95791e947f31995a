package timers_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/timers"
)

// BenchmarkTimerDelay schedules 20 and 200 timers due 2 s from now in a
// fresh table and reports how late they fired (p50, p95, max, seconds).
// One iteration takes as long as DynamoDB Local's sweep of the table (20
// items every 10 s): run it with -benchtime 1x.
func BenchmarkTimerDelay(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				tm := timers.New(ddbtest.NewCatalog(b))
				r, err := timers.Trial{Count: n, DueIn: 2 * time.Second}.Run(context.Background(), tm)
				if err != nil {
					b.Fatal(err)
				}
				if r.Fired != n || r.Duplicates != 0 {
					b.Fatalf("fired %d of %d, %d duplicates", r.Fired, n, r.Duplicates)
				}
				b.ReportMetric(r.P50, "p50-s")
				b.ReportMetric(r.P95, "p95-s")
				b.ReportMetric(r.Max, "max-s")
			}
		})
	}
}
