package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
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
	for _, kind := range fleetKinds {
		t.Run(kind, func(t *testing.T) {
			const jobs, shards = 24, 2
			f0 := newFleet(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := f0.Reset(ctx, shards); err != nil {
				t.Fatal(err)
			}
			r := toxitest.NewRouter(t, f0.Catalog().Endpoint(), fleetKind, fleetKinds...)
			base, err := catalog.New(ctx, catalog.WithEndpoint(r.Default.URL), catalog.WithTable(f0.Table()),
				catalog.WithClientOptions(func(o *dynamodb.Options) {
					o.HTTPClient = r.HTTPClient()
					o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond })
				}))
			if err != nil {
				t.Fatal(err)
			}
			lease := 3 * time.Second
			f, err := fleet.New(base, fleet.WithLease(lease), fleet.WithShardLease(lease))
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC().Format(fleet.TimeLayout)
			var batch []fleet.Job
			for i := range jobs {
				batch = append(batch, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%02d", i), JobType: "report", ScheduledAt: now, MaxRetry: 3})
			}
			if _, err := f0.SubmitJobs(ctx, batch); err != nil {
				t.Fatal(err)
			}
			px := r.Proxy(t, kind)
			all := px.LoseReplies(t, 1, 250*time.Millisecond)
			r.AfterRetries(kind, 2, func() {
				all()
				px.LoseReplies(t, 0.3, 250*time.Millisecond)
			})
			wctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			stats := make([]fleet.Stats, 2)
			errs := make([]error, 2)
			for i := range stats {
				wg.Add(1)
				go func() {
					defer wg.Done()
					stats[i], errs[i] = f.Join(wctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%d", i), Slots: 3, Shards: shards,
						Work: fleet.Sleep(lease / 2)}) // two heartbeats each
				}()
			}
			waitFor(t, "every job to end", 2*time.Minute, func() bool {
				js, err := f0.ListAllJobs(ctx, "user-000")
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range js {
					if j.Status != queuekit.StatusSuccess {
						return false
					}
				}
				return len(js) == jobs
			})
			stop()
			wg.Wait()
			won, fenced, expired, landed := 0, 0, 0, 0
			for i, st := range stats {
				if errs[i] != nil {
					t.Errorf("worker w%d died: %v", i, errs[i])
				}
				won += st.Won
				fenced += st.Fenced
				expired += st.Expired
				landed += st.Landed
				if st.LastLoss != "" {
					t.Logf("w%d: %d fenced (%d expired), last loss: %s", i, st.Fenced, st.Expired, st.LastLoss)
				}
			}
			js, err := f0.ListAllJobs(ctx, "user-000")
			if err != nil {
				t.Fatal(err)
			}
			attempts := 0
			for _, j := range js {
				attempts += j.Attempt
				if j.Status != queuekit.StatusSuccess || j.Ends != 1 {
					t.Errorf("job %s: %s, ends %d; want SUCCESS, ended exactly once", j.JobID, j.Status, j.Ends)
				}
			}
			// Every claim that landed was counted won by its worker (a retried
			// claim refused by its own effect is recognised by its nonce): the
			// attempts in the table are the claims the workers won.
			if attempts != won {
				t.Errorf("%d attempts in the table, the workers counted %d claims won: landed claims were counted lost", attempts, won)
			}
			// No lease was refused by the token: no end that landed was taken for
			// a fence, no lease taken from a holder still renewing it. Leases
			// whose renewals could not get through in time (the holder gave them
			// up: DynamoDB Local behind a faulty proxy on a loaded machine) are
			// the only losses, and every re-claim follows one.
			if fenced != expired {
				t.Errorf("%d attempts lost their lease, only %d by expiry: %d refused by the token", fenced, expired, fenced-expired)
			}
			if attempts-jobs > expired {
				t.Errorf("%d re-claims but %d expired leases: a healthy job was taken over", attempts-jobs, expired)
			}
			if dl, err := f0.DeadLetters(ctx); err != nil || len(dl) != 0 {
				t.Errorf("dead letters %v (%v), want none", dl, err)
			}
			st, err := f0.ShardStates(ctx)
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
				kind, r.Count(kind), r.Retries(kind), landed, jobs, attempts, expired)
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
	const jobs, shards = 24, 2
	f0 := newFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := f0.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	r := toxitest.NewRouter(t, f0.Catalog().Endpoint(), func(string, []byte) string { return "" })
	base, err := catalog.New(ctx, catalog.WithEndpoint(r.Default.URL), catalog.WithTable(f0.Table()),
		catalog.WithClientOptions(func(o *dynamodb.Options) {
			o.HTTPClient = r.HTTPClient()
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond })
		}))
	if err != nil {
		t.Fatal(err)
	}
	lease := 3 * time.Second
	f, err := fleet.New(base, fleet.WithLease(lease), fleet.WithShardLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var batch []fleet.Job
	for i := range jobs {
		batch = append(batch, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%02d", i), JobType: "report", ScheduledAt: now, MaxRetry: 20})
	}
	if _, err := f0.SubmitJobs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	r.Default.Slow(t, 0.05, 4*time.Second, 0)
	r.Default.ResetPeer(t, 0.05, 0)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stats := make([]fleet.Stats, 2)
	errs := make([]error, 2)
	for i := range stats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = f.Join(wctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%d", i), Slots: 3, Shards: shards, Work: fleet.Sleep(lease / 2)})
		}()
	}
	waitFor(t, "every job to end", 3*time.Minute, func() bool {
		js, err := f0.ListAllJobs(ctx, "user-000")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.Status != queuekit.StatusSuccess {
				return false
			}
		}
		return len(js) == jobs
	})
	stop()
	wg.Wait()
	fenced, expired, unanswered := 0, 0, 0
	for i, st := range stats {
		if errs[i] != nil {
			t.Errorf("worker w%d died: %v", i, errs[i])
		}
		fenced += st.Fenced
		expired += st.Expired
		unanswered += st.ClaimErrors
	}
	js, err := f0.ListAllJobs(ctx, "user-000")
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	for _, j := range js {
		attempts += j.Attempt
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 {
			t.Errorf("job %s: %s, ends %d; want SUCCESS, ended exactly once", j.JobID, j.Status, j.Ends)
		}
	}
	if dl, err := f0.DeadLetters(ctx); err != nil || len(dl) != 0 {
		t.Errorf("dead letters %v (%v), want none", dl, err)
	}
	// Every re-claim follows a lease lost, or a claim that got no answer
	// (it may have landed: its lease then ran out unheld).
	if attempts-jobs > fenced+unanswered {
		t.Errorf("%d re-claims but %d leases lost and %d claims unanswered: a lease was taken that its holder kept", attempts-jobs, fenced, unanswered)
	}
	time.Sleep(lease) // a release slowed past the workers' exit lands or its lease ends
	st, err := f0.ShardStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Holder != "" {
			t.Logf("shard %d still names %s after the workers left (a release slowed or reset: its lease ends on its own)", s.Shard, s.Holder)
		}
	}
	t.Logf("%d requests, %d SDK retries; %d jobs in %d attempts; %d leases lost (%d by expiry), %d claims unanswered", r.Count(""), r.Retries(""), jobs, attempts, fenced, expired, unanswered)
}

