// Package fleetrun stages a fleet run as the `queuekit fleet` command, the
// claim-rate benchmark (package claimrate), notebook 10 and the fleet's
// process tests do: it submits N jobs, starts W `queuekit fleet-worker`
// processes of S slots, kills and replaces them when asked, waits until
// every job has ended, stops the workers and reads the table back, and
// resumes a run whose coordinator died. It measures; the protocol the
// workers follow is package fleet's, and this package uses only fleet's
// exported API (submit, list, reset, the workers' Stats, the due index's
// count).
package fleetrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
)

// Config is one fleet run (queuekit fleet): N jobs, W worker processes of
// S slots, K shards.
type Config struct {
	// Bin is the queuekit executable whose fleet-worker command the run
	// starts (os.Executable() for the CLI; a built binary in tests).
	Bin     string
	Jobs    int
	Workers int
	Slots   int
	Shards  int
	// Job is how long one job's work takes.
	Job time.Duration
	// DueOver spreads the jobs' scheduled times evenly over this span from
	// the start (0: all due now).
	DueOver time.Duration
	// KillEvery, when set, SIGKILLs a random worker this often and starts a
	// replacement.
	KillEvery time.Duration
	// WorkLog is passed to every worker (--work-log).
	WorkLog string
	// Users spreads the jobs over this many user_ids (default 50).
	Users int
	// MaxRetry of every job (default 3).
	MaxRetry int
	// Ceiling is how long the write ceiling is measured (default 3 s; < 0
	// skips it).
	Ceiling time.Duration
	// Logf, when set, gets a line per step (table created, jobs submitted,
	// workers started or killed, jobs ended so far).
	Logf func(format string, a ...any)
	// Seed seeds the choice of workers to kill.
	Seed uint64
	// Fresh starts the run on a new table even when the previous run of
	// the same shape was interrupted (its coordinator died): without it,
	// such a run is resumed, its finished jobs kept, not run again.
	Fresh bool
	// ClockOffsets, TEST-ONLY, skews the worker processes' wall clocks:
	// the i-th worker started gets ClockOffsets[i mod len] in
	// fleet.ClockOffsetEnv.
	ClockOffsets []time.Duration
}

// Report is what a run measured. Its JSON keys are the CLI's contract.
type Report struct {
	Jobs          int     `json:"jobs"`
	Workers       int     `json:"workers"`
	Slots         int     `json:"slots"`
	Shards        int     `json:"shards"`
	Seconds       float64 `json:"seconds"`
	JobsPerSecond float64 `json:"jobs_per_second"`
	Claims        struct {
		Won  int `json:"won"`
		Lost int `json:"lost"`
	} `json:"claims"`
	Attempts     int     `json:"attempts"`
	Succeeded    int     `json:"succeeded"`
	Fatal        int     `json:"fatal"`
	WriteCeiling float64 `json:"write_ceiling_per_second"`
	WritesPerJob float64 `json:"writes_per_job"`

	// Beyond the contract (not printed by --json).
	TableWUPerJob float64       `json:"-"` // write units reported by ReturnConsumedCapacity, table
	IndexWUPerJob float64       `json:"-"` // and the due index
	Kills         int           `json:"-"` // workers SIGKILLed
	PerWorker     []fleet.Stats `json:"-"` // last counters each worker process reported
	PollAll       bool          `json:"-"`

	// Resumed says that the run continued an interrupted one (Config.Fresh
	// unset): KeptFinished jobs had ended before and were kept, not run
	// again; the others were continued (Submitted: the ones never written).
	Resumed      bool `json:"resumed"`
	KeptFinished int  `json:"kept_finished"`
	Submitted    int  `json:"submitted"`
}

