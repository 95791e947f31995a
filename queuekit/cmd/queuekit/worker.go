package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/fault"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/results"
)

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("worker")
	date := fs.String("batch-date", "", "the night whose run to join (YYYY-MM-DD) (required)")
	slots := fs.Int("slots", 0, fmt.Sprintf("jobs this process runs at once, K, 1 to %d (required)", maxPoolWorkers))
	minute := addMinuteFlag(fs, 0)
	crash := fs.Int("crash-after-jobs", 0, "exit abruptly (SIGKILL, as kill -9) in the middle of this process's J-th job")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for a run (queuekit run) to prepare the night")
	name := fs.String("name", "", "this worker's name in the table (default host-pid-random)")
	var fail failFlag
	fs.Var(&fail, "fail-job", "job id(s) whose work always fails, comma separated")
	asJSON := fs.Bool("json", false, "print this process's claim counters as JSON when the night is done")
	withResults := fs.Bool("results", false, "write each job's result to the result store, table <--table>"+results.TableSuffix+
		" (created if missing), under the attempt's fencing token (lease.Job.Token): the store refuses a write older than the one it holds, "+
		"logged and counted as a refused result. A job's work then counts as done once its time has passed, even if this process was "+
		"stopped past its lease meanwhile, so a late result is sent and the store, not the worker, decides")
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *date == "" {
		return usagef("--batch-date is required, e.g. --batch-date 2026-05-13")
	}
	if err := checkDate(*date); err != nil {
		return err
	}
	if *slots < 1 || *slots > maxPoolWorkers {
		return usagef("--slots %d: a worker runs 1 to %d jobs at once", *slots, maxPoolWorkers)
	}
	if *crash < 0 {
		return usagef("--crash-after-jobs %d: use 0 (never) or the job to crash in", *crash)
	}
	if *wait < 0 {
		return usagef("--wait %s: must be >= 0", *wait)
	}
	m, err := minute.duration()
	if err != nil {
		return err
	}
	if isSet(fs, "minute-ms") && m <= 0 {
		return usagef("--minute-ms %v: must be a number of milliseconds > 0", minute.ms)
	}
	ex, err := openExecutor(ctx, df)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "queuekit worker: %s\n", fmt.Sprintf(format, args...))
	}
	var rs resultCounts
	work := fault.FailJobs(fail, nil)
	if *withResults {
		cat, err := df.open(ctx)
		if err != nil {
			return err
		}
		store, err := results.Open(ctx, cat)
		if err == nil {
			err = store.CreateTable(ctx)
		}
		if err != nil {
			return err
		}
		// The store wraps the work: an injected failure writes no result.
		work = rs.count(store.Work(*date, fault.FailJobs(fail, results.Sleep), nil), logf)
	}
	if *crash > 0 {
		work = crashIn(*crash, work)
	}
	began := time.Now()
	var last time.Time
	progress := func(p queuekit.Progress) {
		if time.Since(last) < 5*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(stderr, "queuekit %s; %d jobs succeeded (%.0f s)\n", p.Note, p.Done, time.Since(began).Seconds())
	}
	st, err := ex.Join(ctx, *date, lease.WorkerConfig{Slots: *slots, Name: *name, Work: work, Wait: *wait, Minute: m,
		Progress: progress, Logf: logf})
	if err != nil {
		return err
	}
	if *asJSON {
		if *withResults {
			return writeJSON(stdout, workerReport{WorkerStats: st, ResultsWritten: rs.written, ResultsRefused: rs.refused})
		}
		return writeJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "worker %s: claims won %d, lost %d; %d jobs succeeded, %d attempts failed, %d leases lost, %d late ends fenced, %d expired leases reaped\n",
		st.Name, st.Won, st.Lost, st.Finished, st.Failed, st.Dropped, st.Fenced, st.Reaped)
	if *withResults {
		fmt.Fprintf(stdout, "worker %s: %d results written, %d refused by the result store (stale token)\n", st.Name, rs.written, len(rs.refused))
	}
	return nil
}

// workerReport is `queuekit worker --json --results`: the claim counters
// and the result store's answers to this process's result writes.
type workerReport struct {
	lease.WorkerStats
	ResultsWritten int                  `json:"results_written"`
	ResultsRefused []results.StaleError `json:"results_refused"` // each write the store refused, with both tokens
}

// resultCounts counts a worker's result writes, from all its slots.
type resultCounts struct {
	mu      sync.Mutex
	written int
	refused []results.StaleError
}

// count wraps work (a results.Store.Work) to count its writes and log each
// one the store refused.
func (rc *resultCounts) count(work lease.WorkFunc, logf func(string, ...any)) lease.WorkFunc {
	return func(ctx context.Context, j lease.Job, d time.Duration) error {
		err := work(ctx, j, d)
		var stale *results.StaleError
		rc.mu.Lock()
		defer rc.mu.Unlock()
		switch {
		case errors.As(err, &stale):
			rc.refused = append(rc.refused, *stale)
			logf("job %s attempt %d: late result refused by the result store: %v", j.ID, j.Attempt, err)
		case err == nil:
			rc.written++
		}
		return err
	}
}

// crashIn wraps work so that the process kills itself with SIGKILL halfway
// through its j-th job: no deferred function runs, no write is made, exactly
// as under kill -9.
func crashIn(j int, work lease.WorkFunc) lease.WorkFunc {
	var started atomic.Int64
	return func(ctx context.Context, job lease.Job, d time.Duration) error {
		if started.Add(1) == int64(j) {
			time.Sleep(d / 2)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // never reached: SIGKILL cannot be caught
		}
		return work(ctx, job, d)
	}
}
