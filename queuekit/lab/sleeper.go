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

// ShowSleeper shows the demonstration's attempts as a table and says what
// happened to the sleeper's late end.
func ShowSleeper(r SleeperResult) {
	md := func(s string) string { // underscores are Markdown emphasis in a notebook
		if notebook() {
			return strings.ReplaceAll(s, "_", `\_`)
		}
		return s
	}
	rows := [][]string{}
	for _, a := range r.Attempts {
		rows = append(rows, []string{fmt.Sprint(a.Attempt), a.Worker, fmt.Sprintf("%.1f", a.Start), fmt.Sprintf("%.1f", a.Finish), md(a.Outcome)})
	}
	ShowTable([]string{"attempt", "worker", "claimed (minute)", "released (minute)", "outcome"}, rows)
	Markdown(fmt.Sprintf("The sleeper was stopped for %.1f s with a lease of %.1f s. Its late ends refused by the fence: **%d**; "+
		"ends the pool counted for the job: **%d**; the job is **%s** at fencing token **%d**.",
		r.Paused.Seconds(), r.Lease.Seconds(), r.Sleeper.Fenced, r.Ended, md(r.Job.Status), r.Job.Token))
	for _, l := range r.Refusals {
		fmt.Println(l)
	}
}
