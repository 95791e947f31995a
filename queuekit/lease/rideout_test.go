package lease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// rproc is one queuekit process of a ride-out test (a coordinator or a
// worker), its output kept, its exit awaited once.
type rproc struct {
	name     string
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
	done     chan struct{}
	exitErr  error
}

// rideWriter serialises the process's writes with reads of its buffer.
type rideWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w rideWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startRProc(t *testing.T, name, bin string, args ...string) *rproc {
	t.Helper()
	p := &rproc{name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = rideWriter{&p.mu, &p.out}, rideWriter{&p.mu, &p.err}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.exitErr = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *rproc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err.String()
}

// wait waits for the process to exit and returns its error.
func (p *rproc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.exitErr
	case <-time.After(timeout):
		t.Fatalf("%s still running after %s; stderr:\n%s", p.name, timeout, p.stderr())
		return nil
	}
}

// stats reads a `queuekit worker --json` process's counters.
func (p *rproc) stats(t *testing.T) lease.WorkerStats {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var st lease.WorkerStats
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		t.Fatalf("%s --json: %v in %q", p.name, err, p.out.String())
	}
	return st
}

// lostBurst makes every connection through each proxy lose its replies for d:
// a `timeout` toxic on the downstream (the request reaches DynamoDB Local
// and is applied, its reply is held 300 ms and the connection closed) on
// every connection, and a `reset_peer` toxic on the downstream (TCP RST as
// the reply comes) on half of them.
func lostBurst(t *testing.T, d time.Duration, pxs ...*toxitest.Proxy) {
	t.Helper()
	var undo []func()
	for _, px := range pxs {
		undo = append(undo, px.Add(t, "reset_peer", "downstream", 0.5, toxiproxy.Attributes{"timeout": 0}),
			px.LoseReplies(t, 1, 300*time.Millisecond))
	}
	time.Sleep(d)
	for _, u := range undo {
		u()
	}
}

// rideAttemptsRaw reads the night's attempt items straight from DynamoDB Local.
func rideAttemptsRaw(t *testing.T, ex *lease.Executor, c *dynamodb.Client, date string) []struct {
	SK        string          `dynamodbav:"sk"`
	Worker    string          `dynamodbav:"worker"`
	ClaimedMS int64           `dynamodbav:"claimed_ms"`
	Outcome   queuekit.Status `dynamodbav:"outcome"`
} {
	t.Helper()
	var all []struct {
		SK        string          `dynamodbav:"sk"`
		Worker    string          `dynamodbav:"worker"`
		ClaimedMS int64           `dynamodbav:"claimed_ms"`
		Outcome   queuekit.Status `dynamodbav:"outcome"`
	}
	p := dynamodb.NewQueryPaginator(c, &dynamodb.QueryInput{TableName: aws.String(ex.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("batch_date = :d AND begins_with(sk, :a)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: date},
			":a": &types.AttributeValueMemberS{Value: "ATTEMPT#"}}})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("read the attempts back: %v", err)
		}
		var items []struct {
			SK        string          `dynamodbav:"sk"`
			Worker    string          `dynamodbav:"worker"`
			ClaimedMS int64           `dynamodbav:"claimed_ms"`
			Outcome   queuekit.Status `dynamodbav:"outcome"`
		}
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	return all
}

