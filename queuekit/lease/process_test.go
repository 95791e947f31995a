package lease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/lease/poolrules"
	"github.com/nightqueue/workshop/queuekit/sim"
)

var (
	cliOnce sync.Once
	cliDir  string
	cliBin  string
	cliErr  error
)

// TestMain removes the CLI built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	toxitest.Stop()
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// buildCLI builds the queuekit command once for the package's tests.
func buildCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		cliDir, cliErr = os.MkdirTemp("", "lease-cli-")
		if cliErr != nil {
			return
		}
		cliBin = filepath.Join(cliDir, "queuekit")
		if out, err := exec.Command("go", "build", "-o", cliBin, "../cmd/queuekit").CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build the CLI: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliBin
}

// workerProc is one `queuekit worker` process.
type workerProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
}

func startWorker(t *testing.T, bin string, cat *catalog.Catalog, date string, args ...string) *workerProc {
	t.Helper()
	w := &workerProc{}
	all := append([]string{"worker", "--batch-date", date, "--endpoint", cat.Endpoint(), "--table", cat.Table(), "--json"}, args...)
	w.cmd = exec.Command(bin, all...)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			_ = w.cmd.Wait()
		}
	})
	return w
}

// bigNight is a night of n one-minute jobs, all due at minute 0, four
// priorities, one exclusive job in exclusiveEvery (0: none). Job ids have
// four digits, so it is built directly rather than through the catalog
// (which holds at most 999 jobs a night): workers read only the execution
// table.
func bigNight(date string, n, exclusiveEvery int) queuekit.Night {
	night := queuekit.Night{BatchDate: date, Window: queuekit.DefaultWindow}
	for i := range n {
		id := fmt.Sprintf("JOB-%s-%04d", date[:4]+date[5:7]+date[8:], i+1)
		night.Jobs = append(night.Jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: "01:00#" + id,
			RequestedWindow: "01:00", WorkloadClass: queuekit.ClassETL, RuntimeMinutes: 1, Priority: i % 4,
			RequiresExclusiveLock: exclusiveEvery > 0 && i%exclusiveEvery == exclusiveEvery-1, Status: "queued"})
	}
	return night
}

// Four worker processes of four slots each race over 2,000 jobs: every job
// is claimed once and ends SUCCESS once, no job runs twice at a time, the
// pool rules hold on the recorded schedule, and the claims the processes
// lost are counted (and add up in the table).
func TestWorkerProcessesClaimEachJobExactlyOnce(t *testing.T) {
	t.Parallel()
	const jobs, procs, slots = 2000, 4, 4
	bin := buildCLI(t)
	ex, cat := setup(t, nil)
	n := bigNight("2027-06-01", jobs, 250)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: procs * slots, Policy: sim.Backfill, Minute: 2 * time.Millisecond,
		Poll: 10 * time.Millisecond, Lease: 20 * time.Second, MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	var ws []*workerProc
	for i := range procs {
		ws = append(ws, startWorker(t, bin, cat, n.BatchDate, "--slots", fmt.Sprint(slots), "--name", fmt.Sprintf("proc%d", i+1)))
	}
	if err := ex.Start(ctx, n.BatchDate, runID); err != nil {
		t.Fatalf("start: %v", err)
	}
	began := time.Now()
	if err := ex.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	won, lost, succeeded := 0, 0, 0
	for i, w := range ws {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i+1, err, w.err.String())
		}
		var st lease.WorkerStats
		if err := json.Unmarshal(w.out.Bytes(), &st); err != nil {
			t.Fatalf("worker %d --json: %v in %q", i+1, err, w.out.String())
		}
		if st.Won == 0 {
			t.Errorf("worker %d claimed nothing: the race had fewer than %d processes", i+1, procs)
		}
		won, lost, succeeded = won+st.Won, lost+st.Lost, succeeded+st.Finished
	}
	rep, err := ex.Report(ctx, n, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs, %d processes x %d slots: %.1f s, claims won %d, lost %d (%.1f%% of attempts)",
		jobs, procs, slots, time.Since(began).Seconds(), won, lost, 100*float64(lost)/float64(won+lost))
	if won != jobs || succeeded != jobs || rep.Statuses[queuekit.StatusSuccess] != jobs {
		t.Fatalf("claims won %d, jobs succeeded %d (by the processes), SUCCESS %d (in the table): want %d each", won, succeeded, rep.Statuses[queuekit.StatusSuccess], jobs)
	}
	if rep.Won != won || rep.Lost != lost {
		t.Fatalf("table counts won %d lost %d, processes reported %d and %d", rep.Won, rep.Lost, won, lost)
	}
	seen := map[string]int{}
	for _, e := range rep.Schedule {
		seen[e.ID]++
		if e.Outcome != queuekit.StatusSuccess {
			t.Fatalf("attempt %+v did not succeed", e)
		}
	}
	if len(seen) != jobs || len(rep.Schedule) != jobs {
		t.Fatalf("%d attempts of %d distinct jobs, want %d of %d", len(rep.Schedule), len(seen), jobs, jobs)
	}
	if err := poolrules.Check(n, rep.Schedule, cfg.Workers, cfg.Policy); err != nil {
		t.Fatalf("pool rules broken:\n%v", err)
	}
}

