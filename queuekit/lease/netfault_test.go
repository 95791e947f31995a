package lease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// catalogNight is a night of n one-minute jobs at 01:00 that the catalog
// accepts (3-digit job ids, so n <= 999), four priorities.
func catalogNight(t *testing.T, date string, n int) queuekit.Night {
	t.Helper()
	var jobs []queuekit.Job
	for i := range n {
		id := fmt.Sprintf("JOB-%s-%03d", date[:4]+date[5:7]+date[8:], i+1)
		jobs = append(jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: queuekit.SortKey("01:00", id),
			RequestedWindow: "01:00", SubmittedAt: date + "T00:00:00Z", WorkloadClass: queuekit.ClassETL,
			RuntimeMinutes: 1, Priority: i % 4, Status: "queued"})
	}
	night, err := queuekit.NewNight(date, queuekit.DefaultWindow, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return night
}

// rawItem is what the tests read back from the execution table, raw.
type rawItem struct {
	SK     string          `dynamodbav:"sk"`
	RunID  string          `dynamodbav:"run_id"`
	State  string          `dynamodbav:"state"`
	Status queuekit.Status `dynamodbav:"execution_status"`
	Token  int64           `dynamodbav:"fence_token"`
}

// rawNight reads every item of the night in the execution table with a
// strongly consistent Query, straight from DynamoDB Local.
func rawNight(t *testing.T, ex *lease.Executor, c *dynamodb.Client, date string) (pool rawItem, jobs []rawItem) {
	t.Helper()
	p := dynamodb.NewQueryPaginator(c, &dynamodb.QueryInput{TableName: aws.String(ex.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("batch_date = :d"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: date}}})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("read the execution table back: %v", err)
		}
		var items []rawItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			switch {
			case it.SK == "POOL":
				pool = it
			case strings.HasPrefix(it.SK, "JOB#"):
				jobs = append(jobs, it)
			}
		}
	}
	return pool, jobs
}

