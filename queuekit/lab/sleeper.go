package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// QueuekitBinary builds the queuekit command from this repository (go build,
// incremental: a second call takes about a second) and returns its path, in
// the temporary directory.
func QueuekitBinary(ctx context.Context) (string, error) {
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the queuekit sources: build it with `go build -o queuekit ./queuekit/cmd/queuekit`")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("no go.mod at %s: build queuekit with `go build -o queuekit ./queuekit/cmd/queuekit` from the repository", root)
	}
	bin := filepath.Join(os.TempDir(), "queuekit-lab", "queuekit") // never in $HOME
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./queuekit/cmd/queuekit")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./queuekit/cmd/queuekit in %s: %v: %s", root, err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// SleeperConfig is the sleeping-worker demonstration.
type SleeperConfig struct {
	Lease time.Duration // the job's lease (default 1 s)
	Pause time.Duration // how long the worker is stopped (default 3 leases)
	Bin   string        // the queuekit command (default: QueuekitBinary)
}

// SleeperResult is what the demonstration read back.
type SleeperResult struct {
	JobID    string
	Lease    time.Duration
	Paused   time.Duration
	Attempts []lease.Entry     // the job's attempts, in order
	Sleeper  lease.WorkerStats // the paused process's counters (its --json)
	Refusals []string          // the paused process's log lines for its refused ends
	Ended    int               // the pool's count of ended jobs (1 job)
	Job      lease.JobState    // the job's item after the night
}

// SleeperDate is the night the demonstration runs: a date of its own, so it
// never resets a night of the workshop's catalog.
const SleeperDate = "2031-01-01"

