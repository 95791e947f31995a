package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// rig is a two-tier fleet of the test's own: a fleet table on DynamoDB
// Local and a standard queue on ElasticMQ.
type rig struct {
	t      *testing.T
	ctx    context.Context
	f      *fleet.Fleet
	tier   *dispatch.Tier
	shards int
	lease  time.Duration
	// runs counts, per job, the works that finished with the lease held.
	sqs     *sqsqueue.Client
	mu      sync.Mutex
	runs    map[string][]int
	started map[string]time.Time // the last start of each job's work
}

const (
	testLease      = 2 * time.Second
	testShardLease = time.Second
)

// newRig opens the rig on the shared DynamoDB Local, or where opts say
// (catalog.WithEndpoint: a private server of the test's own).
func newRig(t *testing.T, shards int, opts ...catalog.Option) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cat := ddbtest.NewCatalog(t, opts...)
	f, err := fleet.New(cat, fleet.WithLease(testLease), fleet.WithShardLease(testShardLease), fleet.WithPoll(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = f.DeleteTable(c)
	})
	if err := f.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	c := sqstest.Client(t)
	q, err := dispatch.CreateQueue(ctx, c, sqstest.Name(t), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sqstest.Cleanup(t, c, q)
	tier, err := dispatch.New(f, c, q, dispatch.WithWait(time.Second), dispatch.WithVisibility(2*time.Second), dispatch.WithResend(3*time.Second), dispatch.WithPage(20))
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, ctx: ctx, f: f, tier: tier, sqs: c, shards: shards, lease: testLease, runs: map[string][]int{}, started: map[string]time.Time{}}
}