// Lifecycle is notebook 08's per-job model (capacity.Lifecycle) with the
// writes this run measured: table and index write units per job as
// ReturnConsumedCapacity reported them, rounded to whole writes (items are
// under 1 KB, so a write is a unit). Reads keep the model's defaults.
//
// The fleet's lifecycle differs from notebook 08's on purpose: the table
// gets 3 writes (submit, claim, end; PROCESSING is written by the first
// heartbeat, so a job shorter than a heartbeat never writes it), not 4; the
// index gets 4, not 2, because the claim moves the job's index key (due_at
// becomes the lease's end: 2 index writes) instead of removing it, which
// lets an expired lease make the job claimable again without a reaper or a
// second index; the end removes it (1), the submit puts it (1).
func (r Report) Lifecycle() capacity.Lifecycle {
	l := capacity.DefaultLifecycle
	l.StateWrites = int(math.Round(r.TableWUPerJob))
	l.IndexWrites = int(math.Round(r.IndexWUPerJob))
	l.Heartbeats = 0
	return l
}

// WithDefaults fills in the defaults of zero fields: 50 users, max retry 3,
// a 3 s write-ceiling measurement.
func (c Config) WithDefaults() Config {
	c.Users = cmp.Or(c.Users, 50)
	c.MaxRetry = cmp.Or(c.MaxRetry, 3)
	c.Ceiling = cmp.Or(c.Ceiling, 3*time.Second)
	return c
}

// Validate checks a run's configuration before anything is written.
func (c Config) Validate() error {
	switch {
	case c.Jobs < 1 || c.Jobs > 10_000_000:
		return fmt.Errorf("--jobs %d: want 1 to 10,000,000", c.Jobs)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("--workers %d: want 1 to 256 processes", c.Workers)
	case c.Slots < 1 || c.Slots > 1024:
		return fmt.Errorf("--slots %d: want 1 to 1,024 per worker", c.Slots)
	case c.Shards < 1 || c.Shards > fleet.MaxShards:
		return fmt.Errorf("--shards %d: want 1 to %d", c.Shards, fleet.MaxShards)
	case c.Job < 0 || c.Job > time.Hour:
		return fmt.Errorf("--job-ms %d: want 0 to 3,600,000", c.Job.Milliseconds())
	case c.DueOver < 0 || c.DueOver > 24*time.Hour:
		return fmt.Errorf("--due-over-s %.0f: want 0 to 86,400", c.DueOver.Seconds())
	case c.KillEvery < 0 || (c.KillEvery > 0 && c.KillEvery < 100*time.Millisecond):
		return fmt.Errorf("--kill-every-s %.3f: want 0 (never) or at least 0.1", c.KillEvery.Seconds())
	case c.Users < 1 || c.MaxRetry < 0:
		return fmt.Errorf("users %d, max retry %d: want >= 1 and >= 0", c.Users, c.MaxRetry)
	case c.Bin == "":
		return errors.New("fleet run: no queuekit executable to start workers from")
	}
	return nil
}

// run is one Run in progress.
type run struct {
	f     *fleet.Fleet
	cfg   Config
	rep   Report
	shape runItem
}

func (r *run) say(format string, a ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, a...)
	}
}

// Run creates the fleet table afresh (or resumes the interrupted run of the
// same shape), submits the jobs, measures the write ceiling, starts the
// worker processes, kills and replaces them when asked, waits until every
// job has ended, stops the workers and reads the table back.
func Run(ctx context.Context, f *fleet.Fleet, cfg Config) (Report, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	r := &run{f: f, cfg: cfg,
		rep:   Report{Jobs: cfg.Jobs, Workers: cfg.Workers, Slots: cfg.Slots, Shards: cfg.Shards, PollAll: f.Options().PollAll},
		shape: runItem{Jobs: cfg.Jobs, Users: cfg.Users, Shards: cfg.Shards, MaxRetry: cfg.MaxRetry, State: "running"}}
	if err := r.openTable(ctx); err != nil {
		return r.rep, err
	}
	if cfg.Ceiling > 0 {
		r.say("measuring the write ceiling: %d clients for %s", cfg.Workers*cfg.Slots, cfg.Ceiling)
		c, err := WriteCeiling(ctx, f, cfg.Workers*cfg.Slots, cfg.Ceiling)
		if err != nil {
			return r.rep, err
		}
		r.rep.WriteCeiling = c
	}
	sub, err := r.submit(ctx)
	if err != nil {
		return r.rep, err
	}
	ws := &workers{f: f, cfg: cfg}
	defer ws.stopAll()
	elapsed, err := r.untilAllEnded(ctx, ws)
	if err != nil {
		return r.rep, err
	}
	ws.stopAll()
	r.shape.State = "done"
	if err := putRun(ctx, f, r.shape); err != nil {
		return r.rep, err
	}
	r.tally(elapsed, sub, ws.reports())
	r.say("reading the jobs back")
	return r.rep, r.readBack(ctx)
}

