package leaselab

import (
	"bytes"
	"cmp"
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
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/results"
)

// QueuekitBinary builds the queuekit command from this repository (go build,
// incremental: a second call takes about a second) and returns its path, in
// the temporary directory.
func QueuekitBinary(ctx context.Context) (string, error) {
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the queuekit sources: build it with `go build -o queuekit ./queuekit/cmd/queuekit`")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(here), "..", "..", ".."))
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

// MustQueuekitBinary is QueuekitBinary for a notebook cell: the path of the
// queuekit command built from this repository, or the cell stops with the
// build's error in one line.
func MustQueuekitBinary() string {
	bin, err := QueuekitBinary(context.Background())
	lab.Stop(err)
	return bin
}

// SleeperConfig is the sleeping-worker demonstration.
type SleeperConfig struct {
	Lease time.Duration // the job's lease (default 1 s)
	// Pause is how long the worker is stopped at least (default 3 leases);
	// from a lease on, it stays stopped until the rescuer's result is stored.
	Pause time.Duration
	Bin   string // the queuekit command (default: QueuekitBinary)
}

// SleeperResult is what the demonstration read back.
type SleeperResult struct {
	JobID    string
	Lease    time.Duration
	Paused   time.Duration
	Attempts []lease.Entry     // the job's attempts, in order
	Sleeper  lease.WorkerStats // the paused process's counters (its --json)
	Refusals []string          // the paused process's log lines for its refused ends and result writes
	Ended    int               // the pool's count of ended jobs (1 job)
	Job      lease.JobState    // the job's item after the night
	// The result store (queuekit worker --results): the result read back
	// from its table after the night (Stored, false if none), and the
	// sleeper's result writes the store refused, as the sleeper reported
	// them, each naming its token and the newer one the store held.
	Stored        results.Result
	StoredOK      bool
	ResultRefused []results.StaleError
	ResultWritten int // the sleeper's result writes the store accepted
}

// sleeperJSON is `queuekit worker --json --results`.
type sleeperJSON struct {
	lease.WorkerStats
	ResultsWritten int                  `json:"results_written"`
	ResultsRefused []results.StaleError `json:"results_refused"`
}

// SleeperDate is the night the demonstration runs: a date of its own, so it
// never resets a night of the workshop's catalog.
const SleeperDate = "2031-01-01"

// SleepThroughLease runs a one-job night (c = 1, the job 40 job-minutes of
// 50 ms: 2 s) with a real `queuekit worker` process, "sleeper". Once the
// sleeper holds the job and is working on it, a second worker, "rescuer",
// joins in this process and the sleeper is stopped with SIGSTOP for
// cfg.Pause, then continued with SIGCONT, as a GC pause, a closed laptop
// lid or a migrated VM would stop it; if by then the job was taken from
// it, it stays stopped until the rescuer's result is in the result store,
// as in Kleppmann's figure (the old holder wakes after the new one wrote).
// Both workers write the job's result through results.Store under their
// attempt's token (the sleeper with --results): the sleeper's work counts
// as done once its time has passed, so it sends its late result whatever
// its lease, and the store decides. It returns the job's attempts, the
// sleeper's counters and log lines, the job's item afterwards and the
// result store's item read back.
func SleepThroughLease(ctx context.Context, cat *catalog.Catalog, cfg SleeperConfig) (SleeperResult, error) {
	cfg, err := cfg.withDefaults(ctx)
	if err != nil {
		return SleeperResult{}, err
	}
	d, err := prepareSleeperNight(ctx, cat, cfg)
	if err != nil {
		return SleeperResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	coord := make(chan error, 1)
	go func() {
		if err := d.ex.Start(ctx, SleeperDate, d.runID); err != nil {
			coord <- err
			return
		}
		coord <- d.ex.WaitDone(ctx, SleeperDate, d.runID, nil)
	}()
	p, err := startSleeper(ctx, cat, cfg.Bin)
	if err != nil {
		return SleeperResult{}, err
	}
	defer func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }()
	if err := d.untilInWork(ctx, p); err != nil {
		return SleeperResult{}, err
	}
	rescuer := make(chan error, 1)
	go func() {
		_, err := d.ex.Join(ctx, SleeperDate, lease.WorkerConfig{Slots: 1, Name: "rescuer", Work: d.store.Work(SleeperDate, nil, nil)})
		rescuer <- err
	}()
	paused, err := d.pause(ctx, p, cfg)
	if err != nil {
		return SleeperResult{}, err
	}
	res := SleeperResult{JobID: d.id, Lease: cfg.Lease, Paused: paused}
	if err := <-coord; err != nil {
		return res, err
	}
	if err := <-rescuer; err != nil {
		return res, fmt.Errorf("rescuer: %w", err)
	}
	if err := p.read(&res); err != nil {
		return res, err
	}
	return res, d.readBack(ctx, &res)
}

// withDefaults fills the demonstration's defaults: a lease of a second, a
// pause of three leases, the queuekit command built from this module.
func (cfg SleeperConfig) withDefaults(ctx context.Context) (SleeperConfig, error) {
	cfg.Lease = cmp.Or(cfg.Lease, time.Second)
	cfg.Pause = cmp.Or(cfg.Pause, 3*cfg.Lease)
	if cfg.Bin == "" {
		bin, err := QueuekitBinary(ctx)
		if err != nil {
			return cfg, err
		}
		cfg.Bin = bin
	}
	return cfg, nil
}

// sleeperNight is the demonstration's one-job night, prepared for a run,
// and the result store both workers write to.
type sleeperNight struct {
	ex    *lease.Executor
	store *results.Store
	night queuekit.Night
	id    string // the job
	runID string
}

// prepareSleeperNight prepares the one-job night (c = 1, 40 job-minutes of
// 50 ms) and the result store's table.
func prepareSleeperNight(ctx context.Context, cat *catalog.Catalog, cfg SleeperConfig) (sleeperNight, error) {
	ex, err := lease.New(cat)
	if err != nil {
		return sleeperNight{}, err
	}
	id := "JOB-" + strings.ReplaceAll(SleeperDate, "-", "") + "-001"
	night, err := queuekit.NewNight(SleeperDate, queuekit.DefaultWindow, []queuekit.Job{{BatchDate: SleeperDate, JobID: id,
		WindowJobID: queuekit.SortKey("01:00", id), RequestedWindow: "01:00", SubmittedAt: SleeperDate + "T00:00:00Z",
		WorkloadClass: queuekit.WorkloadClasses[0], RuntimeMinutes: 40, Priority: 1, Status: "queued"}})
	if err != nil {
		return sleeperNight{}, err
	}
	store, err := results.Open(ctx, cat)
	if err == nil {
		err = store.CreateTable(ctx)
	}
	if err != nil {
		return sleeperNight{}, err
	}
	lc := lease.Config{Workers: 1, Minute: 50 * time.Millisecond, Lease: cfg.Lease, MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex.Prepare(ctx, night, lc)
	if err != nil {
		return sleeperNight{}, err
	}
	return sleeperNight{ex: ex, store: store, night: night, id: id, runID: runID}, nil
}

// sleeperProc is the sleeper: a `queuekit worker --json --results` process.
type sleeperProc struct {
	cmd         *exec.Cmd
	out, errOut bytes.Buffer
	exited      chan error
}

// startSleeper starts the sleeper process on the catalog's table.
func startSleeper(ctx context.Context, cat *catalog.Catalog, bin string) (*sleeperProc, error) {
	args := []string{"worker", "--batch-date", SleeperDate, "--slots", "1", "--name", "sleeper", "--json", "--results", "--table", cat.Table()}
	if ep := cat.Endpoint(); ep != "" {
		args = append(args, "--endpoint", ep)
	}
	p := &sleeperProc{cmd: exec.CommandContext(ctx, bin, args...), exited: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start queuekit worker: %w", err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	return p, nil
}

// untilInWork waits until the sleeper is working on the job: PROCESSING,
// and two renewals landed after the start (heartbeats every quarter
// lease). A stop right after the start could catch the worker before its
// work began: it would wake with its lease gone and its work not done, and
// send no result for the store to refuse.
func (d sleeperNight) untilInWork(ctx context.Context, p *sleeperProc) error {
	var untils []int64
	for len(untils) < 3 {
		j, err := d.ex.Job(ctx, SleeperDate, d.id)
		if err != nil {
			return err
		}
		if j.Status == queuekit.StatusProcessing && j.Worker == "sleeper" &&
			(len(untils) == 0 || j.LeaseUntilMS != untils[len(untils)-1]) {
			untils = append(untils, j.LeaseUntilMS)
			continue
		}
		select {
		case err := <-p.exited:
			return fmt.Errorf("queuekit worker exited before it held the job (%v): %s", err, strings.TrimSpace(p.errOut.String()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// pause stops the sleeper (SIGSTOP) for cfg.Pause, and on until the
// rescuer's result is stored when the pause outlasts the lease, then
// continues it (SIGCONT); it returns how long the sleeper was stopped.
func (d sleeperNight) pause(ctx context.Context, p *sleeperProc, cfg SleeperConfig) (time.Duration, error) {
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return 0, fmt.Errorf("pause the worker: %w", err)
	}
	stopped := time.Now()
	time.Sleep(cfg.Pause)
	if err := untilRescued(ctx, d.ex, d.store, d.id, d.runID, cfg.Pause >= cfg.Lease); err != nil {
		return 0, err
	}
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		return 0, fmt.Errorf("continue the worker: %w", err)
	}
	return time.Since(stopped), nil
}

// read waits for the sleeper to exit and reads its --json counters and its
// log lines for refused ends and result writes into res.
func (p *sleeperProc) read(res *SleeperResult) error {
	if err := <-p.exited; err != nil {
		return fmt.Errorf("queuekit worker: %v: %s", err, strings.TrimSpace(p.errOut.String()))
	}
	var js sleeperJSON
	if err := json.Unmarshal(p.out.Bytes(), &js); err != nil {
		return fmt.Errorf("queuekit worker --json: %w", err)
	}
	res.Sleeper, res.ResultWritten, res.ResultRefused = js.WorkerStats, js.ResultsWritten, js.ResultsRefused
	for _, l := range strings.Split(p.errOut.String(), "\n") {
		if strings.Contains(l, "refused by its fencing condition") || strings.Contains(l, "refused by the result store") {
			res.Refusals = append(res.Refusals, l)
		}
	}
	return nil
}

// readBack reads the night's attempts, the job's item and the result
// store's item into res.
func (d sleeperNight) readBack(ctx context.Context, res *SleeperResult) error {
	rep, err := d.ex.Report(ctx, d.night, 1)
	if err != nil {
		return err
	}
	res.Attempts, res.Ended = rep.Attempts(d.id), rep.PoolEnded
	if res.Job, err = d.ex.Job(ctx, SleeperDate, d.id); err != nil {
		return err
	}
	res.Stored, res.StoredOK, err = d.store.Get(ctx, SleeperDate, d.id)
	return err
}

// untilRescued waits, while the sleeper is stopped, until the result of
// another worker of this run is in the store, unless the job is still the
// sleeper's and its lease may not have run out (expired is false: the
// pause was shorter than a lease, which the sleeper renewed last before
// it was stopped, so it may still hold it).
func untilRescued(ctx context.Context, ex *lease.Executor, store *results.Store, id, runID string, expired bool) error {
	for {
		j, err := ex.Job(ctx, SleeperDate, id)
		if err != nil {
			return err
		}
		if !expired && j.Worker == "sleeper" && j.Attempt == 1 {
			return nil
		}
		r, ok, err := store.Get(ctx, SleeperDate, id)
		if err != nil {
			return err
		}
		if ok && r.Run == runID && r.Worker != "sleeper" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the rescuer's result of %s: %w", id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ShowSleeper shows the demonstration's attempts as a table and says, from
// the run's values, what happened to the sleeper's late writes.
func ShowSleeper(r SleeperResult) {
	rows := [][]string{}
	for _, a := range r.Attempts {
		// ShowTable escapes the cells (format.Table): no Markdown escapes here.
		rows = append(rows, []string{format.Int(a.Attempt), a.Worker, format.Num(a.Start), format.Num(a.Finish), string(a.Outcome)})
	}
	lab.ShowTable([]string{"attempt", "worker", "claimed (minute)", "released (minute)", "outcome"}, rows)
	lab.Markdown(SleeperSummary(r))
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
		s += fmt.Sprintf("Its late end was refused by the fence: **%s**, logged below. ", lab.Plural(r.Sleeper.Fenced, "refused end", "refused ends"))
	case r.Sleeper.Dropped > 0:
		s += "This time its first write after waking was a **heartbeat**, refused by the same fencing condition: it dropped the job " +
			"and sent no end, so there was no late end to refuse (the demonstration's other outcome; run the cell again to see the refused end). "
	default:
		s += "It wrote nothing after waking that the fence had to refuse: it was not stopped past its lease (compare the pause with the lease). "
	}
	return s + fmt.Sprintf("Ends the pool counted for the job: **%s**; the job is **%s** at fencing token **%s**.",
		format.Int(r.Ended), format.EscapeMarkdown(string(r.Job.Status)), format.Int(r.Job.Token))
}

// ShowSleeperResults shows the demonstration's result writes as a table,
// one row a write: the result the store holds, read back from its table
// after the night, and each write of the sleeper the store refused (as the
// sleeper reported it, with the store's token at the time), then a
// sentence built from the tokens.
func ShowSleeperResults(r SleeperResult) {
	run, fence := func(t int64) string { return format.Int(t >> 32) }, func(t int64) string { return format.Int(t & (1<<32 - 1)) }
	rows := [][]string{}
	if r.StoredOK {
		rows = append(rows, []string{"held by the store (read back)", r.Stored.Worker, format.Int(r.Stored.Attempt),
			format.Int(r.Stored.Token), run(r.Stored.Token), fence(r.Stored.Token)})
	}
	for _, x := range r.ResultRefused {
		rows = append(rows, []string{"refused by the store", x.RefusedWorker, format.Int(x.RefusedAttempt), format.Int(x.Token), run(x.Token), fence(x.Token)})
	}
	lab.ShowTable([]string{"result write", "worker", "attempt", "token", "run", "fence token"}, rows)
	lab.Markdown(SleeperResultsSummary(r))
}

// SleeperResultsSummary says, from the demonstration's values, what the
// result store decided about the sleeper's late result.
func SleeperResultsSummary(r SleeperResult) string {
	if !r.StoredOK {
		return "The result store holds no result for the job: the night did not finish it."
	}
	held := fmt.Sprintf("The store holds **%s**'s result, token %s. ", format.EscapeMarkdown(r.Stored.Worker), format.Int(r.Stored.Token))
	switch {
	case len(r.ResultRefused) > 0:
		x := r.ResultRefused[0]
		return held + fmt.Sprintf("The sleeper woke up with its work done and sent its result with token %s; the store refused it because it held token %s, "+
			"newer by %s: the same run, a later claim. The sleeper still believed it held the job; the store did not ask.",
			format.Int(x.Token), format.Int(x.Stored), format.Int(x.Stored-x.Token))
	case r.ResultWritten > 0:
		return held + "The sleeper's own result was accepted: nobody had written a result with a newer token when it sent it."
	}
	return held + "The sleeper sent no result."
}
