package fleet_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
)

// The fleet's kinds of write, told apart by the request (operation, key and
// the values it sets).
var fleetKinds = []string{"claim", "heartbeat", "end", "shard_acquire", "shard_renew", "shard_release", "member"}

func fleetKind(op string, body []byte) string {
	has := func(s string) bool { return bytes.Contains(body, []byte(s)) }
	switch {
	case op == "DeleteItem" && has(`"MEMBER"`), op == "UpdateItem" && has(`"MEMBER"`):
		return "member"
	case op != "UpdateItem":
		return ""
	case has(`"SHARD"`) && has("list_append"):
		return "shard_release"
	case has(`"SHARD"`) && has("op_nonce"):
		return "shard_acquire"
	case has(`"SHARD"`) && has("wanted_by"):
		return "" // a want
	case has(`"SHARD"`):
		return "shard_renew"
	case has(`"USER#`) && has(`"CLAIMED"`):
		return "claim"
	case has(`"USER#`) && has(`"PROCESSING"`):
		return "heartbeat"
	case has(`"USER#`) && has("op_nonce"):
		return "end"
	}
	return ""
}

// Lost replies, per kind of write: every reply of the kind is dropped (the
// write reaches DynamoDB Local and is applied; its reply never comes back,
// so the SDK retries a write that landed) until the SDK has retried two of
// them, then 30% of them. Two in-process workers run 24 jobs that need
// heartbeats. Read back raw: every job SUCCESS, ended exactly once, nothing
// dead-lettered; the attempts in the table equal the claims the workers
// counted won (a retried claim that had landed is recognised by its nonce,
// not counted lost); no lease was refused by the token (an end that landed
// is not taken for a fence), so every lost lease is one its holder gave up
// when no renewal got through in time, and every re-claim follows one; no
// worker died, and every shard was released at the end.
func TestLostRepliesPerWriteKind(t *testing.T) {
	t.Parallel()
	for _, kind := range fleetKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			lease := 3 * time.Second
			g := newRoutedRig(t, ctx, 2, 24, 0, lease, fleetKind, fleetKinds...)
			r := g.r
			px := r.Proxy(t, kind)
			all := px.LoseReplies(t, 1, 250*time.Millisecond)
			r.AfterRetries(kind, 2, func() {
				all()
				px.LoseReplies(t, 0.3, 250*time.Millisecond)
			})
			wait := g.joinWorkers(2, 3, fleet.Sleep(lease/2)) // two heartbeats each
			g.waitAllEnded(2 * time.Minute)
			w := wait()
			s := sum(t, w.stats, w.errs)
			attempts := g.checkEndedOnce(s)
			// Every claim that landed was counted won by its worker (a retried
			// claim refused by its own effect is recognised by its nonce): the
			// attempts in the table are the claims the workers won.
			if attempts != s.won {
				t.Errorf("%d attempts in the table, the workers counted %d claims won: landed claims were counted lost", attempts, s.won)
			}
			// No lease was refused by the token: no end that landed was taken for
			// a fence, no lease taken from a holder still renewing it. Leases
			// whose renewals could not get through in time (the holder gave them
			// up: DynamoDB Local behind a faulty proxy on a loaded machine) are
			// the only losses, and every re-claim follows one.
			if s.fenced != s.expired {
				t.Errorf("%d attempts lost their lease, only %d by expiry: %d refused by the token", s.fenced, s.expired, s.fenced-s.expired)
			}
			if attempts-g.jobs > s.expired {
				t.Errorf("%d re-claims but %d expired leases: a healthy job was taken over", attempts-g.jobs, s.expired)
			}
			st, err := g.f0.ShardStates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range st {
				if s.Holder != "" {
					t.Errorf("shard %d still held by %s after the workers left", s.Shard, s.Holder)
				}
			}
			if r.Retries(kind) == 0 {
				t.Fatalf("no %s request was sent again: the fault was not injected (%d sent)", kind, r.Count(kind))
			}
			t.Logf("%s: %d requests, %d retries after a lost reply; %d refused retries recognised as landed; %d jobs, %d attempts, %d leases expired",
				kind, r.Count(kind), r.Retries(kind), s.landed, g.jobs, attempts, s.expired)
		})
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	toxitest.Stop()
	os.Exit(code)
}