// A coordinator process frozen (SIGSTOP) in the middle of its reset for
// longer than StaleAfter: a new run takes the night and resets it; the old
// coordinator is resumed (SIGCONT) before the new run starts, and its reset
// goes on. Every write it has left is refused (the reset is fenced by the
// pool item's run), so it exits saying it was replaced, the execution table
// read back raw holds only the new run's jobs, NOT_STARTED, and the new run
// completes with every job SUCCESS once. The old coordinator talks to
// DynamoDB Local through Toxiproxy with 1.5 s of latency on every reply, so
// that its reset takes several seconds and the test can freeze it in the
// middle (seen in the table: the pool PREPARING, some jobs written with its
// run id, not all).
func TestCoordinatorPausedMidResetCannotOverwriteNewRun(t *testing.T) {
	t.Parallel()
	const jobs = 400
	bin := buildCLI(t)
	n := catalogNight(t, "2027-07-01", jobs)
	ex, cat := setup(t, n.Jobs)
	direct := cat.Client()
	if err := ex.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	px := toxitest.NewProxy(t, cat.Endpoint())
	px.Slow(t, 1, 1500*time.Millisecond, 0)

	old := exec.Command(bin, "run", "--batch-date", n.BatchDate, "--workers", "4", "--slots", "4", "--minute-ms", "2",
		"--endpoint", px.URL, "--table", cat.Table())
	var oldOut, oldErr bytes.Buffer
	old.Stdout, old.Stderr = &oldOut, &oldErr
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if old.ProcessState == nil {
			_ = old.Process.Signal(syscall.SIGCONT)
			_ = old.Process.Kill()
			_ = old.Wait()
		}
	})
	// Freeze it once its reset is under way and not done.
	var oldRun string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the old coordinator's reset never started; stderr:\n%s", oldErr.String())
		}
		pool, items := rawNight(t, ex, direct, n.BatchDate)
		written := 0
		for _, it := range items {
			if it.RunID == pool.RunID {
				written++
			}
		}
		if pool.State == "PREPARING" && written > 0 {
			if written == jobs {
				t.Fatalf("the old run wrote all %d jobs before the test could freeze it", jobs)
			}
			if err := old.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			oldRun = pool.RunID
			t.Logf("old run %s frozen mid-reset: %d of %d jobs written", oldRun, written, jobs)
			break
		}
	}
	// The new run takes the night once the old one's heartbeat is StaleAfter old.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 4, Policy: sim.Backfill, Minute: 2 * time.Millisecond, MaxRetry: lease.DefaultMaxRetry}
	var newRun string
	for {
		id, err := ex.Prepare(ctx, n, cfg)
		var busy *lease.BusyError
		if errors.As(err, &busy) && busy.RunID == oldRun {
			if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
				t.Fatal("the frozen run's night never went stale")
			}
			continue
		}
		if err != nil {
			t.Fatalf("new run's prepare: %v", err)
		}
		newRun = id
		break
	}
	// Resume the old coordinator and let its reset go on to its end.
	if err := old.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := old.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(oldErr.String(), "replaced by another run") {
		t.Fatalf("old coordinator after SIGCONT: %v, stderr %q; want a failure saying it was replaced", err, oldErr.String())
	}
	pool, items := rawNight(t, ex, direct, n.BatchDate)
	if pool.RunID != newRun || pool.State != "WAITING" {
		t.Fatalf("pool after the old run resumed: run %s state %s, want run %s WAITING", pool.RunID, pool.State, newRun)
	}
	if len(items) != jobs {
		t.Fatalf("%d job items, want %d", len(items), jobs)
	}
	for _, it := range items {
		if it.RunID != newRun || it.Status != queuekit.StatusNotStarted || it.Token != 0 {
			t.Fatalf("job %s after the old run resumed: run %s status %s token %d; want run %s NOT_STARTED token 0 (overwritten by the old run)",
				it.SK, it.RunID, it.Status, it.Token, newRun)
		}
	}
	// The new run completes.
	werr := make(chan error, 1)
	go func() {
		_, err := ex.Join(ctx, n.BatchDate, lease.WorkerConfig{Slots: cfg.Workers})
		werr <- err
	}()
	if err := ex.Start(ctx, n.BatchDate, newRun); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := ex.WaitDone(ctx, n.BatchDate, newRun, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if err := <-werr; err != nil {
		t.Fatalf("workers: %v", err)
	}
	rep, err := ex.Report(ctx, n, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(n); err != nil {
		t.Fatalf("the new run's report: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != jobs || len(rep.Schedule) != jobs {
		t.Fatalf("statuses %v, %d attempts: want %d SUCCESS, one attempt each", rep.Statuses, len(rep.Schedule), jobs)
	}
	_, items = rawNight(t, ex, direct, n.BatchDate)
	for _, it := range items {
		if it.RunID != newRun || it.Status != queuekit.StatusSuccess {
			t.Fatalf("job %s at the end: run %s status %s, want run %s SUCCESS", it.SK, it.RunID, it.Status, newRun)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// leaseKind names the kind of one of the executor's requests, from its
// operation and body, for toxitest.Router: the writes of the lease protocol
// (claim, start, heartbeat, end, reap, counters, join, reset, and run-pool:
// the coordinator's own pool writes, its heartbeat and its state changes)
// and "" for the rest (reads).
func leaseKind(op string, body []byte) string {
	has := func(s string) bool { return bytes.Contains(body, []byte(s)) }
	switch op {
	case "TransactWriteItems":
		switch {
		case has(`"PREPARING"`):
			return "reset"
		case has(`"join_nonce"`):
			return "join"
		case has(`"WORKER#`):
			return "counters"
		case has(`lease expired: worker`):
			return "reap"
		case has(`"finished_ms"`):
			return "end"
		case has(`"ATTEMPT#`):
			return "claim"
		}
	case "PutItem":
		if has(`"PREPARING"`) {
			return "take"
		}
	case "UpdateItem":
		switch {
		case has(`"run_seen_ms"`):
			return "run-pool"
		case has(`"started_ms"`):
			return "start"
		case has(`"lease_until"`):
			return "heartbeat"
		}
	}
	return ""
}

// joined is what a worker's Join returned.
type joined struct {
	st  lease.WorkerStats
	err error
}

// joinAsync joins a worker of the night in a goroutine; its result comes
// on the channel.
func joinAsync(ctx context.Context, ex *lease.Executor, date string, wc lease.WorkerConfig) <-chan joined {
	wch := make(chan joined, 1)
	go func() {
		st, err := ex.Join(ctx, date, wc)
		wch <- joined{st, err}
	}()
	return wch
}

var leaseKinds = []string{"claim", "start", "heartbeat", "end", "counters", "join", "reset", "run-pool", "take"}

// Lost replies, one kind of write at a time: every request of that kind
// goes through a Toxiproxy proxy that drops its replies (a `timeout` toxic
// downstream, 250 ms, then the connection is closed): all of them until the
// SDK has sent two requests again, then 30% of them: the write reached DynamoDB Local and landed, the SDK sees a
// broken connection and sends it again. The run (3 slots in this process)
// must end as a clean run does: every job SUCCESS in exactly one attempt
// (no lease lost, no retry burned), no end counted as fenced, no lease
// dropped, the WORKER# counters in the table equal to the process's own
// (nothing counted twice), the report's invariants (Verify) hold, and the
// fault was really injected (the SDK retried requests of the kind).
func TestLostRepliesPerWriteKind(t *testing.T) {
	t.Parallel()
	n := sample(t, "2026-05-13")
	for _, kind := range leaseKinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ex0, cat0 := setup(t, n.Jobs)
			r := toxitest.NewRouter(t, cat0.Endpoint(), leaseKind, leaseKinds...)
			ex := executorVia(t, cat0, r.Default.URL, routed(r))
			// Every reply of the kind is lost until the SDK has sent two
			// requests of it again; from then on 30% of them.
			px := r.Proxy(t, kind)
			all := px.LoseReplies(t, 1, 250*time.Millisecond)
			r.AfterRetries(kind, 2, func() {
				all()
				px.LoseReplies(t, 0.3, 250*time.Millisecond)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cfg := lease.Config{Workers: 3, Minute: 20 * time.Millisecond, Lease: 3 * time.Second, MaxRetry: lease.DefaultMaxRetry}
			runID, err := ex.Prepare(ctx, n, cfg)
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			wch := joinAsync(ctx, ex, n.BatchDate, lease.WorkerConfig{Slots: cfg.Workers, Name: "w1"})
			if err := ex.Start(ctx, n.BatchDate, runID); err != nil {
				t.Fatalf("start: %v", err)
			}
			if err := ex.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
				t.Fatalf("wait: %v", err)
			}
			j := <-wch
			if j.err != nil {
				t.Fatalf("worker died: %v", j.err)
			}
			rep, err := ex0.Report(context.Background(), n, cfg.Workers)
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Verify(n); err != nil {
				t.Fatalf("invariants: %v", err)
			}
			if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || len(rep.Schedule) != len(n.Jobs) || rep.Retries != 0 {
				t.Fatalf("statuses %v, %d attempts, %d retries: want %d SUCCESS, one attempt each, no retry",
					rep.Statuses, len(rep.Schedule), rep.Retries, len(n.Jobs))
			}
			if j.st.Fenced != 0 || j.st.Dropped != 0 || j.st.Finished != len(n.Jobs) || j.st.Won != len(n.Jobs) {
				t.Fatalf("worker: %+v; want %d won and succeeded, no end fenced, no lease lost", j.st, len(n.Jobs))
			}
			if rep.Won != j.st.Won || rep.Lost != j.st.Lost {
				t.Fatalf("WORKER# counters in the table: won %d lost %d, the process counted %d and %d", rep.Won, rep.Lost, j.st.Won, j.st.Lost)
			}
			if r.Retries(kind) == 0 {
				t.Fatalf("no %s request was sent again: the lost-reply fault was not injected (%d sent)", kind, r.Count(kind))
			}
			t.Logf("%s: %d requests sent, %d of them retries after a lost reply; claims lost %d", kind, r.Count(kind), r.Retries(kind), j.st.Lost)
		})
	}
}

// Skewed clocks: four `queuekit worker` processes whose wall clocks are off
// by +lease/2, -lease/2, +2 leases and -2 leases (QUEUEKIT_CLOCK_OFFSET,
// test only) share a run whose coordinator's clock is right. Their reapers
// never compare a lease's end with their own clock (they wait a lease on
// their monotonic clock for an unchanged token and lease end), so no
// healthy job is revoked: every job ends SUCCESS in one attempt, none is
// reaped, retried or dead-lettered, and every worker exits cleanly.
func TestSkewedWorkerClocksRevokeNoHealthyJob(t *testing.T) {
	t.Parallel()
	const jobs = 40
	bin := buildCLI(t)
	n := catalogNight(t, "2027-08-01", jobs)
	ex, cat := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lz := 2 * time.Second
	cfg := lease.Config{Workers: 4, Policy: sim.Backfill, Minute: time.Second, Lease: lz, MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	offsets := []time.Duration{lz / 2, -lz / 2, 2 * lz, -2 * lz}
	var ws []*workerProc
	for i, off := range offsets {
		w := &workerProc{}
		w.cmd = exec.Command(bin, "worker", "--batch-date", n.BatchDate, "--endpoint", cat.Endpoint(), "--table", cat.Table(),
			"--json", "--slots", "1", "--name", fmt.Sprintf("skew%d", i))
		w.cmd.Env = append(w.cmd.Environ(), lease.EnvClockOffset+"="+off.String())
		w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if w.cmd.ProcessState == nil {
				_ = w.cmd.Process.Kill()
				_ = w.cmd.Wait()
			}
		})
		ws = append(ws, w)
	}
	if err := ex.Start(ctx, n.BatchDate, runID); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := ex.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	reaped := 0
	for i, w := range ws {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker skewed %s: %v\n%s", offsets[i], err, w.err.String())
		}
		var st lease.WorkerStats
		if err := json.Unmarshal(w.out.Bytes(), &st); err != nil {
			t.Fatalf("worker %d --json: %v in %q", i, err, w.out.String())
		}
		reaped += st.Reaped
		if st.Dropped != 0 || st.Fenced != 0 {
			t.Errorf("worker skewed %s: %d leases lost, %d ends fenced; want none\n%s", offsets[i], st.Dropped, st.Fenced, w.err.String())
		}
	}
	rep, err := ex.Report(ctx, n, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Schedule {
		if e.Outcome != queuekit.StatusSuccess {
			t.Errorf("attempt %d of %s by %s [%.1f, %.1f]: %s, want SUCCESS", e.Attempt, e.ID, e.Worker, e.Start, e.Finish, e.Outcome)
		}
	}
	if rep.Statuses[queuekit.StatusSuccess] != jobs || len(rep.Schedule) != jobs || rep.Retries != 0 || reaped != 0 {
		t.Fatalf("statuses %v, %d attempts, %d retries, %d reaped: want %d SUCCESS in one attempt each, none retried or reaped",
			rep.Statuses, len(rep.Schedule), rep.Retries, reaped, jobs)
	}
	_, items := rawNight(t, ex, cat.Client(), n.BatchDate)
	for _, it := range items {
		if it.Status != queuekit.StatusSuccess {
			t.Fatalf("job %s read back raw: %s, want SUCCESS", it.SK, it.Status)
		}
	}
	// The run's verdict on this correct night: it compares no times of two
	// hosts but within the skew bound (8 s between the +4 s and -4 s
	// workers, within DefaultMaxSkew), so it passes; and what a broken night
	// leaves, planted in the table, is still caught.
	if err := rep.Verify(n); err != nil {
		t.Fatalf("Verify on a correct night with skewed workers: %v", err)
	}
	checkPlantedBreaksAreCaught(t, ex, cat, n, cfg.Workers)
}

// The bound doc.go states for taking a night: a new coordinator whose clock
// is ahead of the running one's by 2 leases (4 s) is told the night is busy;
// one ahead by more than StaleAfter takes the live night over. The running
// run is then replaced: its next heartbeat is refused, and nothing of it is
// corrupted (the new run's pool and jobs are read back raw).
func TestSkewBoundTakeNight(t *testing.T) {
	n := catalogNight(t, "2027-08-03", 8)
	ex, cat := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 2, Minute: time.Second}
	live, err := ex.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The live run heartbeats (Start waits for workers, touching the pool each second).
	sctx, stop := context.WithCancel(ctx)
	started := make(chan error, 1)
	go func() { started <- ex.Start(sctx, n.BatchDate, live) }()
	within, err := lease.New(cat, lease.WithClockOffset(2*lease.DefaultLease))
	if err != nil {
		t.Fatal(err)
	}
	var busy *lease.BusyError
	if _, err := within.Prepare(ctx, n, cfg); !errors.As(err, &busy) || busy.RunID != live {
		t.Fatalf("a coordinator 4 s ahead: %v; want a BusyError naming run %s", err, live)
	}
	beyond, err := lease.New(cat, lease.WithClockOffset(lease.StaleAfter+2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	taken, err := beyond.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatalf("a coordinator %s ahead: %v; the bound says it takes the live night", lease.StaleAfter+2*time.Second, err)
	}
	serr := <-started
	stop()
	var replaced *lease.ReplacedError
	if !errors.As(serr, &replaced) || replaced.RunID != live {
		t.Fatalf("the live run after the takeover: %v; want it replaced", serr)
	}
	pool, items := rawNight(t, ex, cat.Client(), n.BatchDate)
	if pool.RunID != taken || pool.State != "WAITING" || len(items) != len(n.Jobs) {
		t.Fatalf("pool run %s state %s, %d jobs; want run %s WAITING and %d jobs", pool.RunID, pool.State, len(items), taken, len(n.Jobs))
	}
	for _, it := range items {
		if it.RunID != taken || it.Status != queuekit.StatusNotStarted {
			t.Fatalf("job %s: run %s %s; want run %s NOT_STARTED", it.SK, it.RunID, it.Status, taken)
		}
	}
}

// Slow calls and connection resets: every request of the run (coordinator
// and 3 slots, in this process) goes through Toxiproxy, one connection a
// request; 5% of the replies are held 3 s (longer than the 2 s lease) and
// 5% of the connections are reset (TCP RST) as the request goes out. The
// night must still keep every promise the chaos suite checks (Run's
// Verify: each job ended exactly once, the pool's counters right, no
// attempt without its end), every job SUCCESS, and the worker must not die.
// A lease the slow calls cost is allowed (the job is retried); none may be
// kept that was lost (the fence refuses such writes, and Verify would see
// a second end).
func TestSlowCallsAndResetsKeepTheInvariants(t *testing.T) {
	t.Parallel()
	n := sample(t, "2026-05-13")
	_, cat0 := setup(t, n.Jobs)
	r := toxitest.NewRouter(t, cat0.Endpoint(), func(string, []byte) string { return "" })
	ex := executorVia(t, cat0, r.Default.URL, routed(r))
	r.Default.Slow(t, 0.05, 3*time.Second, 0)
	r.Default.ResetPeer(t, 0.05, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Minute: 20 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: 6}
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 3})
	if err != nil {
		t.Fatalf("run through slow calls and resets: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) {
		t.Fatalf("statuses %v: want all %d SUCCESS", rep.Statuses, len(n.Jobs))
	}
	lost := 0
	for _, e := range rep.Schedule {
		if e.Outcome == lease.LeaseExpired {
			lost++
		}
	}
	t.Logf("%d jobs, %d attempts, %d leases lost to slow calls, %d requests (%d SDK retries)", len(n.Jobs), len(rep.Schedule), lost, r.Count(""), r.Retries(""))
	if r.Retries("") == 0 {
		t.Fatal("no request was retried: the resets were not injected")
	}
}

// DynamoDB unreachable mid-run for longer than a lease, as during a restart
// of DynamoDB Local: the Toxiproxy proxy in front of it is disabled for
// 3 s (open connections closed, new ones refused), then enabled again.
// Heartbeats cannot get through, so holders stop their work; afterwards the
// reaper's writes and the holders' late ends race under the fence, and the
// night still keeps every promise (Run's Verify), every job SUCCESS, and the
// worker does not die. (A real restart of DynamoDB Local, its tables kept
// on disk, is TestDynamoDBLocalRestartMidRunKeepsTheInvariants.)
func TestDynamoDBOutageMidRunKeepsTheInvariants(t *testing.T) {
	t.Parallel()
	n := sample(t, "2026-05-13")
	_, cat0 := setup(t, n.Jobs)
	px := toxitest.NewProxy(t, cat0.Endpoint())
	ex := executorVia(t, cat0, px.URL, func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxAttempts, so.MaxBackoff = 30, 200*time.Millisecond })
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Minute: 50 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: 6}
	type result struct {
		rep lease.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 3})
		done <- result{rep, err}
	}()
	// Cut once the night runs with jobs in flight.
	waitProcessing(t, ctx, cat0, n)
	px.Cut(t)
	time.Sleep(3 * time.Second)
	px.Restore(t)
	res := <-done
	if res.err != nil {
		t.Fatalf("run across a 3 s outage: %v", res.err)
	}
	if res.rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) {
		t.Fatalf("statuses %v: want all %d SUCCESS", res.rep.Statuses, len(n.Jobs))
	}
	lost := 0
	for _, e := range res.rep.Schedule {
		if e.Outcome == lease.LeaseExpired {
			lost++
		}
	}
	t.Logf("%d jobs, %d attempts, %d leases lost to the outage", len(n.Jobs), len(res.rep.Schedule), lost)
}

// waitProcessing waits until some job of the night is PROCESSING (the
// night runs with jobs in flight).
func waitProcessing(t *testing.T, ctx context.Context, cat0 *catalog.Catalog, n queuekit.Night) {
	t.Helper()
	for {
		st, err := processing(ctx, cat0, n)
		if err != nil {
			t.Fatal(err)
		}
		if st {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processing reports whether some job of the night is PROCESSING, read
// straight from DynamoDB Local (not through the proxy).
func processing(ctx context.Context, cat0 *catalog.Catalog, n queuekit.Night) (bool, error) {
	direct, err := lease.New(cat0)
	if err != nil {
		return false, err
	}
	for _, j := range n.Jobs {
		st, err := direct.Job(ctx, n.BatchDate, j.JobID)
		if err != nil {
			continue // the night is not prepared yet
		}
		if st.Status == queuekit.StatusProcessing {
			return true, nil
		}
	}
	return false, nil
}
