package capacity

import (
	"fmt"
	"testing"

	"github.com/nightqueue/workshop/queuekit/workload"
)

// By hand: seed 003 at the average, L = 100e6/86,400 × 300 = 347,222 messages
// in flight, ⌈347,222 / 120,000⌉ = 3 queues; exactly 120,000 is one queue.
func TestSQSQueuesFor(t *testing.T) {
	p, err := Seed003.Plan()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inFlight float64
		want     int
	}{{p.ConcurrentJobs, 3}, {120_000, 1}, {120_001, 2}, {1, 1}} {
		if got, err := SQSQueuesFor(c.inFlight); err != nil || got != c.want {
			t.Errorf("SQSQueuesFor(%v) = %d, %v; want %d", c.inFlight, got, err, c.want)
		}
	}
	for _, bad := range []float64{0, -1, 1e30} {
		if _, err := SQSQueuesFor(bad); err == nil {
			t.Errorf("SQSQueuesFor(%v): want an error", bad)
		}
	}
}

// Seed 003's queues at the average and at the p95 of the busiest 5-minute
// bin (18.17, ExampleHistoryPeaks_Estimate): 347,222 × 18.17 in flight.
func ExampleSQSQueuesFor() {
	_, process, err := HistoryPeaks{Workload: workload.Config{Seed: 1}, BinMinutes: 5,
		JobsPerDay: Seed003.JobsPerDay, Days: 1000, Seed: 1}.Estimate()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, peak := range []float64{1, process.P95} {
		f := Seed003
		f.PeakFactor = peak
		p, err := f.Plan()
		if err != nil {
			fmt.Println(err)
			return
		}
		q, err := SQSQueuesFor(p.ConcurrentJobs)
		fmt.Printf("peak %.2f: %.0f in flight, %d queues %v\n", peak, p.ConcurrentJobs, q, err)
	}
	// Output:
	// peak 1.00: 347222 in flight, 3 queues <nil>
	// peak 18.17: 6310723 in flight, 53 queues <nil>
}