// Slow calls and connection resets: every request through Toxiproxy, one
// connection each; 5% of replies held 4 s (longer than the 3 s lease) and 5%
// of connections reset. Leases that slow calls cost are lost and their jobs
// claimed again; read back raw, every job ends SUCCESS exactly once, nothing
// is dead-lettered, no worker dies, and every shard is free after the
// workers left.
func TestSlowCallsAndResetsKeepTheInvariants(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	lease := 3 * time.Second
	g := newRoutedRig(t, ctx, 2, 24, 0, lease, func(string, []byte) string { return "" })
	r := g.r
	r.Default.Slow(t, 0.05, 4*time.Second, 0)
	r.Default.ResetPeer(t, 0.05, 0)
	wait := g.joinWorkers(2, 3, fleet.Sleep(lease/2))
	g.waitAllEnded(3 * time.Minute)
	g.stopAndCheck(wait)
}

// DynamoDB unreachable for 4 s mid-run (the proxy disabled, as during a
// restart of DynamoDB Local; the real restart, its tables kept on disk, is
// TestDynamoDBLocalRestartMidRunKeepsTheInvariants), longer than the 3 s
// leases. Leases that slow calls cost are lost and their jobs
// claimed again; read back raw, every job ends SUCCESS exactly once, nothing
// is dead-lettered, no worker dies, and every shard is free after the
// workers left.
func TestDynamoDBOutageMidRunKeepsTheInvariants(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	lease := 3 * time.Second
	g := newRoutedRig(t, ctx, 2, 24, 0, lease, func(string, []byte) string { return "" })
	r := g.r
	wait := g.joinWorkers(2, 3, fleet.Sleep(lease/2))
	waitFor(t, "some jobs to end", time.Minute, func() bool { return g.succeeded() >= 4 })
	r.Default.Cut(t)
	time.Sleep(4 * time.Second)
	r.Default.Restore(t)
	g.waitAllEnded(3 * time.Minute)
	g.stopAndCheck(wait)
}

// A slow rejoin (finding 5): every membership write (join, renewal, leave)
// is held 4 s, longer than the 3 s membership lease, so memberships are lost
// and taken again slowly, while every other call is fast. No lock is held
// across those calls, so heartbeats, polls and shard renewals do not wait
// behind them: no job lease is lost, every job succeeds on its first
// attempt, ended once.
func TestSlowRejoinLosesNoJobLease(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	lease := 3 * time.Second
	g := newRoutedRig(t, ctx, 2, 24, 0, lease, fleetKind, fleetKinds...)
	r := g.r
	wait := g.joinWorkers(2, 3, fleet.Sleep(lease))
	time.Sleep(200 * time.Millisecond) // the joins went through fast; from now on membership writes are slow
	r.Proxy(t, "member").Slow(t, 1, 4*time.Second, 0)
	g.waitAllEnded(3 * time.Minute)
	w := wait()
	s := sum(t, w.stats, w.errs)
	g.checkEndedOnce(s)
	js, err := g.f0.ListAllJobs(ctx, "user-000")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		if j.Attempt != 1 {
			t.Errorf("job %s: attempt %d; want SUCCESS on its first attempt", j.JobID, j.Attempt)
		}
	}
	if s.fenced != 0 {
		t.Errorf("%d job leases lost while membership writes were slow", s.fenced)
	}
	if s.rejoins == 0 {
		t.Errorf("no membership was lost and taken again: the slow rejoin was not exercised (%d member requests)", r.Count("member"))
	}
	t.Logf("%d member requests held 4 s, %d rejoins; %d jobs, 0 job leases lost", r.Count("member"), s.rejoins, g.jobs)
}