// checkRiddenNight reads the night back raw and checks that every job ended
// SUCCESS exactly once: every job item SUCCESS, the pool's ended count
// equal to the jobs and nothing busy, and the run's own report keeping its
// invariants (Verify).
func checkRiddenNight(t *testing.T, ex *lease.Executor, cat *catalog.Catalog, n queuekit.Night, workers int) lease.Report {
	t.Helper()
	_, items := rawNight(t, ex, cat.Client(), n.BatchDate)
	if len(items) != len(n.Jobs) {
		t.Fatalf("%d job items, want %d", len(items), len(n.Jobs))
	}
	for _, it := range items {
		if it.Status != queuekit.StatusSuccess {
			t.Errorf("job %s read back raw: %s, want SUCCESS", it.SK, it.Status)
		}
	}
	out, err := cat.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(ex.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"batch_date": &types.AttributeValueMemberS{Value: n.BatchDate}, "sk": &types.AttributeValueMemberS{Value: "POOL"}}})
	if err != nil {
		t.Fatal(err)
	}
	var pool struct {
		Ended int    `dynamodbav:"ended"`
		Busy  int    `dynamodbav:"busy"`
		Jobs  int    `dynamodbav:"jobs"`
		State string `dynamodbav:"state"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &pool); err != nil {
		t.Fatal(err)
	}
	if pool.Ended != len(n.Jobs) || pool.Busy != 0 || pool.State != "DONE" {
		t.Errorf("pool read back raw: ended %d, busy %d, state %s; want ended %d, busy 0, DONE", pool.Ended, pool.Busy, pool.State, len(n.Jobs))
	}
	rep, err := ex.Report(context.Background(), n, workers)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(n); err != nil {
		t.Errorf("invariants: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) {
		t.Errorf("statuses %v: want all %d SUCCESS", rep.Statuses, len(n.Jobs))
	}
	return rep
}

// Bursts of lost replies on every link: a `queuekit run --slots 0`
// coordinator and two `queuekit worker` processes of two slots each, every
// one of them talking to DynamoDB Local through a Toxiproxy proxy of its
// own. Three times, for 3 s (longer than the 2 s lease), every reply on
// every proxy is lost (`timeout` on the downstream, half of the
// connections reset by `reset_peer`), with 2 s between bursts. Nobody dies:
// the coordinator exits 0 (its report verified), both workers exit 0; read
// back raw, every job ended SUCCESS exactly once and the pool is clean.
func TestRideOutBurstsOfLostRepliesOnEveryLink(t *testing.T) {
	t.Parallel()
	const jobs = 40
	bin := buildCLI(t)
	n := catalogNight(t, "2027-09-01", jobs)
	ex, cat := setup(t, n.Jobs)
	if err := ex.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	pc := toxitest.NewProxy(t, cat.Endpoint())
	pw := []*toxitest.Proxy{toxitest.NewProxy(t, cat.Endpoint()), toxitest.NewProxy(t, cat.Endpoint())}
	run := startRProc(t, "queuekit run", bin, "run", "--batch-date", n.BatchDate, "--workers", "4", "--slots", "0",
		"--minute-ms", "1000", "--max-retry", "8", "--endpoint", pc.URL, "--table", cat.Table())
	var ws []*rproc
	for i, px := range pw {
		ws = append(ws, startRProc(t, fmt.Sprintf("worker w%d", i), bin, "worker", "--batch-date", n.BatchDate, "--slots", "2",
			"--name", fmt.Sprintf("w%d", i), "--json", "--endpoint", px.URL, "--table", cat.Table()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	waitProcessing(t, ctx, cat, n)
	began := time.Now()
	for i := range 3 {
		lostBurst(t, 3*time.Second, append([]*toxitest.Proxy{pc}, pw...)...)
		if i < 2 {
			time.Sleep(2 * time.Second)
		}
	}
	t.Logf("3 bursts of 3 s over %.1f s", time.Since(began).Seconds())
	if err := run.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("queuekit run across the bursts: %v\n%s", err, run.stderr())
	}
	var reaped, fenced, dropped int
	for _, w := range ws {
		if err := w.wait(t, time.Minute); err != nil {
			t.Fatalf("%s died: %v\n%s", w.name, err, w.stderr())
		}
		st := w.stats(t)
		reaped, fenced, dropped = reaped+st.Reaped, fenced+st.Fenced, dropped+st.Dropped
	}
	rep := checkRiddenNight(t, ex, cat, n, 4)
	t.Logf("%d jobs in %d attempts (%d retries); workers reaped %d leases, %d late ends fenced, %d leases lost",
		jobs, len(rep.Schedule), rep.Retries, reaped, fenced, dropped)
}

// A worker cut off from DynamoDB (its proxy disabled: connections closed,
// new ones refused) for 5 s, longer than two 2 s leases and within its
// 10 s bound (WorkerRideOut), then healed: it rejoins the night (it claims
// jobs after the heal) and exits 0; its jobs were re-queued by the other
// workers' reapers meanwhile, its late ends refused by their tokens; every
// job ends SUCCESS exactly once.
//
// Cut for 13 s instead, past its bound, it gives up with one line saying
// what to do (exit 1), and the others finish the night.
func TestRideOutPartitionedWorker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cut   time.Duration
		gives bool
	}{{"within-bound-rejoins", 5 * time.Second, false}, {"past-bound-gives-up", 13 * time.Second, true}} {
		t.Run(tc.name, func(t *testing.T) {
			const jobs = 60
			bin := buildCLI(t)
			date := "2027-09-02"
			if tc.gives {
				date = "2027-09-03"
			}
			n := catalogNight(t, date, jobs)
			ex, cat := setup(t, n.Jobs)
			if err := ex.CreateTable(context.Background()); err != nil {
				t.Fatal(err)
			}
			px := toxitest.NewProxy(t, cat.Endpoint())
			run := startRProc(t, "queuekit run", bin, "run", "--batch-date", n.BatchDate, "--workers", "3", "--slots", "0",
				"--minute-ms", "1000", "--max-retry", "8", "--endpoint", cat.Endpoint(), "--table", cat.Table())
			cutOff := startRProc(t, "worker cut", bin, "worker", "--batch-date", n.BatchDate, "--slots", "1", "--name", "cut", "--json",
				"--endpoint", px.URL, "--table", cat.Table())
			var others []*rproc
			for i := range 2 {
				others = append(others, startRProc(t, fmt.Sprintf("worker w%d", i), bin, "worker", "--batch-date", n.BatchDate, "--slots", "1",
					"--name", fmt.Sprintf("w%d", i), "--json", "--endpoint", cat.Endpoint(), "--table", cat.Table()))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			waitProcessing(t, ctx, cat, n)
			time.Sleep(time.Second)
			px.Cut(t)
			time.Sleep(tc.cut)
			px.Restore(t)
			healed := time.Now()
			if err := run.wait(t, 3*time.Minute); err != nil {
				t.Fatalf("queuekit run: %v\n%s", err, run.stderr())
			}
			for _, w := range others {
				if err := w.wait(t, time.Minute); err != nil {
					t.Fatalf("%s died: %v\n%s", w.name, err, w.stderr())
				}
			}
			err := cutOff.wait(t, time.Minute)
			checkRiddenNight(t, ex, cat, n, 3)
			if tc.gives {
				msg := strings.TrimSpace(cutOff.stderr())
				last := msg[strings.LastIndex(msg, "\n")+1:]
				if err == nil || !strings.Contains(last, "no answer from DynamoDB") || !strings.Contains(last, "longer than the 10s it rides out") ||
					!strings.Contains(last, "start a worker again") {
					t.Fatalf("worker cut off for %s: %v, last line %q; want exit 1 and one line saying it gave up past its 10 s and what to do", tc.cut, err, last)
				}
				t.Logf("the cut-off worker gave up: %s", last)
				return
			}
			if err != nil {
				t.Fatalf("worker cut off for %s died: %v\n%s", tc.cut, err, cutOff.stderr())
			}
			st := cutOff.stats(t)
			after := 0
			for _, a := range rideAttemptsRaw(t, ex, cat.Client(), n.BatchDate) {
				if a.Worker == "cut" && a.ClaimedMS > healed.UnixMilli() {
					after++
				}
			}
			if after == 0 {
				t.Fatalf("the cut-off worker claimed nothing after the heal (won %d in all): it did not rejoin", st.Won)
			}
			t.Logf("cut off %s: it won %d claims, %d after the heal; %d late ends fenced, %d leases lost", tc.cut, st.Won, after, st.Fenced, st.Dropped)
		})
	}
}

// A night whose workers all died (SIGKILL) mid-run, under a
// `queuekit run --slots 0` coordinator: the coordinator does not wait in
// silence; once no worker has been heard from for StaleAfter it says what
// is needed (start workers) and re-queues the leases left behind; a worker
// started then finishes the night, and the run exits 0.
func TestAllWorkersDeadNightIsFinishedByTheNext(t *testing.T) {
	t.Parallel()
	const jobs = 24
	bin := buildCLI(t)
	n := catalogNight(t, "2027-09-04", jobs)
	ex, cat := setup(t, n.Jobs)
	if err := ex.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	run := startRProc(t, "queuekit run", bin, "run", "--batch-date", n.BatchDate, "--workers", "2", "--slots", "0",
		"--minute-ms", "1000", "--endpoint", cat.Endpoint(), "--table", cat.Table())
	var first []*rproc
	for i := range 2 {
		first = append(first, startRProc(t, fmt.Sprintf("worker w%d", i), bin, "worker", "--batch-date", n.BatchDate, "--slots", "1",
			"--name", fmt.Sprintf("w%d", i), "--endpoint", cat.Endpoint(), "--table", cat.Table()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	waitProcessing(t, ctx, cat, n)
	time.Sleep(2 * time.Second)
	for _, w := range first {
		_ = w.cmd.Process.Signal(syscall.SIGKILL)
		_ = w.wait(t, 10*time.Second)
	}
	killed := time.Now()
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !cond(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; run's stderr:\n%s", what, d, run.stderr())
			}
		}
	}
	waitFor("the coordinator says no worker is left", 30*time.Second, func() bool {
		return strings.Contains(run.stderr(), "no worker heard from") && strings.Contains(run.stderr(), "queuekit worker --batch-date "+n.BatchDate)
	})
	said := time.Since(killed)
	pool, _ := rawNight(t, ex, cat.Client(), n.BatchDate)
	if pool.State != "RUNNING" {
		t.Fatalf("pool %s after the workers died, want RUNNING", pool.State)
	}
	next := startRProc(t, "worker next", bin, "worker", "--batch-date", n.BatchDate, "--slots", "2", "--name", "next", "--json",
		"--endpoint", cat.Endpoint(), "--table", cat.Table())
	if err := run.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("queuekit run: %v\n%s", err, run.stderr())
	}
	if err := next.wait(t, time.Minute); err != nil {
		t.Fatalf("the next worker: %v\n%s", err, next.stderr())
	}
	rep := checkRiddenNight(t, ex, cat, n, 2)
	t.Logf("the coordinator said what is needed %.1f s after the workers died; %d jobs in %d attempts", said.Seconds(), jobs, len(rep.Schedule))
}

// A worker whose claim loop's reads get no answer while the heartbeats of
// the jobs it runs get through (what a busy machine did to a held-out run:
// "no answer for 14.5 s, longer than the 12 s it rides out", with no outage
// over 3 s) is not cut off: its outage is timed from its last heartbeat
// that landed, since its leases are still its own. Here every read of the
// worker is refused for 13 s, past WorkerRideOut (10 s), while its 3 jobs
// (15 s each, 2 s leases) run and heartbeat through another proxy; the
// worker keeps its jobs, ends them once the reads are back and the night
// ends with every job SUCCESS in one attempt. With the outage timed from
// the loop's own first unanswered read (o.Answered unset), it gave up
// during the cut and the night waited for a worker until the test's 3
// minutes ran out.
func TestWorkerWhoseHeartbeatsLandRidesOutFailingReads(t *testing.T) {
	t.Parallel()
	n := catalogNight(t, "2027-09-05", 3)
	ex0, cat0 := setup(t, n.Jobs)
	r := toxitest.NewRouter(t, cat0.Endpoint(), leaseKind, leaseKinds...)
	ex := executorVia(t, cat0, r.Default.URL, routed(r))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Minute: 15 * time.Second, Poll: 200 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex0.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	wch := joinAsync(ctx, ex, n.BatchDate, lease.WorkerConfig{Slots: cfg.Workers, Name: "w1"})
	if err := ex0.Start(ctx, n.BatchDate, runID); err != nil {
		t.Fatalf("start: %v", err)
	}
	for r.Count("start") < len(n.Jobs) { // every job started: heartbeats from now on
		if ctx.Err() != nil {
			t.Fatalf("%d jobs started: %v", r.Count("start"), ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	beats := r.Count("heartbeat")
	r.Default.Cut(t)
	time.Sleep(13 * time.Second)
	r.Default.Restore(t)
	beatsInCut := r.Count("heartbeat") - beats
	select {
	case j := <-wch:
		t.Fatalf("worker left during the 13 s its reads failed although %d heartbeats got through: %+v, %v", beatsInCut, j.st, j.err)
	default:
	}
	if err := ex0.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	j := <-wch
	if j.err != nil {
		t.Fatalf("worker gave up although %d heartbeats got through during the 13 s its reads failed: %v", beatsInCut, j.err)
	}
	if beatsInCut == 0 {
		t.Fatal("no heartbeat during the cut: the test did not keep the leases alive")
	}
	rep, err := ex0.Report(context.Background(), n, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || len(rep.Schedule) != len(n.Jobs) || j.st.Dropped != 0 {
		t.Fatalf("statuses %v, %d attempts, %d leases lost: want %d SUCCESS in one attempt each, none lost", rep.Statuses, len(rep.Schedule), j.st.Dropped, len(n.Jobs))
	}
	t.Logf("reads refused 13 s; %d heartbeats landed meanwhile; the worker stayed and ended its %d jobs", beatsInCut, j.st.Finished)
}
