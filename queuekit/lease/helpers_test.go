package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// setup seeds a catalog table of the test's own with jobs and returns an
// executor on it; both tables are deleted when the test ends.
func setup(t testing.TB, jobs []queuekit.Job, opts ...catalog.Option) (*lease.Executor, *catalog.Catalog) {
	t.Helper()
	cat := ddbtest.Catalog(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if len(jobs) > 0 {
		if _, err := cat.Seed(ctx, jobs); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ex.DeleteTable(ctx); err != nil {
			t.Errorf("delete %s: %v", ex.Table(), err)
		}
	})
	return ex, cat
}

func sample(t *testing.T, date string) queuekit.Night {
	t.Helper()
	n, err := queuekit.SampleNight(date)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// partWays is the hand-built night of sim's TestThreePoliciesPartWays, as a
// catalog night (window 01:00-05:00, c = 2): R (p1, 30 min) requested at
// 01:00, then at 01:01 A (p5, 40 min), X (p3, exclusive, 10 min) and B (p1,
// 20 min). The simulator starts them R 0, A 1, X 41, B 51 under
// conservative, R 0, B 1, X 30, A 40 under easy.
func partWays(t *testing.T) queuekit.Night {
	t.Helper()
	const date = "2027-03-01"
	mk := func(seq int, window string, runtime, prio int, excl bool) queuekit.Job {
		id := fmt.Sprintf("JOB-20270301-%03d", seq)
		return queuekit.Job{BatchDate: date, WindowJobID: queuekit.SortKey(window, id), JobID: id, RequestedWindow: window,
			SubmittedAt: "2027-03-01T00:00:00Z", WorkloadClass: queuekit.WorkloadClasses[0], RuntimeMinutes: runtime,
			Priority: prio, RequiresExclusiveLock: excl, Status: "queued"}
	}
	n, err := queuekit.NewNight(date, queuekit.DefaultWindow, []queuekit.Job{
		mk(1, "01:00", 30, 1, false), // R
		mk(2, "01:01", 40, 5, false), // A
		mk(3, "01:01", 10, 3, true),  // X
		mk(4, "01:01", 20, 1, false), // B
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// executorVia opens an executor on cat0's table whose client reaches
// DynamoDB through endpoint (a Toxiproxy proxy, a private server) with the
// client options of the fault test (its retryer, its HTTP client).
func executorVia(t *testing.T, cat0 *catalog.Catalog, endpoint string, client func(*dynamodb.Options)) *lease.Executor {
	t.Helper()
	cat, err := catalog.New(context.Background(), catalog.WithEndpoint(endpoint), catalog.WithTable(cat0.Table()), catalog.WithClientOptions(client))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// routed sends the client's requests through the router r, with enough
// SDK attempts that no call runs out of them when 30% of replies are lost
// (0.3^12), and short backoffs, as a lease of seconds needs.
func routed(r *toxitest.Router) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.HTTPClient = r.HTTPClient()
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 12, 100*time.Millisecond })
	}
}