// DynamoDB unreachable for 4 s mid-run (the proxy disabled, as during a
// restart of DynamoDB Local; the real restart, its tables kept on disk, is
// TestDynamoDBLocalRestartMidRunKeepsTheInvariants), longer than the 3 s
// leases. Leases that slow calls cost are lost and their jobs
// claimed again; read back raw, every job ends SUCCESS exactly once, nothing
// is dead-lettered, no worker dies, and every shard is free after the
// workers left.
func TestDynamoDBOutageMidRunKeepsTheInvariants(t *testing.T) {
	const jobs, shards = 24, 2
	f0 := newFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := f0.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	r := toxitest.NewRouter(t, f0.Catalog().Endpoint(), func(string, []byte) string { return "" })
	base, err := catalog.New(ctx, catalog.WithEndpoint(r.Default.URL), catalog.WithTable(f0.Table()),
		catalog.WithClientOptions(func(o *dynamodb.Options) {
			o.HTTPClient = r.HTTPClient()
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond })
		}))
	if err != nil {
		t.Fatal(err)
	}
	lease := 3 * time.Second
	f, err := fleet.New(base, fleet.WithLease(lease), fleet.WithShardLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var batch []fleet.Job
	for i := range jobs {
		batch = append(batch, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%02d", i), JobType: "report", ScheduledAt: now, MaxRetry: 20})
	}
	if _, err := f0.SubmitJobs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stats := make([]fleet.Stats, 2)
	errs := make([]error, 2)
	for i := range stats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = f.Join(wctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%d", i), Slots: 3, Shards: shards, Work: fleet.Sleep(lease / 2)})
		}()
	}
	waitFor(t, "some jobs to end", time.Minute, func() bool {
		js, err := f0.ListAllJobs(ctx, "user-000")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range js {
			if j.Status == queuekit.StatusSuccess {
				n++
			}
		}
		return n >= 4
	})
	r.Default.Cut(t)
	time.Sleep(4 * time.Second)
	r.Default.Restore(t)
	waitFor(t, "every job to end", 3*time.Minute, func() bool {
		js, err := f0.ListAllJobs(ctx, "user-000")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.Status != queuekit.StatusSuccess {
				return false
			}
		}
		return len(js) == jobs
	})
	stop()
	wg.Wait()
	fenced, expired, unanswered := 0, 0, 0
	for i, st := range stats {
		if errs[i] != nil {
			t.Errorf("worker w%d died: %v", i, errs[i])
		}
		fenced += st.Fenced
		expired += st.Expired
		unanswered += st.ClaimErrors
	}
	js, err := f0.ListAllJobs(ctx, "user-000")
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	for _, j := range js {
		attempts += j.Attempt
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 {
			t.Errorf("job %s: %s, ends %d; want SUCCESS, ended exactly once", j.JobID, j.Status, j.Ends)
		}
	}
	if dl, err := f0.DeadLetters(ctx); err != nil || len(dl) != 0 {
		t.Errorf("dead letters %v (%v), want none", dl, err)
	}
	// Every re-claim follows a lease lost, or a claim that got no answer
	// (it may have landed: its lease then ran out unheld).
	if attempts-jobs > fenced+unanswered {
		t.Errorf("%d re-claims but %d leases lost and %d claims unanswered: a lease was taken that its holder kept", attempts-jobs, fenced, unanswered)
	}
	time.Sleep(lease) // a release slowed past the workers' exit lands or its lease ends
	st, err := f0.ShardStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Holder != "" {
			t.Logf("shard %d still names %s after the workers left (a release slowed or reset: its lease ends on its own)", s.Shard, s.Holder)
		}
	}
	t.Logf("%d requests, %d SDK retries; %d jobs in %d attempts; %d leases lost (%d by expiry), %d claims unanswered", r.Count(""), r.Retries(""), jobs, attempts, fenced, expired, unanswered)
}

