package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// A real restart of DynamoDB Local mid-run: a server of the test's own
// keeps its tables on disk (-dbPath in a temporary directory); once jobs
// are in flight its process is killed (SIGKILL: open connections reset,
// nothing flushed by the server) and started again 2 s later on the same
// port and the same -dbPath. While it is down and starting (several
// seconds: longer than the 2 s lease, shorter than lease.StaleAfter, past
// which workers rightly take the coordinator for dead) every call fails, so holders
// lose their leases, and calls in flight at the kill get no reply, so a
// write may have landed without its holder knowing. The SDK client is set
// to ride out an outage of that length (100 attempts, backoffs up to
// 500 ms, no client-side retry quota). Run's steps are spelled out, with
// two worker processes' worth of slots (Join twice), so that each worker's
// error and counters can be checked. A restart slower than StaleAfter (a
// JVM starting on a loaded machine: 10-17 s were seen) makes workers leave
// by design; a replacement then joins for each, and the night must still
// end with every invariant (run once with a 12 s sleep here: 1 of 2 workers
// left, the replacement finished the night). Afterwards: unless the outage
// was that slow no worker died, Verify
// holds (every job ended exactly once, at most 1 + max_retry attempts, the
// pool clean), every job SUCCESS, the table read back raw keeps the chaos
// suite's invariants (checkNight), and the WORKER# counters equal what the
// processes counted (nothing counted twice by a retried flush).
func TestDynamoDBLocalRestartMidRunKeepsTheInvariants(t *testing.T) {
	t.Parallel()
	srv := ddbtest.StartPrivate(t, "", ddbtest.WithDBPath(t.TempDir()))
	n := sample(t, "2026-05-13")
	ex0, cat0 := setup(t, n.Jobs, catalog.WithEndpoint(srv.Endpoint))
	ex := executorVia(t, cat0, srv.Endpoint, func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts, so.MaxBackoff = 100, 500*time.Millisecond
			so.RateLimiter = ratelimit.None
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Minute: 50 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: 6}
	runID, err := ex.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	type joined struct {
		st  lease.WorkerStats
		err error
	}
	workers := []lease.WorkerConfig{{Slots: 2, Name: "w1"}, {Slots: 1, Name: "w2"}}
	wch := make(chan joined, len(workers))
	for _, wc := range workers {
		go func() {
			st, err := ex.Join(ctx, n.BatchDate, wc)
			wch <- joined{st, err}
		}()
	}
	done := make(chan error, 1)
	go func() {
		if err := ex.Start(ctx, n.BatchDate, runID); err != nil {
			done <- err
			return
		}
		done <- ex.WaitDone(ctx, n.BatchDate, runID, nil)
	}()
	// Kill once the night runs with jobs in flight.
	waitProcessing(t, ctx, cat0, n)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(2 * time.Second)
	srv.Restart(t)
	outage := time.Since(down)
	t.Logf("DynamoDB Local unreachable for %.1f s (killed, restarted on the same -dbPath)", outage.Seconds())
	// A restart slower than StaleAfter (a JVM starting on a loaded machine)
	// makes the workers leave by design: the coordinator's heartbeat was
	// silent too long. Then the night is finished by the next workers, as
	// the lease rules promise: a replacement joins for each one that left,
	// and the invariants below must hold all the same. The margin covers
	// the heartbeat the workers last saw before the kill (1 s old at most)
	// and their polls around the outage.
	slow := outage >= lease.StaleAfter-3*time.Second
	var won, lost, dropped, fenced, replaced int
	for pending := len(workers); pending > 0; pending-- {
		var j joined
		select {
		case j = <-wch:
		case err := <-done:
			if err != nil {
				t.Fatalf("run across the restart: %v", err)
			}
			done <- nil
			j = <-wch
		}
		if j.err != nil {
			if !slow {
				t.Errorf("worker %s died: %v (DynamoDB Local was unreachable for %.1f s; lease.StaleAfter is %s)", j.st.Name, j.err, outage.Seconds(), lease.StaleAfter)
			} else {
				t.Logf("worker %s left after an outage of %.1f s (StaleAfter %s): %v; a replacement joins", j.st.Name, outage.Seconds(), lease.StaleAfter, j.err)
				replaced++
				pending++
				name := fmt.Sprintf("r%d", replaced)
				go func() {
					st, err := ex.Join(ctx, n.BatchDate, lease.WorkerConfig{Slots: 2, Name: name, Wait: time.Minute})
					wch <- joined{st, err}
				}()
			}
		}
		won, lost, dropped, fenced = won+j.st.Won, lost+j.st.Lost, dropped+j.st.Dropped, fenced+j.st.Fenced
	}
	if err := <-done; err != nil {
		t.Fatalf("run across the restart: %v", err)
	}
	rep, err := ex0.Report(context.Background(), n, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(n); err != nil {
		t.Fatalf("invariants after the restart: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) {
		t.Fatalf("statuses %v: want all %d SUCCESS", rep.Statuses, len(n.Jobs))
	}
	if rep.Won != won || rep.Lost != lost || rep.Fenced != fenced {
		t.Errorf("WORKER# counters in the table: won %d, lost %d, fenced %d; the processes counted %d, %d, %d",
			rep.Won, rep.Lost, rep.Fenced, won, lost, fenced)
	}
	f := checkNight(t, cat0, ex0.Table(), n, cfg.Workers, cfg.MaxRetry)
	if f.runID != runID {
		t.Errorf("the pool names run %s after the restart, want %s", f.runID, runID)
	}
	t.Logf("%d jobs, %d attempts, %d retries; %d leases lost, %d ends fenced, %d claims lost", len(n.Jobs), f.attempts, f.retries, dropped, fenced, lost)
}
