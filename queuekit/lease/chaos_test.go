package lease_test

// The chaos suite of issue 15: real `queuekit run` and `queuekit worker`
// processes against DynamoDB Local, faults injected for real (SIGSTOP past a
// lease, SIGSTOP of DynamoDB Local itself, SIGKILL of the coordinator and of
// workers, two runs at once), and the <catalog>_exec table read back raw
// afterwards: checkNight asserts every invariant from the items themselves,
// not from the executor's own report.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// chaosNight is a catalog night of n jobs, all requested at 01:00, each
// runtime job-minutes long, four priorities, one exclusive job in every
// exclusiveEvery (0: none).
func chaosNight(t *testing.T, date string, n, runtime, exclusiveEvery int) queuekit.Night {
	t.Helper()
	var jobs []queuekit.Job
	for i := range n {
		id := fmt.Sprintf("JOB-%s-%03d", strings.ReplaceAll(date, "-", ""), i+1)
		jobs = append(jobs, queuekit.Job{BatchDate: date, WindowJobID: queuekit.SortKey("01:00", id), JobID: id, RequestedWindow: "01:00",
			SubmittedAt: date + "T00:00:00Z", WorkloadClass: queuekit.WorkloadClasses[0], RuntimeMinutes: runtime, Priority: i % 4,
			RequiresExclusiveLock: exclusiveEvery > 0 && i%exclusiveEvery == exclusiveEvery-1, Status: "queued"})
	}
	night, err := queuekit.NewNight(date, queuekit.DefaultWindow, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return night
}

// proc is a queuekit process with its output.
type proc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
	exitedAt time.Time
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.exitedAt = time.Now()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode() // -1 when killed by a signal
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit, at most d.
func (p *proc) wait(t *testing.T, d time.Duration, what string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		_ = p.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on stderr
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%s did not exit within %s\nstderr: %s", what, d, p.err.String())
	}
}

func (p *proc) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		t.Fatalf("signal %v to pid %d: %v", s, p.cmd.Process.Pid, err)
	}
}

// at is the endpoint and table flags for a catalog.
func at(cat *catalog.Catalog) []string {
	return []string{"--endpoint", cat.Endpoint(), "--table", cat.Table()}
}

func runArgs(cat *catalog.Catalog, date string, workers, slots int, extra ...string) []string {
	return append(append([]string{"run", "--batch-date", date, "--workers", strconv.Itoa(workers), "--slots", strconv.Itoa(slots), "--json"},
		at(cat)...), extra...)
}

func workerArgs(cat *catalog.Catalog, date, name string, slots int, extra ...string) []string {
	return append(append([]string{"worker", "--batch-date", date, "--slots", strconv.Itoa(slots), "--name", name, "--json", "--wait", "60s"},
		at(cat)...), extra...)
}

// seeded is a catalog with the night seeded, and its executor; the tables
// go when the test ends.
func seeded(t *testing.T, n queuekit.Night, opts ...catalog.Option) (*lease.Executor, *catalog.Catalog) {
	t.Helper()
	return setup(t, n.Jobs, opts...)
}

// nightItems reads every item of the night in the execution table, raw.
func rawItems(t *testing.T, cat *catalog.Catalog, table, date string) map[string][]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k, err := expression.NewBuilder().WithKeyCondition(expression.Key("batch_date").Equal(expression.Value(date))).Build()
	if err != nil {
		t.Fatal(err)
	}
	pg := dynamodb.NewQueryPaginator(cat.Client(), &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: k.KeyCondition(),
		ExpressionAttributeNames: k.Names(), ExpressionAttributeValues: k.Values(), ConsistentRead: aws.Bool(true)})
	out := map[string][]map[string]any{}
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatalf("query %s: %v", table, err)
		}
		for _, it := range page.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatal(err)
			}
			sk := m["sk"].(string)
			kind := sk[:strings.IndexAny(sk+"#", "#")]
			out[kind] = append(out[kind], m)
		}
	}
	return out
}

func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

func str(v any) string { s, _ := v.(string); return s }

