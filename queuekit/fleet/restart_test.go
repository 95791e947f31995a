package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
	t.Parallel()
	srv := ddbtest.StartPrivate(t, "", ddbtest.WithDBPath(t.TempDir()))
	cat0 := ddbtest.NewCatalog(t, catalog.WithEndpoint(srv.Endpoint))
	f0, err := fleet.New(cat0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	lease := 3 * time.Second
	g := newRig(t, ctx, f0, srv.Endpoint, 2, 24, 0, lease, func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts, so.MaxBackoff = 100, 500*time.Millisecond
			so.RateLimiter = ratelimit.None
		})
	})
	wait := g.joinWorkers(2, 3, fleet.Sleep(lease/2))
	waitFor(t, "some jobs to end", time.Minute, func() bool { return g.succeeded() >= 4 })
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(2 * time.Second)
	srv.Restart(t)
	t.Logf("DynamoDB Local unreachable for %.1f s (killed, restarted on the same -dbPath)", time.Since(down).Seconds())
	g.waitAllEnded(3 * time.Minute)
	w := wait()
	s := sum(t, w.stats, w.errs)
	attempts := g.checkEndedOnce(s)
	t.Logf("%d jobs in %d attempts; %d leases lost (%d by expiry), %d claims unanswered", g.jobs, attempts, s.fenced, s.expired, s.unanswered)
}