// submit submits n one-off jobs of user-000, due now, with maxRetry retries.
// The fault tests pass 0: their work never fails, and an attempt lost to a
// fault (a lease run out, a claim unanswered) is counted in lost_attempts,
// never as a retry, so the network must not dead-letter any of them.
func (r *rig) submit(n, maxRetry int) []fleet.Job {
	r.t.Helper()
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var jobs []fleet.Job
	for i := range n {
		jobs = append(jobs, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%03d", i), JobType: "report", ScheduledAt: now, MaxRetry: maxRetry})
	}
	if _, err := r.f.SubmitJobs(r.ctx, jobs); err != nil {
		r.t.Fatal(err)
	}
	got, err := r.f.ListAllJobs(r.ctx, "user-000")
	if err != nil {
		r.t.Fatal(err)
	}
	return got
}

// work is the executors' work: d of sleep, recording each finished run.
func (r *rig) work(d time.Duration) fleet.WorkFunc {
	return func(ctx context.Context, j fleet.Job) error {
		r.mu.Lock()
		r.started[j.JobID] = time.Now()
		r.mu.Unlock()
		if err := fleet.Sleep(d)(ctx, j); err != nil {
			return err
		}
		r.mu.Lock()
		r.runs[j.JobID] = append(r.runs[j.JobID], j.Attempt)
		r.mu.Unlock()
		return nil
	}
}

// fleetRun is dispatchers and executors running until stopped. A process
// that returns before it is stopped died: its error is kept in deaths
// (stopAll fails the test with them) and a replacement of the same name is
// started half a second later, so that the jobs still end and the run's
// invariants are still checked.
type fleetRun struct {
	mu     sync.Mutex
	disp   map[string]fleet.Stats
	execs  map[string]dispatch.ExecutorStats
	stop   map[string]context.CancelFunc
	deaths []error
	g      errgroup.Group
}

// supervise runs one process until ctx ends, replacing it each time it
// returns before (see fleetRun).
func (fr *fleetRun) supervise(ctx context.Context, name string, run func(ctx context.Context) error) {
	fr.g.Go(func() error {
		for {
			err := run(ctx)
			if ctx.Err() != nil {
				return err
			}
			fr.mu.Lock()
			fr.deaths = append(fr.deaths, fmt.Errorf("%s returned before it was stopped: %v", name, err))
			fr.mu.Unlock()
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
}

func (r *rig) start(dispatchers []string, executors []string, slots int, work fleet.WorkFunc) *fleetRun {
	same := func(string) *dispatch.Tier { return r.tier }
	return r.startOn(same, same, dispatchers, executors, slots, work)
}

// tierOn is the rig's tier (its queue) on another view of the fleet table:
// another client, clock or lease.
func (r *rig) tierOn(f *fleet.Fleet) *dispatch.Tier {
	r.t.Helper()
	t, err := dispatch.New(f, r.sqs, r.tier.Queue(), dispatch.WithWait(time.Second), dispatch.WithVisibility(2*time.Second), dispatch.WithResend(3*time.Second), dispatch.WithPage(20))
	if err != nil {
		r.t.Fatal(err)
	}
	return t
}

// startOn starts each dispatcher on dt(name) and each executor on et(name).
func (r *rig) startOn(dt, et func(name string) *dispatch.Tier, dispatchers []string, executors []string, slots int, work fleet.WorkFunc) *fleetRun {
	fr := &fleetRun{disp: map[string]fleet.Stats{}, execs: map[string]dispatch.ExecutorStats{}, stop: map[string]context.CancelFunc{}}
	for _, name := range dispatchers {
		ctx, cancel := context.WithCancel(r.ctx)
		fr.stop[name] = cancel
		fr.supervise(ctx, name, func(ctx context.Context) error {
			st, err := dt(name).Dispatch(ctx, dispatch.DispatcherConfig{Name: name, Shards: r.shards})
			fr.mu.Lock()
			fr.disp[name] = st
			fr.mu.Unlock()
			return err
		})
	}
	for _, name := range executors {
		ctx, cancel := context.WithCancel(r.ctx)
		fr.stop[name] = cancel
		fr.supervise(ctx, name, func(ctx context.Context) error {
			st, err := et(name).Execute(ctx, dispatch.ExecutorConfig{Name: name, Slots: slots, Work: work})
			fr.mu.Lock()
			fr.execs[name] = st
			fr.mu.Unlock()
			return err
		})
	}
	return fr
}

func (fr *fleetRun) stopAll(t *testing.T) {
	t.Helper()
	for _, c := range fr.stop {
		c()
	}
	if err := fr.g.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, err := range fr.deaths {
		t.Errorf("a process died (replaced to finish the run): %v", err)
	}
}

// waitDone waits until no job is left in the due index.
func (r *rig) waitDone(within time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := r.f.Unfinished(r.ctx, r.shards)
		if err != nil {
			r.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d jobs still unfinished after %s", n, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkEndedOnce reads every job back and checks that it ended SUCCESS
// exactly once, by its last claim: one end (ends 1, runs 1), and a fence
// token of attempt+1 (each claim moved it on once, the one end once more:
// an end refused by its token, or a second end, would leave another
// count). It returns the jobs by id.
func (r *rig) checkEndedOnce(n int) map[string]fleet.Job {
	r.t.Helper()
	jobs, err := r.f.ListAllJobs(r.ctx, "user-000")
	if err != nil {
		r.t.Fatal(err)
	}
	if len(jobs) != n {
		r.t.Fatalf("%d jobs read back, want %d", len(jobs), n)
	}
	byID := map[string]fleet.Job{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range jobs {
		byID[j.JobID] = j
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 || j.Runs != 1 {
			r.t.Errorf("%s: %s, ends %d, runs %d; want SUCCESS, 1, 1", j.JobID, j.Status, j.Ends, j.Runs)
		}
		if j.Token != int64(j.Attempt)+1 {
			r.t.Errorf("%s: fence token %d after %d attempts: want %d (one end, by the last claim's token)", j.JobID, j.Token, j.Attempt, j.Attempt+1)
		}
		runs := r.runs[j.JobID]
		if !slices.Contains(runs, j.Attempt) {
			r.t.Errorf("%s: works finished at attempts %v; want one at %d, the attempt that ended it", j.JobID, runs, j.Attempt)
		}
	}
	return byID
}

// Every job of a batch ends exactly once on 2 dispatchers and 4 executors
// while every job's message is also sent twice more by the test (SQS
// standard's duplicates, and stale ones): the duplicates are refused
// claims, dropped, never second holders.
func TestEveryJobEndsOnceWithDuplicateMessages(t *testing.T) {
	t.Parallel()
	r := newRig(t, 8)
	const n = 120
	jobs := r.submit(n, 3)
	// Two copies of every job's message before the dispatchers send theirs.
	if err := r.tier.Send(r.ctx, append(jobs, jobs...)); err != nil {
		t.Fatal(err)
	}
	fr := r.start([]string{"d1", "d2"}, []string{"e1", "e2", "e3", "e4"}, 4, r.work(5*time.Millisecond))
	r.waitDone(90 * time.Second)
	// Stale messages of ended jobs: refused too. The executors stop once
	// the queue holds nothing (every copy received and deleted), not after
	// a fixed wait: they receive only for free slots, and a busy machine
	// drains the copies slowly.
	if err := r.tier.Send(r.ctx, jobs[:20]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		d, err := r.sqs.Depth(r.ctx, r.tier.Queue())
		if err != nil {
			t.Fatal(err)
		}
		if d.Visible+d.InFlight == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue still holds %d messages (%d in flight) a minute after the jobs ended", d.Visible, d.InFlight)
		}
	}
	fr.stopAll(t)
	byID := r.checkEndedOnce(n)
	var won, refused, succeeded, dispatched, fenced, expired int
	for _, st := range fr.execs {
		won, refused, succeeded = won+st.Won, refused+st.Refused, succeeded+st.Succeeded
		fenced, expired = fenced+st.Fenced, expired+st.Expired
		if st.ClaimErrors != 0 || st.EndErrors != 0 {
			t.Errorf("executor %s: claim errors %d, end errors %d; want none on a healthy run", st.Name, st.ClaimErrors, st.EndErrors)
		}
	}
	for _, st := range fr.disp {
		dispatched += st.Dispatched
	}
	// A duplicate never wins: every claim won beyond one a job is a
	// takeover of a lease that ran out (a machine that stalls an executor
	// for a lease of 2 s makes some: CI once made 91), and each took over
	// counts a lost attempt on its job; each attempt taken over was fenced.
	lost, again := 0, 0
	for _, j := range byID {
		lost, again = lost+j.LostAttempts, again+j.Attempt-1
	}
	if won != n+again || lost != again || succeeded != n || fenced != won-succeeded {
		t.Errorf("claims won %d, successes %d, fenced %d; jobs claimed again %d times, lost attempts %d: want %d + re-claims won, every re-claim a lost attempt (a takeover, never a duplicate), one success a job, the rest fenced",
			won, succeeded, fenced, again, lost, n)
	}
	if again > 0 {
		t.Logf("%d leases ran out on this machine (%d of the fenced attempts expired on their holders' clocks) and were taken over", again, expired)
	}
	// At least the test's 2n+20 copies were refused; the dispatchers' own
	// messages of jobs already claimed through a copy were refused too.
	if refused < 2*n+20-n {
		t.Errorf("refused claims %d: want at least %d of the %d extra messages", refused, n+20, 2*n+20)
	}
	if dispatched == 0 {
		t.Error("the dispatchers sent nothing")
	}
	t.Logf("won %d, refused %d, dispatched %d", won, refused, dispatched)
}

// An executor that died mid-job (it claimed the job, deleted its message,
// and stopped: no heartbeat, no end) leaves the job held; its lease runs
// out, its shard's dispatcher watches it unchanged for a lease and sends it
// again, and a live executor takes it over with the takeover condition: it
// ends once, at attempt 2 with one lost attempt counted (and no retry: the
// job did not fail), not before the dead
// holder's lease, and within the bound 2·Lease plus a poll (with slack for
// this shared machine). The dead holder's late end is refused by the token.
func TestADeadExecutorsJobIsDispatchedAgainAfterItsLeaseAndEndsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4)
	const n = 40
	jobs := r.submit(n, 3)
	dead, res, _, err := r.f.Claim(r.ctx, jobs[0], "dead-executor")
	if err != nil || res != fleet.Claimed {
		t.Fatalf("the dead executor's claim: %v, %v", res, err)
	}
	claimed := time.Now()
	fr := r.start([]string{"d1", "d2"}, []string{"e1", "e2", "e3", "e4"}, 4, r.work(5*time.Millisecond))
	r.waitDone(90 * time.Second)
	fr.stopAll(t)
	byID := r.checkEndedOnce(n)
	j := byID[jobs[0].JobID]
	r.mu.Lock()
	took := r.started[j.JobID].Sub(claimed) // when the takeover's work started
	r.mu.Unlock()
	if j.Attempt != 2 || j.LostAttempts != 1 || j.CurrentRetry != 0 {
		t.Errorf("%s: attempt %d, lost_attempts %d, current_retry %d; want 2, 1 and 0 (the dead attempt lost, not failed)", j.JobID, j.Attempt, j.LostAttempts, j.CurrentRetry)
	}
	if took < r.lease {
		t.Errorf("%s taken over %s after the dead claim: before its lease of %s ran out", j.JobID, took, r.lease)
	}
	if bound := 2*r.lease + 10*time.Second; took > bound {
		t.Errorf("%s taken over %s after the dead claim: want within 2·lease plus a poll (%s, with slack)", j.JobID, took, bound)
	}
	t.Logf("%s taken over %s after the dead claim (lease %s)", j.JobID, took.Round(time.Millisecond), r.lease)
	if _, err := dead.End(r.ctx, nil); !errors.Is(err, fence.ErrFenced) {
		t.Errorf("the dead executor's late end: %v; want refused by the fence token", err)
	}
	again, err := r.f.ViewJob(r.ctx, "user-000", jobs[0].JobID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Ends != 1 || again.Token != j.Token {
		t.Errorf("after the late end: ends %d, token %d; want 1 and %d (nothing written)", again.Ends, again.Token, j.Token)
	}
	var fatal int
	for _, st := range fr.execs {
		fatal += st.Fatal
	}
	if fatal != 0 {
		t.Errorf("%d jobs ended FATAL_FAILURE: want none (retries were left)", fatal)
	}
}

// A dispatcher that stops: the other takes all its shards within the shard
// lease bound (ShardLease + ShardLease/4 plus a look, with slack), and the
// jobs submitted after the stop, in every shard, all end once.
func TestAStoppedDispatchersShardsAreTakenOverAndItsJobsEnd(t *testing.T) {
	r := newRig(t, 8)
	fr := r.start([]string{"d1", "d2"}, []string{"e1", "e2", "e3", "e4"}, 4, r.work(5*time.Millisecond))
	owners := func() map[string]int {
		states, err := r.f.ShardStates(r.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, s := range states {
			got[s.Holder]++
		}
		return got
	}
	deadline := time.Now().Add(30 * time.Second)
	for o := owners(); o["d1"] == 0 || o["d2"] == 0 || o["d1"]+o["d2"] != r.shards; o = owners() {
		if time.Now().After(deadline) {
			t.Fatalf("the two dispatchers did not share the %d shards: %v", r.shards, o)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fr.stop["d1"]()
	stopped := time.Now()
	for o := owners(); o["d2"] != r.shards; o = owners() {
		if bound := testShardLease + testShardLease/4 + 10*time.Second; time.Since(stopped) > bound {
			t.Fatalf("d2 owns %v of %d shards %s after d1 stopped: want all within %s", o, r.shards, time.Since(stopped), bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("d2 owned all %d shards %s after d1 stopped", r.shards, time.Since(stopped).Round(time.Millisecond))
	const n = 60
	r.submit(n, 3)
	r.waitDone(90 * time.Second)
	fr.stopAll(t)
	r.checkEndedOnce(n)
	if st := fr.disp["d2"]; st.Dispatched < n {
		t.Errorf("d2 dispatched %d jobs: want all %d (the only dispatcher left)", st.Dispatched, n)
	}
}