// A slow rejoin (finding 5): every membership write (join, renewal, leave)
// is held 4 s, longer than the 3 s membership lease, so memberships are lost
// and taken again slowly, while every other call is fast. No lock is held
// across those calls, so heartbeats, polls and shard renewals do not wait
// behind them: no job lease is lost, every job succeeds on its first
// attempt, ended once.
func TestSlowRejoinLosesNoJobLease(t *testing.T) {
	const jobs, shards = 24, 2
	f0 := newFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := f0.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	r := toxitest.NewRouter(t, f0.Catalog().Endpoint(), fleetKind, fleetKinds...)
	base, err := catalog.New(ctx, catalog.WithEndpoint(r.Default.URL), catalog.WithTable(f0.Table()),
		catalog.WithClientOptions(func(o *dynamodb.Options) {
			o.HTTPClient = r.HTTPClient()
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond })
		}))
	if err != nil {
		t.Fatal(err)
	}
	lease := 3 * time.Second
	f, err := fleet.New(base, fleet.WithLease(lease), fleet.WithShardLease(lease))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var batch []fleet.Job
	for i := range jobs {
		batch = append(batch, fleet.Job{UserID: "user-000", JobID: fmt.Sprintf("job-%02d", i), JobType: "report", ScheduledAt: now, MaxRetry: 3})
	}
	if _, err := f0.SubmitJobs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stats := make([]fleet.Stats, 2)
	errs := make([]error, 2)
	for i := range stats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = f.Join(wctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%d", i), Slots: 3, Shards: shards, Work: fleet.Sleep(lease)})
		}()
	}
	time.Sleep(200 * time.Millisecond) // the joins went through fast; from now on membership writes are slow
	r.Proxy(t, "member").Slow(t, 1, 4*time.Second, 0)
	waitFor(t, "every job to end", 3*time.Minute, func() bool {
		js, err := f0.ListAllJobs(ctx, "user-000")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.Status != queuekit.StatusSuccess {
				return false
			}
		}
		return len(js) == jobs
	})
	stop()
	wg.Wait()
	fenced, rejoins := 0, 0
	for i, st := range stats {
		if errs[i] != nil {
			t.Errorf("worker w%d died: %v", i, errs[i])
		}
		fenced += st.Fenced
		rejoins += st.Rejoins
		if st.LastLoss != "" {
			t.Logf("w%d last loss: %s", i, st.LastLoss)
		}
	}
	js, err := f0.ListAllJobs(ctx, "user-000")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 || j.Attempt != 1 {
			t.Errorf("job %s: %s, ends %d, attempt %d; want SUCCESS on its first attempt, ended once", j.JobID, j.Status, j.Ends, j.Attempt)
		}
	}
	if fenced != 0 {
		t.Errorf("%d job leases lost while membership writes were slow", fenced)
	}
	if rejoins == 0 {
		t.Errorf("no membership was lost and taken again: the slow rejoin was not exercised (%d member requests)", r.Count("member"))
	}
	t.Logf("%d member requests held 4 s, %d rejoins; %d jobs, 0 job leases lost", r.Count("member"), rejoins, jobs)
}