// A worker process killed with SIGKILL in the middle of its first job stops
// heartbeating; after its lease expires a worker of the run re-claims the
// job, counting a retry, and the night ends with every job SUCCESS.
func TestKilledWorkerJobIsReclaimedAfterItsLease(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	n := sample(t, "2026-05-13")
	ex, cat := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 3, Minute: 20 * time.Millisecond, Lease: time.Second, MaxRetry: lease.DefaultMaxRetry}
	done := make(chan error, 1)
	var rep lease.Report
	go func() {
		var err error
		rep, err = ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 2}) // 2 slots here, 1 from the worker process
		done <- err
	}()
	w := startWorker(t, bin, cat, n.BatchDate, "--slots", "1", "--name", "doomed", "--crash-after-jobs", "1")
	werr := w.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker ended with %v, want killed by SIGKILL\n%s", werr, w.err.String())
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || rep.Retries != 0 || rep.LostAttempts != 1 {
		t.Fatalf("statuses %v, retries %d, lost attempts %d: want all %d SUCCESS, no retry (the work never failed) and 1 lost attempt", rep.Statuses, rep.Retries, rep.LostAttempts, len(n.Jobs))
	}
	var first, second *lease.Entry
	for i, e := range rep.Schedule {
		if e.Worker == "doomed" {
			first = &rep.Schedule[i]
		}
	}
	if first == nil || first.Outcome != lease.LeaseExpired {
		t.Fatalf("the killed worker's attempt: %+v, want outcome %s", first, lease.LeaseExpired)
	}
	for i, e := range rep.Schedule {
		if e.ID == first.ID && e.Attempt == 2 {
			second = &rep.Schedule[i]
		}
	}
	// Its lease ran at least cfg.Lease from the claim (heartbeats only extend it).
	leaseMin := float64(cfg.Lease) / float64(cfg.Minute)
	if second == nil || second.Outcome != queuekit.StatusSuccess || second.Start < first.Start+leaseMin {
		t.Fatalf("re-claim of %s: %+v; want SUCCESS starting after %.1f (claim %.2f + lease %.0f job-minutes)", first.ID, second, first.Start+leaseMin, first.Start, leaseMin)
	}
}

// DynamoDB Local itself is frozen (SIGSTOP) for 3 s in the middle of a run
// and then resumed. Requests wait, nobody's lease expires (the lease, 10 s,
// outlasts the pause with the heartbeat margin), so no job is lost and none
// runs twice: each job has exactly one attempt, SUCCESS. The server is this
// test's own (port $LEASE_PAUSE_PORT, or a free one ddbtest picks), never a shared one.
func TestDynamoDBPausedMidRunLosesNothing(t *testing.T) {
	t.Parallel()
	port := os.Getenv("LEASE_PAUSE_PORT") // "": a free port ddbtest picks
	bin := buildCLI(t)
	srv := ddbtest.StartPrivate(t, port)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cat, err := catalog.New(ctx, catalog.WithEndpoint(srv.Endpoint), catalog.WithTable("paused"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	n := sample(t, "2026-05-13")
	if _, err := cat.Seed(ctx, n.Jobs); err != nil {
		t.Fatal(err)
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	cfg := lease.Config{Workers: 3, Minute: 50 * time.Millisecond, Lease: 10 * time.Second, MaxRetry: lease.DefaultMaxRetry}
	done := make(chan error, 1)
	var rep lease.Report
	go func() {
		var err error
		rep, err = ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 2})
		done <- err
	}()
	w := startWorker(t, bin, cat, n.BatchDate, "--slots", "1", "--name", "outside")
	time.Sleep(2500 * time.Millisecond) // the night is at about minute 40: 003 runs on all slots
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, w.err.String())
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || len(rep.Schedule) != len(n.Jobs) || rep.Retries != 0 {
		t.Fatalf("statuses %v, %d attempts, %d retries: want %d jobs SUCCESS, one attempt each, no retry",
			rep.Statuses, len(rep.Schedule), rep.Retries, len(n.Jobs))
	}
	if err := poolrules.Check(n, rep.Schedule, cfg.Workers, sim.Barrier); err != nil {
		t.Fatalf("pool rules broken:\n%v", err)
	}
	t.Logf("paused 3 s at about minute 40: drained at %.1f (simulated %.0f)", rep.Realised.DrainedMinute, rep.Forecast.DrainedMinute)
}
