package fleetlab

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
)

// The summary's verdict follows the values: level within 15 %, otherwise
// not level, and a sweep whose one shard was never throttled measured the
// machine, not the layer.
func TestFleetSweepSummary(t *testing.T) {
	run := func(k int, wu float64, throttled int) FleetShardRun {
		return FleetShardRun{Shards: k, IndexWritesPerSecond: wu, IndexLimit: 80, IndexPartitions: 4, PartitionsWritten: min(k, 4),
			Throttled: map[string]int{"IndexWriteKeyRangeThroughputExceeded": throttled}, Report: fleetrun.Report{JobsPerSecond: wu / 4}}
	}
	cases := []struct {
		runs []FleetShardRun
		want string
	}{
		{[]FleetShardRun{run(1, 20, 5), run(4, 42, 9), run(8, 47, 30)}, "stayed level (×1.1)"},
		{[]FleetShardRun{run(1, 20, 5), run(4, 30, 9), run(8, 47, 30)}, "changed by ×1.6: not level"},
		{[]FleetShardRun{run(1, 20, 0), run(8, 47, 30)}, "measured the machine, not the layer"},
	}
	for _, c := range cases {
		got := FleetSweepSummary(c.runs, 50)
		if !strings.Contains(got, c.want) || !strings.HasPrefix(got, "At S = 50 one index partition takes 20 write units a second.") {
			t.Errorf("summary %q, want it to contain %q", got, c.want)
		}
	}
}

// The mean leaves out the first second (the partitions' starting capacity)
// and the last (partial): (4,000 + 4,000 + 5,000) / 3 = 4,333.
func TestPeakStartSummary(t *testing.T) {
	r := PeakStartRun{Partitions: 4, PerSecond: []float64{9000, 4000, 4000, 5000, 100}, Elapsed: 4,
		Result: limitslab.HotLoadResult{Landed: 30, Failed: 70}, Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 70}}
	got := PeakStartSummary([]PeakStartRun{r}, 147250.2, 500)
	for _, want := range []string{"Offered 147,250 write units", "(4 partitions in the layer) landed 4,333 a second", "of 12,500 sent a second",
		"`TableWriteKeyRangeThroughputExceeded`: 70"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q, want %q", got, want)
		}
	}
}
