package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fleet"
)

// A job whose holders die (claimed, never renewed, never ended) is taken
// over as a lost attempt, not a failure: with max_retry 0 it is claimed
// again and again, lost_attempts counting each lease that ran out and
// current_retry staying 0, until lost attempts pass the fleet's MaxLost
// (2 here); the claim after that ends it FATAL_FAILURE and dead-letters it,
// saying why. Real DynamoDB Local; the leases run out for real.
func TestLostAttemptsAreBoundedApartFromRetries(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	f := newFleet(t, fleet.WithLease(lease), fleet.WithMaxLost(2))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.Reset(ctx, 1); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	if _, err := f.SubmitJobs(ctx, []fleet.Job{{UserID: "user-000", JobID: "dies", JobType: "report", ScheduledAt: now, MaxRetry: 0}}); err != nil {
		t.Fatal(err)
	}
	read := func() fleet.Job {
		t.Helper()
		js, err := f.ListAllJobs(ctx, "user-000")
		if err != nil || len(js) != 1 {
			t.Fatalf("list: %v, %v", js, err)
		}
		return js[0]
	}
	// Attempt 1 and two takeovers (lost 1, lost 2): each holder dies.
	for want := range 3 {
		j := read()
		if j.Attempt != want || j.LostAttempts != max(0, want-1) || j.CurrentRetry != 0 {
			t.Fatalf("before claim %d: attempt %d, lost %d, retry %d; want %d, %d, 0", want+1, j.Attempt, j.LostAttempts, j.CurrentRetry, want, max(0, want-1))
		}
		a, res, _, err := f.Claim(ctx, j, "dies-"+string(rune('a'+want)))
		if err != nil || res != fleet.Claimed || a == nil {
			t.Fatalf("claim %d: %v, %v", want+1, res, err)
		}
		if got := a.Job; got.LostAttempts != want || got.CurrentRetry != 0 {
			t.Errorf("claim %d: lost %d, retry %d; want %d lost (every lease before it ran out), 0 retries (max_retry 0 not spent)", want+1, got.LostAttempts, got.CurrentRetry, want)
		}
		time.Sleep(lease + 100*time.Millisecond) // the holder dies: no heartbeat, no end
	}
	// A third lost attempt is past the bound of 2: the claim ends the job.
	j := read()
	a, res, _, err := f.Claim(ctx, j, "dies-d")
	if err != nil || res != fleet.EndedFatal || a != nil {
		t.Fatalf("claim after 2 lost attempts and a third lease run out: %v, %v; want EndedFatal", res, err)
	}
	j = read()
	if j.Status != queuekit.StatusFatalFailure || j.CurrentRetry != 0 || j.Attempt != 3 {
		t.Errorf("after: %s, retry %d, attempt %d; want FATAL_FAILURE, 0, 3", j.Status, j.CurrentRetry, j.Attempt)
	}
	dl, err := f.DeadLetters(ctx)
	if err != nil || len(dl) != 1 {
		t.Fatalf("dead letters %v, %v; want one", dl, err)
	}
	if !strings.Contains(dl[0].LastError, "3 attempts lost with no end (the fleet's bound is 2)") {
		t.Errorf("dead letter says %q; want it to name the lost attempts and the bound", dl[0].LastError)
	}
}
