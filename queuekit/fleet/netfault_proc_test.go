package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
)

// procKinds are the kinds a fault is aimed at in the worker-process tests:
// the fleet's writes (fleetKinds), a want mark (a worker asking a busier
// owner for a shard) and the rebalance's read of the shard items.
var procKinds = append(slices.Clone(fleetKinds), "shard_want", "shard_read")

func procKind(op string, body []byte) string {
	if k := fleetKind(op, body); k != "" {
		return k
	}
	has := func(s string) bool { return bytes.Contains(body, []byte(s)) }
	switch {
	case op == "UpdateItem" && has(`"SHARD"`) && has("wanted_by"):
		return "shard_want"
	case op == "Query" && has(`"SHARD"`):
		return "shard_read"
	}
	return ""
}

// A fault aimed at one kind of request at a time, in two real
// `queuekit fleet-worker` processes whose DynamoDB endpoint is a
// toxitest.Router (Router.Serve) in front of DynamoDB Local: every request
// of the kind goes through a Toxiproxy proxy of its own, every other
// request through a clean one.
//
//   - slow: the kind's replies are held 6 s, 1.5 job and shard leases (4 s),
//     longer than a heartbeat's own deadline (lease less a quarter) and
//     than a membership lease; every request of the kind, except heartbeats
//     and shard renewals, 30% of which are held (all of them would lose
//     every lease by design). The write lands at once, its answer comes
//     late.
//   - lost: the kind's replies are lost (a `timeout` toxic: the write lands,
//     the connection is closed after 250 ms, the SDK sends it again), all
//     of them until two were sent again, then 30% of them.
//
// w0 starts first and takes both shards; w1 joins later, so a want, a
// release and an acquire of a released shard happen mid-run. 16 jobs of
// 2 s (heartbeats every second). Read back raw afterwards: every job
// SUCCESS and ended exactly once, nothing dead-lettered; each job's fence
// token is its attempts plus one (one move per claim, one for the end: the
// token only went forward); the work log has every job's last attempt and
// extra lines only for attempts that lost their lease; the workers' claims
// won equal the attempts in the table but for claims left unanswered,
// their ends counted equal the jobs; no lease was refused by the token
// (every loss is one whose holder gave it up itself: the protocol kept
// every lease it could), every re-claim follows a loss; each shard's
// history shows one holder at a time; both processes exit cleanly on
// SIGTERM; and the fault reached requests of its kind.
func TestWorkerProcessesFaultPerKind(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"slow", "lost"} {
		for _, kind := range procKinds {
			t.Run(fault+"/"+kind, func(t *testing.T) {
				t.Parallel()
				faultOneKind(t, fault, kind)
			})
		}
	}
}

