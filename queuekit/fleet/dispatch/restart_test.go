package dispatch_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
)

// waitEnded waits until at most left jobs are unfinished.
func (r *rig) waitEnded(left int, within time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := r.f.Unfinished(r.ctx, r.shards)
		if err != nil {
			r.t.Fatal(err)
		}
		if n <= left {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d jobs unfinished after %s: want at most %d", n, within, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkShardsFree checks that no shard is held once the dispatchers left.
func (r *rig) checkShardsFree() {
	r.t.Helper()
	states, err := r.f.ShardStates(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, s := range states {
		if s.Holder != "" {
			r.t.Errorf("shard %d still held by %s after the dispatchers left", s.Shard, s.Holder)
		}
	}
}

// A real restart of DynamoDB Local mid-run, on the two tiers: a server of
// the test's own keeps the fleet table on disk (-dbPath in a temporary
// directory); once 4 of 40 jobs ended its process is killed (SIGKILL: open
// connections reset, calls in flight left without a reply, so a claim, a
// heartbeat or an end may have landed unseen) and started again 2 s later
// on the same port and the same -dbPath. The restart takes as long as the
// JVM takes here (several seconds, many job and shard leases): the test
// waits for it, whatever it takes, and nothing in it depends on its
// length. Dispatchers and executors run on the fleet's own client (the
// ride-out policy, nothing stretched): the executors count what got no
// answer and go on, the dispatchers keep their loops going. Read back
// afterwards: every job SUCCESS, ended exactly once by its last claim's
// token (checkEndedOnce), nothing dead-lettered, every re-claim follows a
// lease lost or a claim or an end left unanswered, every shard free once
// the dispatchers left, and no process died (a process that returned
// before it was stopped is replaced so the run still ends, and fails the
// test).
func TestDynamoDBLocalRestartMidRunKeepsTheInvariants(t *testing.T) {
	t.Parallel()
	srv := ddbtest.StartPrivate(t, "", ddbtest.WithDBPath(t.TempDir()))
	r := newRig(t, 4, catalog.WithEndpoint(srv.Endpoint))
	const n = 40
	r.submit(n, 0)
	fr := r.start([]string{"d1", "d2"}, []string{"e1", "e2", "e3", "e4"}, 2, r.work(testLease/2))
	r.waitEnded(n-4, time.Minute)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(2 * time.Second)
	srv.Restart(t)
	t.Logf("DynamoDB Local unreachable for %.1f s (killed, restarted on the same -dbPath)", time.Since(down).Seconds())
	r.waitDone(2 * time.Minute)
	fr.stopAll(t)
	byID := r.checkEndedOnce(n)
	s := totals(fr)
	a := attempts(byID)
	if a-n > s.fenced+s.claimErrors+s.endErrors {
		t.Errorf("%d re-claims but %d leases lost, %d claims and %d ends unanswered: a lease was taken that its holder kept", a-n, s.fenced, s.claimErrors, s.endErrors)
	}
	if dl, err := r.f.DeadLetters(r.ctx); err != nil || len(dl) != 0 {
		t.Errorf("dead letters %v (%v); want none", dl, err)
	}
	r.checkShardsFree()
	var shardsLost, dispErrs int
	for _, st := range fr.disp {
		shardsLost += st.ShardsLost
		dispErrs += st.DispatchErrors
	}
	t.Logf("%d jobs in %d attempts; leases lost %d (expired %d), claims unanswered %d, ends unanswered %d; dispatchers lost %d shards, %d sends failed",
		n, a, s.fenced, s.expired, s.claimErrors, s.endErrors, shardsLost, dispErrs)
}

// A slow rejoin on the two tiers (the one tier's
// TestSlowRejoinLosesNoJobLease): once both dispatchers joined, every
// membership write of theirs (renewal, join, leave) is held 2 s, two
// membership leases (the shard lease, 1 s here), so their memberships are
// lost and taken again slowly, over and over, while their shard writes,
// their polls and the executors' calls stay fast. No lock is held across a
// membership call, so the shard renewals and looks do not wait behind it
// (no shard lease is lost), and an executor's job lease never depends on a
// dispatcher's membership: no job lease is lost, every job of 40 (each of a
// job lease, so heartbeats run) succeeds on its first attempt, ended once,
// no dispatcher dies, and every shard is free once they left. Executors have no
// membership (their liveness is their jobs' leases), so there is no
// executor rejoin to slow: the executors' own slow calls are
// TestSlowCallsAndResetsKeepTheInvariants.
func TestSlowRejoinOfTheDispatchersLosesNoJobLease(t *testing.T) {
	t.Parallel()
	r, rt, fr := slowedRun(t, func(rt *toxitest.Router) {
		rt.Proxy(t, "member").Slow(t, 1, 2*testShardLease, 0)
	})
	s := totals(fr)
	if s.fenced != 0 {
		t.Errorf("%d job leases lost while the dispatchers' membership writes were slow", s.fenced)
	}
	r.checkShardsFree()
	var rejoins, shardsLost, dispatched int
	for _, st := range fr.disp {
		rejoins += st.Rejoins
		shardsLost += st.ShardsLost
		dispatched += st.Dispatched
	}
	if shardsLost != 0 {
		t.Errorf("the dispatchers lost %d shard leases while their membership writes were slow: their shard renewals waited behind them", shardsLost)
	}
	if rejoins == 0 {
		t.Errorf("no membership was lost and taken again: the slow rejoin was not exercised (%d member requests)", rt.Count("member"))
	}
	t.Logf("%d membership writes held %s (after the 2 joins), %d rejoins, %d shards lost; %d jobs (sent %d times), %d job leases lost, %d claims refused",
		rt.Count("member")-2, 2*testShardLease, rejoins, shardsLost, slowedJobs, dispatched, s.fenced, s.refused)
}

// Slow renewals do not churn the shards (issue 45): once both dispatchers
// joined, 20% of the connections that carry their shard renewals and
// membership writes hold every reply 2 s (two shard leases), while 40 jobs
// of a job lease run. A renewal that gets no answer after Hedge (Every/2)
// sends a copy on another connection, up to fence.MaxCopies, and takes the
// first answer (fence.Options.Hedge): a lease is lost only when every copy
// sent before the margin meets a held connection. Without copies (Hedge
// off) two runs lost 19 shard leases each and rejoined 12 and 9 times;
// with them, none in two runs, 1 shard in a third (beside another
// test), and 2 shards and 1 rejoin under four busy loops a core; the test
// wants at most 5 of each. Every job ends once
// on its first attempt, and every shard is free once the dispatchers left.
func TestSlowRenewalsDoNotChurnTheShards(t *testing.T) {
	t.Parallel()
	r, rt, fr := slowedRun(t, func(rt *toxitest.Router) {
		rt.Proxy(t, "shard_renew").Slow(t, 0.2, 2*testShardLease, 0)
		rt.Proxy(t, "member").Slow(t, 0.2, 2*testShardLease, 0)
	})
	r.checkShardsFree()
	var rejoins, shardsLost int
	for _, st := range fr.disp {
		rejoins += st.Rejoins
		shardsLost += st.ShardsLost
	}
	if shardsLost > 5 || rejoins > 5 {
		t.Errorf("%d shard leases lost and %d rejoins while 20%% of the renewals' connections were slow: want at most 5 of each (19 without copies)", shardsLost, rejoins)
	}
	t.Logf("%d shard renewals and %d membership writes sent (copies included), 20%% of their connections held %s; %d shards lost, %d rejoins",
		rt.Count("shard_renew"), rt.Count("member"), 2*testShardLease, shardsLost, rejoins)
}

// slowedRun runs 40 jobs of a job lease on dispatchers d1 and d2, whose
// calls go through a toxitest router by kind of dispatcher write (their
// shard writes and membership), and executors e1-e4 of 2 slots on the
// rig's own client. Once both dispatchers joined (fast), inject puts its
// faults on the router. It checks that every job ended once on its first
// attempt and returns the rig, the router and the run.
// slowedJobs is how many jobs slowedRun runs.
const slowedJobs = 40

func slowedRun(t *testing.T, inject func(*toxitest.Router)) (*rig, *toxitest.Router, *fleetRun) {
	t.Helper()
	r := newRig(t, 4)
	r.submit(slowedJobs, 3)
	rt := toxitest.NewRouter(t, r.f.Endpoint(), dispatcherKind, "shard_acquire", "shard_renew", "shard_release", "member")
	dt := r.tierOn(r.fleetOn(rt.Default.URL, func(o *dynamodb.Options) { o.HTTPClient = rt.HTTPClient() }))
	fr := r.startOn(func(string) *dispatch.Tier { return dt }, func(string) *dispatch.Tier { return r.tier },
		[]string{"d1", "d2"}, []string{"e1", "e2", "e3", "e4"}, 2, r.work(testLease))
	deadline := time.Now().Add(30 * time.Second)
	for rt.Count("member") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d membership writes in 30 s: the dispatchers did not join", rt.Count("member"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	inject(rt)
	r.waitDone(2 * time.Minute)
	fr.stopAll(t)
	for _, j := range r.checkEndedOnce(slowedJobs) {
		if j.Attempt != 1 {
			t.Errorf("job %s: attempt %d; want SUCCESS on its first attempt", j.JobID, j.Attempt)
		}
	}
	return r, rt, fr
}
