package fleetlab

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
)

// The real fleet through the layer at S = 50: a new on-demand table's due
// index has 4 partitions (4,000 write units / 1,000, AWS "On-demand
// capacity mode"), each 1,000 / 50 = 20 write units a second, so the index
// serves 80. Every job ends SUCCESS, and with one worker (no lost claims)
// and no heartbeats each job writes the index 4 times: its submit puts
// the entry, its claim moves due_at (delete + put, AWS "GSI writes"), its
// end removes it (a lease expired on a busy machine adds an attempt, and
// its claim 2 more). One shard is one index key: one partition.
func TestRunFleetSweep(t *testing.T) {
	// Not parallel: it counts units and throttles through the limits layer,
	// which a busier DynamoDB Local would change.
	ctx := context.Background()
	s, err := limitslab.StartLimits(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := RunFleetSweep(ctx, s, FleetSweep{Table: "sweep_test_" + time.Now().Format("05"), JobsPerShard: 6, Shards: []int{1, 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Shards != 1 || runs[1].Shards != 4 {
		t.Fatalf("runs %+v, want shard counts 1 and 4 in order", runs)
	}
	for _, r := range runs {
		jobs := 6 * r.Shards
		if r.Report.Jobs != jobs || r.Report.Succeeded != jobs {
			t.Errorf("%d shards: %d jobs, %d SUCCESS, want %d of each", r.Shards, r.Report.Jobs, r.Report.Succeeded, jobs)
		}
		if r.IndexPartitions != 4 || r.IndexLimit != 80 {
			t.Errorf("%d shards: index %d partitions, limit %v a second; want 4 and 80", r.Shards, r.IndexPartitions, r.IndexLimit)
		}
		var units float64
		for _, u := range indexSeconds(s.Stats(), r.Table) {
			units += u
		}
		// A lease that expires on a busy machine gives the job a second
		// attempt, whose claim moves the key again: 2 units an attempt.
		if r.Report.Attempts < jobs {
			t.Errorf("%d shards: %d attempts for %d jobs", r.Shards, r.Report.Attempts, jobs)
		}
		if want := 2*jobs + 2*r.Report.Attempts; units != float64(want) {
			t.Errorf("%d shards: the index took %v write units, want 2 a job (submit, end) + 2 an attempt (%d): %d",
				r.Shards, units, r.Report.Attempts, want)
		}
		// Gone, so that it holds none of DynamoDB Local's few TTL sweepers.
		cat, err := catalog.New(ctx, catalog.WithEndpoint(s.URL), catalog.WithTable(r.Table))
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := cat.Exists(ctx); err != nil || ok {
			t.Errorf("%d shards: table %s exists = %v (%v) after the sweep; want it deleted", r.Shards, r.Table, ok, err)
		}
	}
	if runs[0].PartitionsWritten != 1 {
		t.Errorf("1 shard wrote %d index partitions, want 1", runs[0].PartitionsWritten)
	}
	if c, err := FleetSweepChart(s, runs); err != nil || c == nil {
		t.Errorf("chart: %v", err)
	}
}

// A new on-demand table serves 4,000 write units a second (AWS "On-demand
// capacity mode": 4 partitions); one with a warm throughput of 40,000
// serves ten times that. At S = 500 and 20,000 units a second offered for
// 3 s, the new table lands at most 8 a second (+ one second of capacity
// its partitions start with, + a partial second) and throttles the rest by
// its partitions; the warm table lands more.
func TestRunPeakStart(t *testing.T) {
	// Not parallel: it counts units and throttles through the limits layer,
	// which a busier DynamoDB Local would change.
	ctx := context.Background()
	s, err := limitslab.StartLimits(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := RunPeakStart(ctx, s, PeakStart{Offered: 20000, Seconds: 3, Warm: []int64{0, 40000}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh, warm := runs[0], runs[1]
	if fresh.Partitions != 4 || warm.Partitions != 40 {
		t.Fatalf("partitions %d and %d, want 4 and 40", fresh.Partitions, warm.Partitions)
	}
	if fresh.Result.Landed > 8*(3+2) || fresh.Throttled["TableWriteKeyRangeThroughputExceeded"] == 0 {
		t.Errorf("new table: %d landed, throttled %v; want at most 40 and some TableWriteKeyRangeThroughputExceeded", fresh.Result.Landed, fresh.Throttled)
	}
	if warm.Result.Landed <= fresh.Result.Landed {
		t.Errorf("warm table landed %d, the new one %d: want more", warm.Result.Landed, fresh.Result.Landed)
	}
	if c, err := PeakStartChart(runs, 20000, 500); err != nil || c == nil {
		t.Errorf("chart: %v", err)
	}
}
