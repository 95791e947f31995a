package leaselab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// Two workers decide from the same pool version and claim the head of the
// queue at the same moment: one wins, the other's transaction is cancelled
// (a lost race, not an error) on the conditions of all three items.
func TestRaceForOneJobHasOneWinner(t *testing.T) {
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	cat := ddbtest.Catalog(t)
	ctx := context.Background()
	if _, err := cat.Seed(ctx, n.Jobs); err != nil {
		t.Fatal(err)
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.DeleteTable(context.Background()) })
	shown, err := RaceForOneJob(ctx, ex, n, lease.Config{Workers: 3, MaxRetry: lease.DefaultMaxRetry}, []string{"A", "B"})
	if err != nil {
		t.Fatal(err)
	}
	won := 0
	for _, s := range shown {
		// The head of the stable night at minute 0: 003, the priority-3 exclusive job.
		if s.JobID != "JOB-20260513-003" || !strings.Contains(s.PoolCondition, "version = 0") || !strings.Contains(s.JobCondition, "attempt = 0") {
			t.Fatalf("claim %+v: want JOB-20260513-003 on pool version 0, attempt 0", s)
		}
		if s.Won {
			won++
		} else if len(s.Reasons) != 3 || s.Reasons[0] != "ConditionalCheckFailed" || s.Reasons[1] != "ConditionalCheckFailed" {
			// The job is no longer claimable, the pool moved past version 0,
			// and the winner wrote attempt 1 already.
			t.Fatalf("loser's reasons %v: want ConditionalCheckFailed on the job and the pool", s.Reasons)
		}
	}
	if won != 1 || Winners(shown) != 1 {
		t.Fatalf("%d winners, want exactly 1: %+v", won, shown)
	}
	// The night is left DONE: a run may follow at once.
	if _, err := ex.Run(ctx, n, lease.RunConfig{Config: lease.Config{Workers: 3, Minute: 5 * time.Millisecond, MaxRetry: lease.DefaultMaxRetry}, Slots: 3}); err != nil {
		t.Fatalf("run after the race: %v", err)
	}
}
