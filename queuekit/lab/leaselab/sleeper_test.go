package leaselab

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// The notebook's demonstration, for real: a queuekit worker process
// stopped for three leases has its job re-claimed; its late end is refused
// by the fence and logged; the job ends once, and its token moved on four
// times (claim, reaping, claim, end). Stopped for a quarter of a lease, the
// same worker keeps its lease: one attempt, nothing fenced (the exercise's
// answer, derived here from the heartbeat rule, not read from a run).
// Both write the job's result through the result store: the long sleeper's
// late result is refused (fence token 1 against the rescuer's 3, the same
// run), the short one's is stored, at a token newer than the run before's.
func TestSleepThroughLease(t *testing.T) {
	t.Parallel()
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
		r.Attempts[1].Worker != "rescuer" || r.Attempts[1].Outcome != queuekit.StatusSuccess {
		t.Fatalf("attempts %+v: want the sleeper's LEASE_EXPIRED, then the rescuer's SUCCESS", r.Attempts)
	}
	t.Logf("sleeper %+v; results written %d, refused %+v; stored %+v", r.Sleeper, r.ResultWritten, r.ResultRefused, r.Stored)
	var ends, writes int
	for _, l := range r.Refusals {
		if strings.Contains(l, "fenced: sleeper no longer holds the lease of token 1") {
			ends++
		}
		if strings.Contains(l, "late result refused by the result store") {
			writes++
		}
	}
	if r.Sleeper.Fenced != 1 || ends != 1 || writes != 1 {
		t.Fatalf("sleeper fenced %d, refusals %q: want one late end refused at token 1 and one refused result write", r.Sleeper.Fenced, r.Refusals)
	}
	if r.Ended != 1 || r.Job.Status != queuekit.StatusSuccess || r.Job.Token != 4 || r.Job.Worker != "" {
		t.Fatalf("ended %d, job %+v: want 1 end, SUCCESS, token 4, no holder", r.Ended, r.Job)
	}
	// The result store: the sleeper (the run's claim 1) woke up after the
	// rescuer (claim 3: claim, reaping, claim) had written; its late result
	// was sent and refused, and the store holds the rescuer's.
	const low = 1<<32 - 1
	if !r.StoredOK || r.Stored.Worker != "rescuer" || r.Stored.Attempt != 2 || r.Stored.Token&low != 3 || r.Stored.Token>>32 < 1 {
		t.Fatalf("stored %+v (ok %v): want the rescuer's result of attempt 2, fence token 3 of a run >= 1", r.Stored, r.StoredOK)
	}
	if len(r.ResultRefused) != 1 || r.ResultWritten != 0 {
		t.Fatalf("sleeper's result writes: %d written, refused %+v; want 0 written and 1 refused", r.ResultWritten, r.ResultRefused)
	}
	if x := r.ResultRefused[0]; x.RefusedWorker != "sleeper" || x.RefusedAttempt != 1 || x.Token>>32 != r.Stored.Token>>32 || x.Token&low != 1 ||
		x.Stored != r.Stored.Token || x.StoredWorker != "rescuer" {
		t.Fatalf("refused write %+v: want the sleeper's attempt 1 at fence token 1 of run %d, refused for the rescuer's token %d",
			x, r.Stored.Token>>32, r.Stored.Token)
	}
	ShowSleeper(r)
	ShowSleeperResults(r)

	short, err := SleepThroughLease(ctx, cat, SleeperConfig{Lease: 2 * time.Second, Pause: 500 * time.Millisecond, Bin: bin})
	if err != nil {
		t.Fatal(err)
	}
	if len(short.Attempts) != 1 || short.Sleeper.Fenced != 0 || short.Job.Token != 2 || short.Ended != 1 {
		t.Fatalf("a pause of a quarter lease: %d attempts, %d fenced, token %d, ended %d; want 1, 0, 2, 1",
			len(short.Attempts), short.Sleeper.Fenced, short.Job.Token, short.Ended)
	}
	if short.ResultWritten != 1 || len(short.ResultRefused) != 0 || !short.StoredOK || short.Stored.Worker != "sleeper" || short.Stored.Token&low != 1 ||
		short.Stored.Token <= r.Stored.Token {
		t.Fatalf("a pause of a quarter lease: %d written, refused %+v, stored %+v; want the sleeper's result stored, at a token newer than the last run's %d",
			short.ResultWritten, short.ResultRefused, short.Stored, r.Stored.Token)
	}
}

// The shard-ownership demonstration for real: three fleet-worker processes,
// one killed with SIGKILL; after its leases end, every shard has a live
// owner other than the dead worker, and an acquire in the watched shard's
// history came after the lease it took over had ended (never before).
func TestTakeoverReassignsTheDeadWorkersShards(t *testing.T) {
	t.Parallel()
	cat := ddbtest.Catalog(t)
	ctx := context.Background()
	// Takeover.Run leaves the fleet table (TTL on) for the notebook to read;
	// a test's would hold one of DynamoDB Local's few TTL sweeps for good.
	ft, err := cat.DB().Open(cat.Table() + fleet.TableSuffix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ft.DeleteAndWait(context.Background()) })
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
	// The watched shard is one bob owned before the kill, and its history
	// shows the handover: an acquire by bob, then one by a survivor of the
	// lease that had ended.
	var bobHeld bool
	for _, row := range OwnerRows(res.Before, res.AtBefore) {
		bobHeld = bobHeld || (row[0] == fmt.Sprint(res.Watched.Shard) && row[1] == "bob")
	}
	if !bobHeld {
		t.Errorf("watched shard %d: bob did not own it before the kill (%v)", res.Watched.Shard, OwnerRows(res.Before, res.AtBefore))
	}
	if h := res.Handover; h.Holder == "" || h.Holder == "bob" || h.PrevUntilMS == 0 || h.Token == 0 {
		t.Errorf("watched shard %d: no handover from bob in its history %+v (got %+v)", res.Watched.Shard, res.Watched.History, h)
	}
	for _, e := range res.Watched.History {
		if e.Op == "acquire" && e.PrevUntilMS > 0 && e.AtMS < e.PrevUntilMS {
			t.Errorf("shard %d: %s acquired at %d, before the lease it took over ended at %d", res.Watched.Shard, e.Holder, e.AtMS, e.PrevUntilMS)
		}
	}
}