// openTable resumes the interrupted run of the same shape, or creates the
// table afresh, and records the run's shape (META/RUN) on it.
func (r *run) openTable(ctx context.Context) error {
	if !r.cfg.Fresh {
		last, ok, err := lastRun(ctx, r.f)
		if err != nil {
			return err
		}
		r.rep.Resumed = ok && last == r.shape // the same run, interrupted
	}
	if r.rep.Resumed {
		r.say("resuming the interrupted run on %s: finished jobs are kept (--fresh starts afresh)", r.f.Table())
	} else {
		if err := r.f.Reset(ctx, r.cfg.Shards); err != nil {
			return err
		}
		r.say("created table %s with %d shards", r.f.Table(), r.cfg.Shards)
	}
	return putRun(ctx, r.f, r.shape)
}

// submit writes the run's jobs (on a resumed run, only those never
// written).
func (r *run) submit(ctx context.Context) (fleet.SubmitReport, error) {
	jobs := r.jobs(r.f.Options().Now())
	if r.rep.Resumed {
		var err error
		if jobs, err = r.unwritten(ctx, jobs); err != nil {
			return fleet.SubmitReport{}, err
		}
	}
	r.rep.Submitted = len(jobs)
	r.say("submitting %d jobs", len(jobs))
	if len(jobs) == 0 {
		return fleet.SubmitReport{}, nil
	}
	return r.f.SubmitJobs(ctx, jobs)
}

// jobs are the run's jobs: job-0000001 onwards, spread over the users and
// three priorities, due from start over DueOver.
func (r *run) jobs(start time.Time) []fleet.Job {
	cfg := r.cfg
	jobs := make([]fleet.Job, cfg.Jobs)
	for i := range jobs {
		at := start
		if cfg.DueOver > 0 {
			at = start.Add(time.Duration(float64(cfg.DueOver) * float64(i) / float64(cfg.Jobs)))
		}
		jobs[i] = fleet.Job{UserID: userID(i % cfg.Users), JobID: fmt.Sprintf("job-%07d", i+1), JobType: "report",
			ScheduledAt: at.UTC().Format(fleet.TimeLayout), Priority: i % 3, ResultLocation: fmt.Sprintf("s3://results/job-%07d", i+1),
			MaxRetry: cfg.MaxRetry}
	}
	return jobs
}

func userID(u int) string { return fmt.Sprintf("user-%03d", u) }

// unwritten keeps the jobs the interrupted run never wrote, and counts the
// written ones that had finished (KeptFinished).
func (r *run) unwritten(ctx context.Context, jobs []fleet.Job) ([]fleet.Job, error) {
	have := map[string]bool{}
	err := r.eachJob(ctx, func(j fleet.Job) {
		have[j.UserID+"/"+j.JobID] = true
		if j.Status == queuekit.StatusSuccess || j.Status == queuekit.StatusFatalFailure {
			r.rep.KeptFinished++
		}
	})
	if err != nil {
		return nil, err
	}
	jobs = slices.DeleteFunc(jobs, func(j fleet.Job) bool { return have[j.UserID+"/"+j.JobID] })
	r.say("%d jobs finished before are kept, %d never written are submitted", r.rep.KeptFinished, len(jobs))
	return jobs, nil
}