func faultOneKind(t *testing.T, fault, kind string) {
	const jobs, shards, slots = 16, 2, 3
	lease := 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g := newRoutedRig(t, ctx, shards, jobs, 0, lease, procKind, procKinds...)
	front := g.r.Serve(t)
	// The worker processes' SDK client is the CLI's: the standard retryer
	// (3 attempts, backoffs of seconds), so a call's attempts can all be
	// spent on lost replies: the worker must ride that out.
	px := g.r.Proxy(t, kind)
	switch fault {
	case "slow":
		share := float32(1)
		if kind == "heartbeat" || kind == "shard_renew" {
			share = 0.3
		}
		px.Slow(t, share, lease+lease/2, 0)
	case "lost":
		all := px.LoseReplies(t, 1, 250*time.Millisecond)
		g.r.AfterRetries(kind, 2, func() {
			all()
			px.LoseReplies(t, 0.3, 250*time.Millisecond)
		})
	}
	logPath := filepath.Join(t.TempDir(), "work.log")
	args := []string{"--endpoint", front, "--lease-ms", fmt.Sprint(lease.Milliseconds()), "--shard-lease-ms", fmt.Sprint(lease.Milliseconds()),
		"--job-ms", fmt.Sprint((lease / 2).Milliseconds()), "--work-log", logPath}
	w0 := startWorker(t, g.f0, "w0", shards, slots, args...)
	waitFor(t, "w0 to own both shards", 2*time.Minute, func() bool {
		select {
		case <-w0.done:
			t.Fatalf("w0 exited %v before it owned both shards: %s", w0.cmd.ProcessState, w0.errb.String())
		default:
		}
		return len(w0.stats().Owned) == shards
	})
	w1 := startWorker(t, g.f0, "w1", shards, slots, args...)
	g.waitAllEnded(4 * time.Minute)
	st := []fleet.Stats{w0.stop(t), w1.stop(t)}
	s := sum(t, st, nil)
	attempts := g.checkEndedOnce(s)

	all := allJobs(t, g.f0, 1)
	for id, j := range all {
		if j.Token != int64(j.Attempt)+1 {
			t.Errorf("job %s: fence token %d after %d attempts; want attempts + 1 (each claim and the end move it once)", id, j.Token, j.Attempt)
		}
	}
	per, lines := workLog(t, logPath)
	for id := range all {
		if per[id] == 0 {
			t.Errorf("job %s: no work line, though it ended SUCCESS", id)
		}
	}
	if lines-jobs > s.fenced {
		t.Errorf("%d work lines for %d jobs, but only %d leases lost: work finished twice without a lost lease", lines, jobs, s.fenced)
	}
	if attempts < s.won || attempts > s.won+s.unanswered {
		t.Errorf("%d attempts in the table, the workers counted %d claims won and %d unanswered: a landed claim was counted lost", attempts, s.won, s.unanswered)
	}
	// Each end that landed was counted once: as succeeded, or as an end
	// left unanswered (it landed, its worker cannot know).
	if s.succeeded > jobs || s.succeeded+s.endErrors < jobs {
		t.Errorf("the workers counted %d ends and %d left unanswered, want %d ends in all (an end that landed counted twice or not at all)", s.succeeded, s.endErrors, jobs)
	}
	// The protocol kept every lease it could: none was refused by the
	// token (taken from a holder still renewing it); the leases lost are
	// those whose holder gave them up, no renewal answered in time.
	if s.fenced != s.expired {
		t.Errorf("%d attempts lost their lease, only %d by expiry: %d were taken from a holder still renewing them", s.fenced, s.expired, s.fenced-s.expired)
	}
	checkShardHistory(t, g)
	if g.r.Count(kind) == 0 || (fault == "lost" && g.r.Retries(kind) == 0) {
		t.Fatalf("%d %s requests, %d sent again: the fault was not injected", g.r.Count(kind), kind, g.r.Retries(kind))
	}
	g.logShards()
	t.Logf("%s %s: %d requests of the kind, %d sent again; %d jobs in %d attempts, %d work lines; won %d, claims unanswered %d, ends unanswered %d, landed %d, leases lost %d (expired %d), rejoins %d; shards acquired %d+%d, lost %d+%d, wants %d+%d",
		fault, kind, g.r.Count(kind), g.r.Retries(kind), jobs, attempts, lines, s.won, s.unanswered, s.endErrors, s.landed, s.fenced, s.expired, s.rejoins,
		st[0].ShardsAcquired, st[1].ShardsAcquired, st[0].ShardsLost, st[1].ShardsLost, st[0].Wants, st[1].Wants)
}

// checkShardHistory reads each shard's history (its last entries) and
// checks one holder at a time: tokens never go back, each acquire's token
// is new, and a release is by the holder of the acquire just before it,
// at its token.
func checkShardHistory(t *testing.T, g *rig) {
	t.Helper()
	st, err := g.f0.ShardStates(g.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		var last fleet.Tenure
		for i, h := range s.History {
			switch {
			case i > 0 && h.Token < last.Token:
				t.Errorf("shard %d history %d: token %d after %d: went back", s.Shard, i, h.Token, last.Token)
			case i > 0 && h.Op == "acquire" && h.Token <= last.Token:
				t.Errorf("shard %d history %d: acquire at token %d, not above %d: two holders", s.Shard, i, h.Token, last.Token)
			case i > 0 && h.Op == "release" && (last.Op != "acquire" || last.Holder != h.Holder || last.Token != h.Token):
				t.Errorf("shard %d history %d: release by %s at %d after %s by %s at %d", s.Shard, i, h.Holder, h.Token, last.Op, last.Holder, last.Token)
			}
			last = h
		}
		if s.Token < last.Token {
			t.Errorf("shard %d: token %d below its history's %d", s.Shard, s.Token, last.Token)
		}
	}
}
