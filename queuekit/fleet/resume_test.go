package fleet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
)

// A coordinator that dies mid-run (its context ends: nothing marks the run
// done) and the same run started again: the second run resumes on the same
// table instead of resetting it, so the jobs that had finished are kept
// (counted, not run again: every job ends exactly once over both runs) and
// the others are finished. With Fresh, a run starts afresh.
func TestInterruptedRunResumesAndKeepsFinishedJobs(t *testing.T) {
	t.Parallel()
	const jobs, users = 300, 10
	f := newFleet(t, fleet.WithLease(2*time.Second), fleet.WithShardLease(2*time.Second))
	cfg := fleetrun.Config{Bin: buildCLI(t), Jobs: jobs, Workers: 2, Slots: 2, Shards: 4, Job: 40 * time.Millisecond,
		Users: users, MaxRetry: 5, Ceiling: -1, Logf: t.Logf}
	ctx, die := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := fleetrun.Run(ctx, f, cfg); done <- err }()
	var before int
	waitFor(t, "some jobs to finish in the first run", 2*time.Minute, func() bool {
		before = 0
		for u := range users {
			js, err := f.ListAllJobs(context.Background(), fmt.Sprintf("user-%03d", u))
			if err != nil { // the table is not created yet
				return false
			}
			for _, j := range js {
				if j.Status == queuekit.StatusSuccess {
					before++
				}
			}
		}
		return before >= 20
	})
	die() // the coordinator dies
	if err := <-done; err == nil {
		t.Fatal("the interrupted run returned no error")
	}
	finished := 0
	for _, j := range allJobs(t, f, users) {
		if j.Status == queuekit.StatusSuccess {
			finished++
		}
	}
	if finished >= jobs {
		t.Fatalf("all %d jobs finished before the coordinator died: nothing to resume", jobs)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := fleetrun.Run(rctx, f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Resumed || rep.KeptFinished < finished || rep.Submitted != 0 {
		t.Fatalf("second run: resumed %v, kept %d finished (want at least the %d finished when the coordinator died), submitted %d (want 0)",
			rep.Resumed, rep.KeptFinished, finished, rep.Submitted)
	}
	all := allJobs(t, f, users)
	if len(all) != jobs {
		t.Fatalf("%d jobs, want %d", len(all), jobs)
	}
	for id, j := range all {
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 {
			t.Fatalf("job %s: %s, ends %d; want SUCCESS ended exactly once over both runs", id, j.Status, j.Ends)
		}
	}
	t.Logf("%d finished when the coordinator died; the resumed run kept %d and finished the rest", finished, rep.KeptFinished)
	// Finished runs are not resumed: the next one starts afresh.
	cfg.Jobs = 20
	rep, err = fleetrun.Run(rctx, f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed || rep.Submitted != 20 || rep.Succeeded != 20 {
		t.Fatalf("a run after a finished one: resumed %v, submitted %d, succeeded %d; want a fresh run of 20", rep.Resumed, rep.Submitted, rep.Succeeded)
	}
}
