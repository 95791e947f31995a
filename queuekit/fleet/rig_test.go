package fleet_test

import (
	"context"
	"fmt"
	"github.com/nightqueue/workshop/queuekit"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
)

// The network-fault and restart tests share this setup: a fleet table of
// the test's own with jobs submitted, and the fleet as the workers see it,
// through a client of its own (through a Toxiproxy router, or with a
// retryer of the test's).

// rig is one such fleet: f0 reads the table directly (the test's view),
// f is the workers' fleet.
type rig struct {
	t      *testing.T
	ctx    context.Context
	f0, f  *fleet.Fleet
	r      *toxitest.Router // nil when the workers' client is not routed
	lease  time.Duration
	jobs   int
	shards int
}

// submitJobs submits jobs one-off jobs of user-000 (job-00, job-01, ...),
// due now, each with maxRetry retries. The fault tests pass 0: their work
// never fails, and an attempt a fault loses is a lost attempt, not a retry
// (fleet.WithMaxLost), so a healthy job dead-lettered fails them.
func submitJobs(t *testing.T, ctx context.Context, f *fleet.Fleet, jobs, maxRetry int) {
	t.Helper()
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var batch []fleet.Job
	for i := range jobs {
		batch = append(batch, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%02d", i), JobType: "report", ScheduledAt: now, MaxRetry: maxRetry})
	}
	if _, err := f.SubmitJobs(ctx, batch); err != nil {
		t.Fatal(err)
	}
}

// newRig resets f0's table to shards shards, submits jobs, and opens the
// workers' fleet on the same table with the given lease (jobs, shards and
// members) and client options.
func newRig(t *testing.T, ctx context.Context, f0 *fleet.Fleet, endpoint string, shards, jobs, maxRetry int, lease time.Duration, client func(*dynamodb.Options)) *rig {
	t.Helper()
	if err := f0.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	base, err := catalog.New(ctx, catalog.WithEndpoint(endpoint), catalog.WithTable(f0.Table()), catalog.WithClientOptions(client))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.New(base, fleet.WithLease(lease), fleet.WithShardLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	submitJobs(t, ctx, f0, jobs, maxRetry)
	return &rig{t: t, ctx: ctx, f0: f0, f: f, lease: lease, jobs: jobs, shards: shards}
}

// shortRetries is the SDK retryer of the routed tests: enough attempts that
// no call runs out of them when 30% of replies are lost (0.3^12), and short
// backoffs, as a lease of seconds needs.
func shortRetries(so *retry.StandardOptions) {
	so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond
}

// newRoutedRig is newRig with the workers' client sent through a
// toxitest.Router in front of the tests' DynamoDB Local, whose kinds of
// request are told apart by classify.
func newRoutedRig(t *testing.T, ctx context.Context, shards, jobs, maxRetry int, lease time.Duration, classify toxitest.Classify, kinds ...string) *rig {
	t.Helper()
	f0 := newFleet(t)
	r := toxitest.NewRouter(t, f0.Endpoint(), classify, kinds...)
	g := newRig(t, ctx, f0, r.Default.URL, shards, jobs, maxRetry, lease, func(o *dynamodb.Options) {
		o.HTTPClient = r.HTTPClient()
		o.Retryer = retry.NewStandard(shortRetries)
	})
	g.r = r
	return g
}

// joined is what in-process workers returned.
type joined struct {
	stats []fleet.Stats
	errs  []error
}

// joinWorkers starts n in-process workers w0, w1, ... (slots each, the
// work work) and returns a function that stops them and waits for them.
func (g *rig) joinWorkers(n, slots int, work fleet.WorkFunc) func() joined {
	wctx, stop := context.WithCancel(g.ctx)
	var wg sync.WaitGroup
	out := joined{stats: make([]fleet.Stats, n), errs: make([]error, n)}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.stats[i], out.errs[i] = g.f.Join(wctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%d", i), Slots: slots, Shards: g.shards, Work: work})
		}()
	}
	return func() joined {
		stop()
		wg.Wait()
		return out
	}
}

// succeeded counts the jobs read back SUCCESS.
func (g *rig) succeeded() int {
	g.t.Helper()
	js, err := g.f0.ListAllJobs(g.ctx, "user-000")
	if err != nil {
		g.t.Fatal(err)
	}
	n := 0
	for _, j := range js {
		if j.Status == queuekit.StatusSuccess {
			n++
		}
	}
	return n
}

// waitAllEnded waits until every job reads back SUCCESS.
func (g *rig) waitAllEnded(timeout time.Duration) {
	g.t.Helper()
	waitFor(g.t, "every job to end", timeout, func() bool { return g.succeeded() == g.jobs })
}

// totals are the workers' counters added up.
type totals struct {
	won, fenced, expired, unanswered, endErrors, landed, rejoins, succeeded int
}

func sum(t *testing.T, stats []fleet.Stats, errs []error) totals {
	t.Helper()
	var s totals
	for i, st := range stats {
		if errs != nil && errs[i] != nil {
			t.Errorf("worker %d died: %v", i, errs[i])
		}
		s.won += st.Won
		s.fenced += st.Fenced
		s.expired += st.Expired
		s.unanswered += st.ClaimErrors
		s.endErrors += st.EndErrors
		s.landed += st.Landed
		s.rejoins += st.Rejoins
		s.succeeded += st.Succeeded
		if st.LastLoss != "" {
			t.Logf("%s: %d fenced (%d expired), last loss: %s", st.Name, st.Fenced, st.Expired, st.LastLoss)
		}
	}
	return s
}

// checkEndedOnce reads the jobs back raw and checks that every one ended
// SUCCESS exactly once, that nothing was dead-lettered, and that every
// re-claim follows a lease lost, or a claim or an end left unanswered (a
// claim may have landed: its lease then ran out unheld; an end may not
// have: the job comes back when its lease ends). It returns the attempts.
func (g *rig) checkEndedOnce(s totals) int {
	g.t.Helper()
	js, err := g.f0.ListAllJobs(g.ctx, "user-000")
	if err != nil {
		g.t.Fatal(err)
	}
	if len(js) != g.jobs {
		g.t.Fatalf("%d jobs read back, want %d", len(js), g.jobs)
	}
	attempts := 0
	for _, j := range js {
		attempts += j.Attempt
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 {
			g.t.Errorf("job %s: %s, ends %d; want SUCCESS, ended exactly once", j.JobID, j.Status, j.Ends)
		}
	}
	if dl, err := g.f0.DeadLetters(g.ctx); err != nil || len(dl) != 0 {
		g.t.Errorf("dead letters %v (%v), want none", dl, err)
	}
	if attempts-g.jobs > s.fenced+s.unanswered+s.endErrors {
		g.t.Errorf("%d re-claims but %d leases lost, %d claims and %d ends unanswered: a lease was taken that its holder kept",
			attempts-g.jobs, s.fenced, s.unanswered, s.endErrors)
	}
	return attempts
}

// logShards logs the shards still held after the workers left (a release
// slowed or reset past the workers' exit: its lease ends on its own).
func (g *rig) logShards() {
	g.t.Helper()
	st, err := g.f0.ShardStates(g.ctx)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, s := range st {
		if s.Holder != "" {
			g.t.Logf("shard %d still names %s after the workers left (a release slowed or reset: its lease ends on its own)", s.Shard, s.Holder)
		}
	}
}

// stopAndCheck stops the routed rig's in-process workers and checks what
// every fault test of the rig checks (checkEndedOnce); then, a lease later
// (a release slowed past the workers' exit lands or its lease ends), it
// logs the shards still held and the run's figures.
func (g *rig) stopAndCheck(wait func() joined) {
	g.t.Helper()
	w := wait()
	s := sum(g.t, w.stats, w.errs)
	attempts := g.checkEndedOnce(s)
	time.Sleep(g.lease)
	g.logShards()
	g.t.Logf("%d requests, %d SDK retries; %d jobs in %d attempts; %d leases lost (%d by expiry), %d claims unanswered",
		g.r.Count(""), g.r.Retries(""), g.jobs, attempts, s.fenced, s.expired, s.unanswered)
}
