package leaselab_test

import (
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

// Five runs of one setting: the median and the range, as notebook 05's
// poll-interval table prints them.
func ExampleSpreadOf() {
	s := leaselab.SpreadOf([]float64{6.6, 7.2, 20.6, 7.0, 6.9})
	fmt.Println(s)
	// Output: 7 (6.6 to 20.6)
}

// Three settings, two rounds: each round starts one setting later.
func ExampleInterleave() {
	_ = leaselab.Interleave(2, 3, func(round, arm int) error {
		fmt.Printf("round %d: setting %d\n", round, arm)
		return nil
	})
	// Output:
	// round 0: setting 0
	// round 0: setting 1
	// round 0: setting 2
	// round 1: setting 1
	// round 1: setting 2
	// round 1: setting 0
}

// A 25-minute job with a 4-minute lease renews every minute: 25
// heartbeats of 3 write units; idle workers polling every 30 s reap every
// 30 s, so a dead worker's job is taken over within the lease plus two
// reap intervals.
func ExampleLease() {
	l := leaselab.Lease{Runtime: 25 * time.Minute, Lease: 4 * time.Minute, Poll: 30 * time.Second, UnitsPerHeartbeat: 3}
	fmt.Println(l.ReapInterval(), l.Detection(), l.Heartbeats(), l.HeartbeatUnits())
	// Output: 30s 5m0s 25 75
}