// eachJob calls fn for every job of the run's users (listAllJobs per user).
func (r *run) eachJob(ctx context.Context, fn func(fleet.Job)) error {
	for u := range r.cfg.Users {
		// Reads, safe to send again: ridden out as the count is.
		o := r.f.DB().Outage(r.f.RideOut(), fmt.Sprintf("the fleet coordinator's read of %s's jobs on %s", userID(u), r.f.Table()),
			"the jobs are in the table; check the network to DynamoDB, then run the same fleet again (it resumes the table)")
		var js []fleet.Job
		err := o.Do(ctx, func(ctx context.Context) (err error) {
			js, err = r.f.ListAllJobs(ctx, userID(u))
			return err
		})
		if err != nil {
			return err
		}
		for _, j := range js {
			fn(j)
		}
	}
	return nil
}

// untilAllEnded starts the workers and waits until no job is left in the
// due index, killing and replacing a worker every KillEvery. It returns
// the time from the first worker's start.
func (r *run) untilAllEnded(ctx context.Context, ws *workers) (time.Duration, error) {
	r.say("starting %d fleet-worker processes of %d slots", r.cfg.Workers, r.cfg.Slots)
	began := time.Now()
	if err := ws.startAll(r.cfg.Workers); err != nil {
		return 0, err
	}
	var killTick <-chan time.Time
	if r.cfg.KillEvery > 0 {
		t := time.NewTicker(r.cfg.KillEvery)
		defer t.Stop()
		killTick = t.C
	}
	check := time.NewTicker(500 * time.Millisecond)
	defer check.Stop()
	lastSay, lastCount := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-killTick:
			victim, p, err := ws.killOne()
			if err != nil {
				return 0, err
			}
			r.rep.Kills++
			r.say("killed %s (SIGKILL), started %s", victim, p)
			continue
		case <-check.C:
		}
		if err := ws.exitedOnItsOwn(); err != nil {
			return 0, err
		}
		// The workers' own counts say when the end is near; the index (a
		// COUNT Query per shard, which reads every unfinished job's index
		// entry) confirms it, and is read every 5 s regardless, since a
		// killed worker's last counts are lost. Reading it every half
		// second would cost DynamoDB Local more than the workers do.
		if ws.ended() < r.cfg.Jobs && time.Since(lastCount) < 5*time.Second {
			continue
		}
		lastCount = time.Now()
		left, err := r.f.Unfinished(ctx, r.cfg.Shards)
		if err != nil {
			return 0, err
		}
		if time.Since(lastSay) > 2*time.Second {
			lastSay = time.Now()
			r.say("%d of %d jobs ended (%.0f s)", r.cfg.Jobs-left, r.cfg.Jobs, time.Since(began).Seconds())
		}
		if left == 0 {
			return time.Since(began), nil
		}
	}
}

// tally fills in the rates and the writes per job: one write per job
// submitted (a BatchWriteItem carries 25 puts; each is one write, as
// SubmitJob's PutItem), then every write the workers sent.
func (r *run) tally(elapsed time.Duration, sub fleet.SubmitReport, last []fleet.Stats) {
	rep := &r.rep
	rep.Seconds = elapsed.Seconds()
	rep.JobsPerSecond = float64(r.cfg.Jobs) / rep.Seconds
	writes := float64(rep.Submitted)
	tableWU, indexWU := sub.WriteUnits-sub.IndexWriteUnits, sub.IndexWriteUnits
	for _, st := range last {
		rep.PerWorker = append(rep.PerWorker, st)
		rep.Claims.Lost += st.Lost // as last reported: a killed worker's last second is missing
		writes += float64(st.Writes)
		tableWU += st.TableWU
		indexWU += st.IndexWU
	}
	rep.WritesPerJob = writes / float64(r.cfg.Jobs)
	rep.TableWUPerJob = tableWU / float64(r.cfg.Jobs)
	rep.IndexWUPerJob = indexWU / float64(r.cfg.Jobs)
}

// readBack counts attempts, claims won and outcomes from the jobs as the
// table holds them.
func (r *run) readBack(ctx context.Context) error {
	return r.eachJob(ctx, func(j fleet.Job) {
		r.rep.Attempts += j.Attempt
		r.rep.Claims.Won += j.Attempt // every attempt is a claim that won, read from the table
		switch j.Status {
		case queuekit.StatusSuccess:
			r.rep.Succeeded++
		case queuekit.StatusFatalFailure:
			r.rep.Fatal++
		}
	})
}