// SleepThroughLease runs a one-job night (c = 1, the job 40 job-minutes of
// 50 ms: 2 s) with a real `queuekit worker` process, "sleeper". Once the
// sleeper holds the job and is working on it, a second worker, "rescuer",
// joins in this process and the sleeper is stopped with SIGSTOP for
// cfg.Pause, then continued with SIGCONT, as a GC pause, a closed laptop
// lid or a migrated VM would stop it. It returns the job's attempts, the
// sleeper's counters and log lines, and the job's item afterwards.
func SleepThroughLease(ctx context.Context, cat *catalog.Catalog, cfg SleeperConfig) (SleeperResult, error) {
	if cfg.Lease == 0 {
		cfg.Lease = time.Second
	}
	if cfg.Pause == 0 {
		cfg.Pause = 3 * cfg.Lease
	}
	if cfg.Bin == "" {
		bin, err := QueuekitBinary(ctx)
		if err != nil {
			return SleeperResult{}, err
		}
		cfg.Bin = bin
	}
	ex, err := lease.New(cat)
	if err != nil {
		return SleeperResult{}, err
	}
	id := "JOB-" + strings.ReplaceAll(SleeperDate, "-", "") + "-001"
	night, err := queuekit.NewNight(SleeperDate, queuekit.DefaultWindow, []queuekit.Job{{BatchDate: SleeperDate, JobID: id,
		WindowJobID: queuekit.SortKey("01:00", id), RequestedWindow: "01:00", SubmittedAt: SleeperDate + "T00:00:00Z",
		WorkloadClass: queuekit.WorkloadClasses[0], RuntimeMinutes: 40, Priority: 1, Status: "queued"}})
	if err != nil {
		return SleeperResult{}, err
	}
	lc := lease.Config{Workers: 1, Minute: 50 * time.Millisecond, Lease: cfg.Lease, MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex.Prepare(ctx, night, lc)
	if err != nil {
		return SleeperResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	coord := make(chan error, 1)
	go func() {
		if err := ex.Start(ctx, SleeperDate, runID); err != nil {
			coord <- err
			return
		}
		coord <- ex.WaitDone(ctx, SleeperDate, runID, nil)
	}()
	args := []string{"worker", "--batch-date", SleeperDate, "--slots", "1", "--name", "sleeper", "--json", "--table", cat.Table()}
	if ep := cat.Endpoint(); ep != "" {
		args = append(args, "--endpoint", ep)
	}
	cmd := exec.CommandContext(ctx, cfg.Bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		return SleeperResult{}, fmt.Errorf("start queuekit worker: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Signal(syscall.SIGCONT) }()
	// Wait until the sleeper is working on the job.
	for {
		j, err := ex.Job(ctx, SleeperDate, id)
		if err != nil {
			return SleeperResult{}, err
		}
		if j.Status == lease.Processing && j.Worker == "sleeper" {
			break
		}
		select {
		case err := <-exited:
			return SleeperResult{}, fmt.Errorf("queuekit worker exited before it held the job (%v): %s", err, strings.TrimSpace(errOut.String()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	rescuer := make(chan error, 1)
	go func() {
		_, err := ex.Join(ctx, SleeperDate, lease.WorkerConfig{Slots: 1, Name: "rescuer"})
		rescuer <- err
	}()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return SleeperResult{}, fmt.Errorf("pause the worker: %w", err)
	}
	stopped := time.Now()
	time.Sleep(cfg.Pause)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		return SleeperResult{}, fmt.Errorf("continue the worker: %w", err)
	}
	res := SleeperResult{JobID: id, Lease: cfg.Lease, Paused: time.Since(stopped)}
	if err := <-coord; err != nil {
		return res, err
	}
	if err := <-rescuer; err != nil {
		return res, fmt.Errorf("rescuer: %w", err)
	}
	if err := <-exited; err != nil {
		return res, fmt.Errorf("queuekit worker: %v: %s", err, strings.TrimSpace(errOut.String()))
	}
	if err := json.Unmarshal(out.Bytes(), &res.Sleeper); err != nil {
		return res, fmt.Errorf("queuekit worker --json: %w", err)
	}
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(l, "refused by its fencing condition") {
			res.Refusals = append(res.Refusals, l)
		}
	}
	rep, err := ex.Report(ctx, night, 1)
	if err != nil {
		return res, err
	}
	res.Attempts, res.Ended = rep.Attempts(id), rep.PoolEnded
	res.Job, err = ex.Job(ctx, SleeperDate, id)
	return res, err
}

// ShowSleeper shows the demonstration's attempts as a table and says, from
// the run's values, what happened to the sleeper's late writes.
func ShowSleeper(r SleeperResult) {
	rows := [][]string{}
	for _, a := range r.Attempts {
		// ShowTable escapes the cells (format.Table): no Markdown escapes here.
		rows = append(rows, []string{format.Int(a.Attempt), a.Worker, format.Num(a.Start), format.Num(a.Finish), a.Outcome})
	}
	ShowTable([]string{"attempt", "worker", "claimed (minute)", "released (minute)", "outcome"}, rows)
	Markdown(SleeperSummary(r))
	for _, l := range r.Refusals {
		fmt.Println(l)
	}
}

// SleeperSummary is the Markdown sentence under the demonstration's table,
// built from its values: the pause, the lease, what the fence refused (the
// sleeper's late end, or, when its first write after waking was a
// heartbeat, that heartbeat: the sleeper then drops the job and sends no
// end to refuse), and the ends the pool counted.
func SleeperSummary(r SleeperResult) string {
	s := fmt.Sprintf("The sleeper was stopped for %s s with a lease of %s s. ", format.Num(r.Paused.Seconds()), format.Num(r.Lease.Seconds()))
	switch {
	case r.Sleeper.Fenced > 0:
		s += fmt.Sprintf("Its late end was refused by the fence: **%s**, logged below. ", Plural(r.Sleeper.Fenced, "refused end", "refused ends"))
	case r.Sleeper.Dropped > 0:
		s += "This time its first write after waking was a **heartbeat**, refused by the same fencing condition: it dropped the job " +
			"and sent no end, so there was no late end to refuse (the demonstration's other outcome; run the cell again to see the refused end). "
	default:
		s += "It wrote nothing after waking that the fence had to refuse: it was not stopped past its lease (compare the pause with the lease). "
	}
	return s + fmt.Sprintf("Ends the pool counted for the job: **%s**; the job is **%s** at fencing token **%s**.",
		format.Int(r.Ended), format.EscapeMarkdown(r.Job.Status), format.Int(r.Job.Token))
}