// nightFacts is what checkNight read.
type nightFacts struct {
	attempts, retries, lost, fenced, dead int
	runID                                 string
}

// checkNight reads the night's execution items and asserts the invariants
// of issue 15 on them: every job ended exactly once (a final status; its
// attempts numbered 1..k, all finished, every one but the last failed, the
// last one's outcome the job's end); at most 1 + maxRetry failed and
// 1 + lease.DefaultMaxLost lost (LEASE_EXPIRED) attempts a job;
// busy within 0..c at every instant of the recorded schedule (releases
// before claims at one instant), an exclusive job alone, no two attempts of
// a job at once; the pool at busy 0, nothing running, no exclusive holder,
// ended = jobs = the night's jobs; a dead letter for each FATAL_FAILURE job.
func checkNight(t *testing.T, cat *catalog.Catalog, table string, n queuekit.Night, c, maxRetry int) nightFacts {
	t.Helper()
	items := rawItems(t, cat, table, n.BatchDate)
	var f nightFacts
	if len(items["POOL"]) != 1 {
		t.Fatalf("%d pool items", len(items["POOL"]))
	}
	pool := items["POOL"][0]
	f.runID = str(pool["run_id"])
	if num(pool["busy"]) != 0 || len(pool["running"].(map[string]any)) != 0 || str(pool["exclusive"]) != "" ||
		num(pool["ended"]) != int64(len(n.Jobs)) || num(pool["jobs"]) != int64(len(n.Jobs)) || str(pool["state"]) != "DONE" {
		t.Errorf("pool left busy %v, running %v, exclusive %q, ended %v of %v, state %v: want 0, none, none, %d of %d, DONE",
			pool["busy"], pool["running"], pool["exclusive"], pool["ended"], pool["jobs"], pool["state"], len(n.Jobs), len(n.Jobs))
	}
	status := map[string]string{}
	for _, j := range items["JOB"] {
		status[str(j["job_id"])] = str(j["execution_status"])
		f.retries += int(num(j["current_retry"]))
		f.lost += int(num(j["lost_attempts"]))
	}
	attempts := map[string][]map[string]any{}
	for _, a := range items["ATTEMPT"] {
		attempts[str(a["job_id"])] = append(attempts[str(a["job_id"])], a)
	}
	fatal := 0
	for _, j := range n.Jobs {
		st := queuekit.Status(status[j.JobID])
		if st != queuekit.StatusSuccess && st != queuekit.StatusFatalFailure {
			t.Errorf("job %s ended the night %q, want SUCCESS or FATAL_FAILURE", j.JobID, st)
		}
		if st == queuekit.StatusFatalFailure {
			fatal++
		}
		as := attempts[j.JobID]
		sort.Slice(as, func(a, b int) bool { return num(as[a]["attempt"]) < num(as[b]["attempt"]) })
		failed, lost := 0, 0
		for _, a := range as {
			switch queuekit.Status(str(a["outcome"])) {
			case queuekit.StatusRetriableFailure, queuekit.StatusFatalFailure:
				failed++
			case lease.LeaseExpired:
				lost++
			}
		}
		if len(as) == 0 || failed > 1+maxRetry || lost > 1+lease.DefaultMaxLost {
			t.Errorf("job %s: %d attempts, %d failed and %d lost: want 1 or more, at most %d failed and %d lost", j.JobID, len(as), failed, lost, 1+maxRetry, 1+lease.DefaultMaxLost)
			continue
		}
		for i, a := range as {
			out := queuekit.Status(str(a["outcome"]))
			switch {
			case num(a["attempt"]) != int64(i+1):
				t.Errorf("job %s: attempt numbers %v..., want 1..%d", j.JobID, a["attempt"], len(as))
			case out == "" || num(a["finished_ms"]) == 0:
				t.Errorf("job %s attempt %d never ended", j.JobID, i+1)
			case i < len(as)-1 && out != queuekit.StatusRetriableFailure && out != lease.LeaseExpired:
				t.Errorf("job %s attempt %d ended %s, yet attempt %d followed: the job ended twice", j.JobID, i+1, out, i+2)
			case i == len(as)-1 && st == queuekit.StatusSuccess && out != queuekit.StatusSuccess:
				t.Errorf("job %s is SUCCESS but its last attempt ended %s", j.JobID, out)
			case i == len(as)-1 && st == queuekit.StatusFatalFailure && out == queuekit.StatusSuccess:
				t.Errorf("job %s is FATAL_FAILURE but its last attempt succeeded", j.JobID)
			}
		}
		f.attempts += len(as)
	}
	if len(items["DLQ"]) != fatal {
		t.Errorf("%d dead letters for %d FATAL_FAILURE jobs", len(items["DLQ"]), fatal)
	}
	f.dead = fatal
	// The schedule: busy within 0..c, exclusive alone, a job's attempts apart.
	type span struct {
		job        string
		from, to   int64
		slots      int
		exclusive  bool
		attemptNum int64
	}
	var spans []span
	for _, a := range items["ATTEMPT"] {
		ids, _ := a["worker_ids"].([]any)
		spans = append(spans, span{str(a["job_id"]), num(a["claimed_ms"]), num(a["finished_ms"]), len(ids), a["requires_exclusive_lock"] == true, num(a["attempt"])})
	}
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, s := range spans {
		if s.exclusive && s.slots != c {
			t.Errorf("exclusive job %s attempt %d held %d slots, want all %d", s.job, s.attemptNum, s.slots, c)
		}
		evs = append(evs, ev{s.from, s.slots}, ev{s.to, -s.slots})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].d < evs[b].d
	})
	busy, most := 0, 0
	for _, e := range evs {
		busy += e.d
		most = max(most, busy)
		if busy < 0 || busy > c {
			t.Errorf("at %d ms: %d slots busy, outside 0..%d", e.t, busy, c)
			break
		}
	}
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.from < b.to && b.from < a.to {
				if a.job == b.job {
					t.Errorf("job %s: attempts %d and %d overlap", a.job, a.attemptNum, b.attemptNum)
				} else if a.exclusive || b.exclusive {
					t.Errorf("exclusive job not alone: %s#%d and %s#%d overlap", a.job, a.attemptNum, b.job, b.attemptNum)
				}
			}
		}
	}
	for _, w := range items["WORKER"] {
		if str(w["run_id"]) == f.runID {
			f.fenced += int(num(w["fenced"]))
		}
	}
	return f
}

