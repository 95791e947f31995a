package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// The notebook's demonstration, for real: a queuekit worker process
// stopped for three leases has its job re-claimed; its late end is refused
// by the fence and logged; the job ends once, and its token moved on four
// times (claim, reaping, claim, end). Stopped for a quarter of a lease, the
// same worker keeps its lease: one attempt, nothing fenced (the exercise's
// answer, derived here from the heartbeat rule, not read from a run).
func TestSleepThroughLease(t *testing.T) {
	cat := ddbtest.Catalog(t)
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.DeleteTable(context.Background()) })
	ctx := context.Background()
	bin, err := QueuekitBinary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := SleepThroughLease(ctx, cat, SleeperConfig{Lease: time.Second, Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Attempts) != 2 || r.Attempts[0].Worker != "sleeper" || r.Attempts[0].Outcome != lease.LeaseExpired ||
		r.Attempts[1].Worker != "rescuer" || r.Attempts[1].Outcome != lease.Success {
		t.Fatalf("attempts %+v: want the sleeper's LEASE_EXPIRED, then the rescuer's SUCCESS", r.Attempts)
	}
	if r.Sleeper.Fenced != 1 || len(r.Refusals) != 1 || !strings.Contains(r.Refusals[0], "fenced: sleeper no longer holds the lease of token 1") {
		t.Fatalf("sleeper fenced %d, refusals %q: want one late end refused at token 1", r.Sleeper.Fenced, r.Refusals)
	}
	if r.Ended != 1 || r.Job.Status != lease.Success || r.Job.Token != 4 || r.Job.Worker != "" {
		t.Fatalf("ended %d, job %+v: want 1 end, SUCCESS, token 4, no holder", r.Ended, r.Job)
	}
	ShowSleeper(r)

	short, err := SleepThroughLease(ctx, cat, SleeperConfig{Lease: 2 * time.Second, Pause: 500 * time.Millisecond, Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	if len(short.Attempts) != 1 || short.Sleeper.Fenced != 0 || short.Job.Token != 2 || short.Ended != 1 {
		t.Fatalf("a pause of a quarter lease: %d attempts, %d fenced, token %d, ended %d; want 1, 0, 2, 1",
			len(short.Attempts), short.Sleeper.Fenced, short.Job.Token, short.Ended)
	}
}

// The shard-ownership demonstration for real: three fleet-worker processes,
// one killed with SIGKILL; after its leases end, every shard has a live
// owner other than the dead worker, and an acquire in the watched shard's
// history came after the lease it took over had ended (never before).
func TestTakeoverReassignsTheDeadWorkersShards(t *testing.T) {
	cat := ddbtest.Catalog(t)
	ctx := context.Background()
	bin, err := QueuekitBinary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Takeover{Bin: bin, Shards: 6, Victim: 1, ShardLease: 2 * time.Second}.Run(ctx, cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before %d at %s, after %d at %s", len(res.Before), res.AtBefore, len(res.After), res.AtAfter)
	if res.Killed != "bob" || len(res.After) != 6 {
		t.Fatalf("killed %q, %d shards after: want bob and 6", res.Killed, len(res.After))
	}
	for _, row := range OwnerRows(res.After, res.AtAfter) {
		if row[1] == "bob" || row[1] == "nobody" {
			t.Errorf("shard %s owned by %s %s after bob's leases ended: want a live worker", row[0], row[1], res.AtAfter.Sub(res.AtBefore))
		}
	}
	for _, e := range res.Watched.History {
		if e.Op == "acquire" && e.PrevUntilMS > 0 && e.AtMS < e.PrevUntilMS {
			t.Errorf("shard %d: %s acquired at %d, before the lease it took over ended at %d", res.Watched.Shard, e.Holder, e.AtMS, e.PrevUntilMS)
		}
	}
}
