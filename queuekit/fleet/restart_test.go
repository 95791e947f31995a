package fleet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// A real restart of DynamoDB Local mid-run: a server of the test's own
// keeps its tables on disk (-dbPath in a temporary directory); once some
// jobs have ended its process is killed (SIGKILL: open connections reset,
// nothing flushed by the server) and started again 2 s later on the same
// port and the same -dbPath. While it is down and starting (several
// seconds, longer than the 3 s leases) every call fails, and calls in
// flight at the kill get no reply (a claim or an end may have landed
// unseen). The SDK client is set to ride out an outage of that length
// (100 attempts, backoffs up to 500 ms, no client-side retry quota). Read
// back raw afterwards: every job SUCCESS, ended exactly once, nothing
// dead-lettered, no worker died, and every re-claim follows a lease lost
// or a claim left unanswered, as in TestDynamoDBOutageMidRunKeepsTheInvariants.
func TestDynamoDBLocalRestartMidRunKeepsTheInvariants(t *testing.T) {
	const jobs, shards = 24, 2
	srv := ddbtest.StartPrivate(t, "", ddbtest.WithDBPath(t.TempDir()))
	cat0 := ddbtest.NewCatalog(t, catalog.WithEndpoint(srv.Endpoint))
	f0, err := fleet.New(cat0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := f0.Reset(ctx, shards); err != nil {
		t.Fatal(err)
	}
	base, err := catalog.New(ctx, catalog.WithEndpoint(srv.Endpoint), catalog.WithTable(f0.Table()),
		catalog.WithClientOptions(func(o *dynamodb.Options) {
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts, so.MaxBackoff = 100, 500*time.Millisecond
				so.RateLimiter = ratelimit.None
			})
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
	ended := func() int {
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
		return n
	}
	waitFor(t, "some jobs to end", time.Minute, func() bool { return ended() >= 4 })
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(2 * time.Second)
	srv.Restart(t)
	t.Logf("DynamoDB Local unreachable for %.1f s (killed, restarted on the same -dbPath)", time.Since(down).Seconds())
	waitFor(t, "every job to end", 3*time.Minute, func() bool { return ended() == jobs })
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
	if len(js) != jobs {
		t.Fatalf("%d jobs read back, want %d", len(js), jobs)
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
	t.Logf("%d jobs in %d attempts; %d leases lost (%d by expiry), %d claims unanswered", jobs, attempts, fenced, expired, unanswered)
}