// waitRunning waits until the night is RUNNING with at least ended jobs
// ended (processes start slowly on a busy machine).
func waitRunning(t *testing.T, ex *lease.Executor, date string, ended int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := ex.Status(context.Background(), date)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == "RUNNING" && st.Ended >= ended {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("night %s not running with %d jobs ended within 2 minutes: %+v", date, ended, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitInWork waits until a job of the night is PROCESSING under worker with
// a heartbeat after its start (heartbeat_at > started_ms): the worker is in
// the job's work, past its start write. It returns false when done closes
// first or no such job shows within 30 s.
func waitInWork(t *testing.T, cat *catalog.Catalog, table, date, worker string, done <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, j := range rawItems(t, cat, table, date)["JOB"] {
			if str(j["execution_status"]) == string(queuekit.StatusProcessing) && str(j["worker"]) == worker &&
				num(j["heartbeat_at"]) > num(j["started_ms"]) {
				return true
			}
		}
		select {
		case <-done:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// runOK asserts a `queuekit run --json` process exited 0 with a report of
// the night.
func runOK(t *testing.T, p *proc, n queuekit.Night) {
	t.Helper()
	if p.code != 0 {
		t.Fatalf("run exited %d: %s", p.code, p.err.String())
	}
	var got struct {
		BatchDate string `json:"batch_date"`
		Schedule  []json.RawMessage
	}
	if err := json.Unmarshal(p.out.Bytes(), &got); err != nil || got.BatchDate != n.BatchDate {
		t.Fatalf("run --json: %v, %q", err, p.out.String())
	}
}

// workerStats reads a worker's --json counters.
func workerStats(t *testing.T, p *proc) lease.WorkerStats {
	t.Helper()
	var st lease.WorkerStats
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		t.Fatalf("worker --json: %v in %q (stderr %s)", err, p.out.String(), p.err.String())
	}
	return st
}

// A worker paused (SIGSTOP) past its lease, again and again, then resumed:
// the reaper re-queues its jobs, and its late ends are refused by their
// fencing condition, counted and logged; every job still ends exactly once
// and the pool's rules hold, under barrier and under conservative. Jobs
// outlast the lease, so the other worker's jobs live on heartbeats.
func TestSleepingWorkerIsFenced(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	for _, policy := range []string{"barrier", "conservative"} {
		t.Run(policy, func(t *testing.T) {
			const c, maxRetry = 4, 6
			lease := 600 * time.Millisecond
			// 40 job-minutes of 20 ms: 800 ms a job, longer than the lease, so
			// only heartbeats keep a job's lease while it runs.
			n := chaosNight(t, "2027-07-01", 60, 40, 10)
			ex, cat := seeded(t, n)
			run := startProc(t, bin, runArgs(cat, n.BatchDate, c, 0, "--policy", policy, "--minute-ms", "20",
				"--lease-ms", strconv.Itoa(int(lease.Milliseconds())), "--max-retry", strconv.Itoa(maxRetry))...)
			sleeper := startProc(t, bin, workerArgs(cat, n.BatchDate, "sleeper", 2)...)
			steady := startProc(t, bin, workerArgs(cat, n.BatchDate, "steady", 2)...)
			waitRunning(t, ex, n.BatchDate, 4)
			pauses := 0
			for range 4 {
				select {
				case <-run.done:
				default:
					// Stopped while a job of its is in its work (a heartbeat
					// landed after the start), so it wakes with an end to send:
					// stopped between a claim and its start, it drops the job
					// and sends none, and a loaded machine can make every pause
					// land there.
					if !waitInWork(t, cat, ex.Table(), n.BatchDate, "sleeper", run.done) {
						continue
					}
					sleeper.signal(t, syscall.SIGSTOP)
					time.Sleep(3 * lease) // past the lease and the reaper's next pass
					sleeper.signal(t, syscall.SIGCONT)
					pauses++
					time.Sleep(1200 * time.Millisecond)
				}
			}
			run.wait(t, 3*time.Minute, "run")
			sleeper.wait(t, time.Minute, "sleeper")
			steady.wait(t, time.Minute, "steady worker")
			runOK(t, run, n)
			f := checkNight(t, cat, ex.Table(), n, c, maxRetry)
			sl, st := workerStats(t, sleeper), workerStats(t, steady)
			logged := strings.Count(sleeper.err.String(), "refused by its fencing condition")
			t.Logf("%s: %d pauses of %s; %d attempts for %d jobs, %d retries; sleeper: %d leases lost, %d ends fenced (%d logged); steady reaped %d",
				policy, pauses, 3*lease, f.attempts, len(n.Jobs), f.retries, sl.Dropped, sl.Fenced, logged, st.Reaped)
			if pauses < 2 {
				t.Fatalf("only %d pauses happened before the night ended: the test did not test", pauses)
			}
			if st.Reaped == 0 || f.lost == 0 {
				t.Fatalf("no lease of the sleeper was reaped (reaped %d, lost attempts %d): the pauses hit no job", st.Reaped, f.lost)
			}
			if f.retries != 0 {
				t.Fatalf("%d retries: the jobs' work never fails, so an expired lease must count a lost attempt, not a retry", f.retries)
			}
			if sl.Fenced == 0 || logged != sl.Fenced || f.fenced != sl.Fenced {
				t.Fatalf("sleeper's late ends fenced %d, logged %d, in the table %d: want at least one, and all three equal", sl.Fenced, logged, f.fenced)
			}
		})
	}
}

// DynamoDB Local itself is stopped (SIGSTOP) for longer than a lease and
// shorter than a call timeout, mid-night, twice: heartbeats cannot get
// through, so holders stop their work and the leases expire; when the
// server resumes, the reaper's writes and the holders' late ends race under
// the fence, and still every job ends exactly once, the run exits 0, and no
// process gives up. The server is this test's own (port
// $LEASE_STALL_PORT, or a free one ddbtest picks).
func TestDynamoDBStalledPastALease(t *testing.T) {
	t.Parallel()
	port := os.Getenv("LEASE_STALL_PORT") // "": a free port ddbtest picks
	bin := buildCLI(t)
	srv := ddbtest.StartPrivate(t, port)
	const c, maxRetry = 4, 6
	lease := 1000 * time.Millisecond
	n := chaosNight(t, "2027-07-02", 60, 15, 12)
	ex, cat := seeded(t, n, catalog.WithEndpoint(srv.Endpoint))
	run := startProc(t, bin, runArgs(cat, n.BatchDate, c, 0, "--minute-ms", "20", "--lease-ms", strconv.Itoa(int(lease.Milliseconds())),
		"--max-retry", strconv.Itoa(maxRetry))...)
	a := startProc(t, bin, workerArgs(cat, n.BatchDate, "a", 2)...)
	b := startProc(t, bin, workerArgs(cat, n.BatchDate, "b", 2)...)
	waitRunning(t, ex, n.BatchDate, 4)
	for range 2 {
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * lease) // > the lease, < the 30 s call timeout
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	run.wait(t, 3*time.Minute, "run")
	a.wait(t, time.Minute, "worker a")
	b.wait(t, time.Minute, "worker b")
	runOK(t, run, n)
	if a.code != 0 || b.code != 0 {
		t.Fatalf("workers exited %d and %d: %s %s", a.code, b.code, a.err.String(), b.err.String())
	}
	f := checkNight(t, cat, ex.Table(), n, c, maxRetry)
	sa, sb := workerStats(t, a), workerStats(t, b)
	t.Logf("two stalls of %s: %d attempts for %d jobs, %d retries; leases lost %d, ends fenced %d, reaped %d",
		3*lease, f.attempts, len(n.Jobs), f.retries, sa.Dropped+sb.Dropped, sa.Fenced+sb.Fenced, sa.Reaped+sb.Reaped)
	if sa.Dropped+sb.Dropped == 0 {
		t.Fatalf("no lease was lost during two stalls of %s with a %s lease: the stall did not reach the heartbeats", 3*lease, lease)
	}
}

// The coordinator (`queuekit run`) is killed (SIGKILL) mid-night. Its
// workers exit within 20 s with one line naming the run; a run started at
// once is refused as already running (naming the dead run's pid); a run
// with bad input writes nothing; once the dead run's heartbeat is older
// than lease.StaleAfter a new run takes the night, starts clean, and
// completes with every invariant.
func TestCoordinatorKilledMidNight(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	const c, maxRetry = 4, 3
	n := chaosNight(t, "2027-07-03", 60, 15, 10)
	ex, cat := seeded(t, n)
	extra := []string{"--minute-ms", "20", "--lease-ms", "1000", "--max-retry", strconv.Itoa(maxRetry)}
	run := startProc(t, bin, runArgs(cat, n.BatchDate, c, 0, extra...)...)
	w1 := startProc(t, bin, workerArgs(cat, n.BatchDate, "w1", 2)...)
	w2 := startProc(t, bin, workerArgs(cat, n.BatchDate, "w2", 2)...)
	waitRunning(t, ex, n.BatchDate, 8)
	run.signal(t, syscall.SIGKILL)
	killed := time.Now()
	run.wait(t, 10*time.Second, "killed run")
	// At once: the night is held by the dead run.
	again := startProc(t, bin, runArgs(cat, n.BatchDate, c, c, extra...)...)
	again.wait(t, time.Minute, "second run")
	if msg := again.err.String(); again.code != 2 || !strings.Contains(msg, "already running") ||
		!strings.Contains(msg, fmt.Sprintf("pid %d", run.cmd.Process.Pid)) || strings.Count(msg, "\n") != 1 {
		t.Fatalf("run while the dead run holds the night: exit %d, %q; want 2 and one line naming pid %d", again.code, msg, run.cmd.Process.Pid)
	}
	pool := rawItems(t, cat, ex.Table(), n.BatchDate)["POOL"][0]
	if str(pool["state"]) != "RUNNING" || num(pool["pid"]) != int64(run.cmd.Process.Pid) {
		t.Fatalf("the refused run changed the pool: %v", pool)
	}
	for i, w := range []*proc{w1, w2} {
		w.wait(t, 25*time.Second, "orphaned worker")
		took := w.exitedAt.Sub(killed)
		lines := strings.Split(strings.TrimSpace(w.err.String()), "\n")
		last := lines[len(lines)-1]
		if w.code != 1 || took > 20*time.Second || !strings.Contains(last, "has stopped: its coordinator") ||
			strings.Count(w.err.String(), "has stopped") != 1 {
			t.Fatalf("orphan: exit %d after %s, stderr %q; want 1 within 20 s and one line saying the run has stopped", w.code, took, w.err.String())
		}
		t.Logf("orphan w%d exited %.1f s after the kill: %s", i+1, took.Seconds(), last)
	}
	// Limits before writes: a run beyond them changes nothing at all.
	before := rawItems(t, cat, ex.Table(), n.BatchDate)
	bad := startProc(t, bin, runArgs(cat, n.BatchDate, 1000000, 0, extra...)...)
	bad.wait(t, time.Minute, "run with --workers 1000000")
	if bad.code != 2 || !strings.Contains(bad.err.String(), "--workers 1000000 is beyond the limit") || strings.Count(bad.err.String(), "\n") != 1 {
		t.Fatalf("--workers 1000000: exit %d, %q", bad.code, bad.err.String())
	}
	if after := rawItems(t, cat, ex.Table(), n.BatchDate); !reflect.DeepEqual(before, after) {
		t.Fatal("the run refused for its limits changed the night")
	}
	if d := lease.StaleAfter - time.Since(killed); d > 0 {
		time.Sleep(d + 500*time.Millisecond)
	}
	rerun := startProc(t, bin, runArgs(cat, n.BatchDate, c, 0, extra...)...)
	w3 := startProc(t, bin, workerArgs(cat, n.BatchDate, "w3", 2)...)
	w4 := startProc(t, bin, workerArgs(cat, n.BatchDate, "w4", 2)...)
	rerun.wait(t, 3*time.Minute, "re-run")
	w3.wait(t, time.Minute, "w3")
	w4.wait(t, time.Minute, "w4")
	runOK(t, rerun, n)
	f := checkNight(t, cat, ex.Table(), n, c, maxRetry)
	if f.attempts != len(n.Jobs) || f.retries != 0 {
		t.Fatalf("the re-run kept %d attempts and %d retries for %d jobs: it did not start clean", f.attempts, f.retries, len(n.Jobs))
	}
}

// Two runs of one night started at the same instant: exactly one runs (and
// keeps every invariant), the other exits 2 with one line saying the night
// is already running, naming the winner's run id, start time, host and pid.
func TestTwoRunsAtOnce(t *testing.T) {
	bin := buildCLI(t)
	host, _ := os.Hostname()
	const c = 3
	n := chaosNight(t, "2027-07-04", 12, 4, 6)
	ex, cat := seeded(t, n)
	for trial := range 3 {
		var ps [2]*proc
		var ready sync.WaitGroup
		go1 := make(chan struct{})
		for i := range ps {
			ready.Add(1)
			go func() {
				defer ready.Done()
				<-go1
				// A night of about 5 s (100 ms a minute), not 0.5: on a busy
				// machine the two processes' starts can be further apart than
				// a short night, and then both run it one after the other.
				ps[i] = startProc(t, bin, runArgs(cat, n.BatchDate, c, c, "--minute-ms", "100")...)
			}()
		}
		close(go1)
		ready.Wait()
		for _, p := range ps {
			p.wait(t, 2*time.Minute, "run")
		}
		win, lose := ps[0], ps[1]
		if win.code != 0 {
			win, lose = lose, win
		}
		pool := rawItems(t, cat, ex.Table(), n.BatchDate)["POOL"][0]
		msg := lose.err.String()
		if win.code != 0 || lose.code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "already running") ||
			!strings.Contains(msg, "run "+str(pool["run_id"])) || !strings.Contains(msg, "started 20") ||
			!strings.Contains(msg, fmt.Sprintf("by host %s pid %d", host, win.cmd.Process.Pid)) {
			t.Fatalf("trial %d: exits %d and %d, loser %q; want 0 and 2, the loser naming run %v, host %s, pid %d",
				trial, win.code, lose.code, msg, pool["run_id"], host, win.cmd.Process.Pid)
		}
		runOK(t, win, n)
		checkNight(t, cat, ex.Table(), n, c, lease.DefaultMaxRetry)
	}
}

// A kill storm: 300 jobs, c = 8 over four worker processes of two slots;
// every 1.5 s a random worker is killed (SIGKILL) and a new one started in
// its place. Every job ends exactly once and the pool's rules hold.
func TestKillStorm(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	const c, maxRetry = 8, 8
	n := chaosNight(t, "2027-07-05", 300, 4, 50)
	ex, cat := seeded(t, n)
	run := startProc(t, bin, runArgs(cat, n.BatchDate, c, 0, "--minute-ms", "20", "--lease-ms", "800", "--max-retry", strconv.Itoa(maxRetry))...)
	var ws []*proc
	next := 0
	// A replacement can start after the night has ended (process start is
	// slow on a busy machine); it then waits --wait for a run that never
	// comes and exits, so --wait stays well inside the test's wait below.
	spawn := func() *proc {
		next++
		return startProc(t, bin, workerArgs(cat, n.BatchDate, fmt.Sprintf("storm%d", next), 2, "--wait", "20s")...)
	}
	for range 4 {
		ws = append(ws, spawn())
	}
	rng := rand.New(rand.NewPCG(15, 300))
	kills := 0
	tick := time.NewTicker(1500 * time.Millisecond)
	defer tick.Stop()
storm:
	for {
		select {
		case <-run.done:
			break storm
		case <-time.After(4 * time.Minute):
			t.Fatalf("the storm's night did not end within 4 minutes: %s", run.err.String())
		case <-tick.C:
			i := rng.IntN(len(ws))
			select {
			case <-ws[i].done:
			default:
				ws[i].signal(t, syscall.SIGKILL)
				kills++
			}
			ws[i] = spawn()
		}
	}
	for _, w := range ws {
		w.wait(t, time.Minute, "worker")
	}
	runOK(t, run, n)
	f := checkNight(t, cat, ex.Table(), n, c, maxRetry)
	t.Logf("%d jobs, %d kills: %d attempts, %d retries, %d dead letters, %d late ends fenced", len(n.Jobs), kills, f.attempts, f.retries, f.dead, f.fenced)
	if kills < 3 {
		t.Fatalf("only %d kills before the night ended: the storm did not happen", kills)
	}
}

// A worker asking for more slots than the run's pool holds is refused
// before it joins, with one line naming the limit.
func TestWorkerSlotsBeyondThePool(t *testing.T) {
	bin := buildCLI(t)
	n := chaosNight(t, "2027-07-06", 4, 2, 0)
	ex, cat := seeded(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runID, err := ex.Prepare(ctx, n, lease.Config{Workers: 3, MaxRetry: lease.DefaultMaxRetry})
	if err != nil {
		t.Fatal(err)
	}
	w := startProc(t, bin, workerArgs(cat, n.BatchDate, "greedy", 5)...)
	w.wait(t, time.Minute, "worker")
	if w.code != 2 || strings.Count(w.err.String(), "\n") != 1 || !strings.Contains(w.err.String(), "--slots 5 is beyond the limit of 3") {
		t.Fatalf("worker --slots 5 on a pool of 3: exit %d, %q", w.code, w.err.String())
	}
	pool := rawItems(t, cat, ex.Table(), n.BatchDate)["POOL"][0]
	if num(pool["joined"]) != 0 || str(pool["run_id"]) != runID {
		t.Fatalf("the refused worker joined: %v", pool)
	}
}
