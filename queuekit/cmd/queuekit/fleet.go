package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
)

// fleetFlags are the flags every fleet command shares: the endpoint and
// catalog table (the fleet's table is <table>_fleet) and the leases.
type fleetFlags struct {
	df         *dynamoFlags
	leaseMS    int
	shardMS    int
	skewMS     int
	pollAll    bool
	withLeases bool
}

func addFleetFlags(fs *flag.FlagSet, leases bool) *fleetFlags {
	ff := &fleetFlags{df: addDynamoFlags(fs), withLeases: leases}
	if leases {
		fs.IntVar(&ff.leaseMS, "lease-ms", 10000, "a job's lease, ms; heartbeats every quarter")
		fs.IntVar(&ff.shardMS, "shard-lease-ms", 6000, "a shard's and a member's lease, ms; renewed and rebalanced every quarter")
		ff.addSkewFlag(fs)
		fs.BoolVar(&ff.pollAll, "poll-all", false, "every worker polls every shard, owning none (the comparison of the benchmark)")
	}
	return ff
}

// addSkewFlag adds --max-skew-ms, the bound assumed on clock offsets
// between the fleet's hosts (fleet.Options.MaxSkew).
func (ff *fleetFlags) addSkewFlag(fs *flag.FlagSet) {
	fs.IntVar(&ff.skewMS, "max-skew-ms", 1000, "the most the fleet's clocks are apart, ms: a lease read held this long past its end is taken over at once, whoever watched it (0: only after watching it unchanged for a whole lease)")
}

func (ff *fleetFlags) check() error {
	if ff.withLeases && (ff.leaseMS < 40 || ff.leaseMS > 3_600_000 || ff.shardMS < 40 || ff.shardMS > 3_600_000) {
		return usagef("--lease-ms %d, --shard-lease-ms %d: each must be 40 to 3,600,000", ff.leaseMS, ff.shardMS)
	}
	if ff.withLeases && (ff.skewMS < 0 || ff.skewMS > 3_600_000) {
		return usagef("--max-skew-ms %d: must be 0 to 3,600,000", ff.skewMS)
	}
	return nil
}

func (ff *fleetFlags) open(ctx context.Context) (*fleet.Fleet, error) {
	cat, err := ff.df.open(ctx)
	if err != nil {
		return nil, err
	}
	var opts []fleet.Option
	clock, err := fleetClock()
	if err != nil {
		return nil, err
	}
	opts = append(opts, fleet.WithClock(clock))
	if ff.withLeases {
		opts = append(opts, fleet.WithLease(time.Duration(ff.leaseMS)*time.Millisecond),
			fleet.WithShardLease(time.Duration(ff.shardMS)*time.Millisecond), fleet.WithPollAll(ff.pollAll),
			fleet.WithMaxSkew(time.Duration(ff.skewMS)*time.Millisecond))
	}
	f, err := fleet.New(cat, opts...)
	if err != nil {
		return nil, badInput(err)
	}
	return f, nil
}

// fleetAsUsage marks the fleet's input errors (a job that does not
// validate, checked before anything is written) as usage errors (exit 2);
// everything the server answers (no fleet table, a job that exists or is
// missing, a shard count other than the table's, unreachable) stays a
// runtime failure (exit 1), as main.go's exit-status contract says.
func fleetAsUsage(err error) error {
	var ie *fleet.InputError
	if errors.As(err, &ie) {
		return badInput(err)
	}
	return err
}

// checkNum checks that a number flag is finite, from 0 to max.
func checkNum(name string, v, max float64) error {
	if !(v >= 0) || math.IsInf(v, 0) || v > max {
		return usagef("--%s %v: must be a number from 0 to %v", name, v, max)
	}
	return nil
}

func runFleet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "submit":
			return runFleetSubmit(ctx, args[1:], stdout)
		case "list":
			return runFleetList(ctx, args[1:], stdout)
		case "view":
			return runFleetView(ctx, args[1:], stdout)
		case "cost":
			return inSub("fleet cost", runFleetCost(ctx, args[1:], stdout))
		case "dispatcher":
			return runFleetDispatcher(ctx, args[1:], stdout, stderr)
		case "executor":
			return runFleetExecutor(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlags("fleet")
	jobs := fs.Int("jobs", 0, "jobs to submit, N (required)")
	workers := fs.Int("workers", 0, "fleet-worker processes, W (required)")
	slots := fs.Int("slots", 0, "jobs each worker runs at once, S (required)")
	shards := fs.Int("shards", 0, "shards of the due index, K (required)")
	jobMS := fs.Float64("job-ms", -1, "how long one job's work takes, ms (required; 0: no work)")
	dueOver := fs.Float64("due-over-s", 0, "spread the jobs' scheduled times over this many seconds (0: all due now)")
	killEvery := fs.Float64("kill-every-s", 0, "SIGKILL a random worker this often and start a replacement (0: never)")
	workLog := fs.String("work-log", "", "every worker appends \"<job_id> <attempt>\" here each time a job's work finishes")
	fresh := fs.Bool("fresh", false, "start on a new table even when the last run of the same shape was interrupted (default: resume it, keeping its finished jobs)")
	asJSON := fs.Bool("json", false, `print {"jobs", "workers", "slots", "shards", "seconds", "jobs_per_second", "claims": {"won", "lost"}, "attempts", "succeeded", "fatal", "write_ceiling_per_second", "writes_per_job"}`)
	ff := addFleetFlags(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, req := range []string{"jobs", "workers", "slots", "shards", "job-ms"} {
		if !isSet(fs, req) {
			return usagef("--%s is required: e.g. queuekit fleet --jobs 2000 --workers 4 --slots 4 --shards 16 --job-ms 0", req)
		}
	}
	for _, c := range []struct {
		name string
		v    float64
		max  float64
	}{{"job-ms", *jobMS, 3_600_000}, {"due-over-s", *dueOver, 86_400}, {"kill-every-s", *killEvery, 86_400}} {
		if err := checkNum(c.name, c.v, c.max); err != nil {
			return err
		}
	}
	if err := ff.check(); err != nil {
		return err
	}
	if *workLog != "" {
		f, err := fleet.OpenWorkLog(*workLog)
		if err != nil {
			return usagef("--work-log %s: %v", *workLog, err)
		}
		_ = f.Close()
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the queuekit executable to start workers from: %w", err)
	}
	cfg := fleetrun.Config{Bin: bin, Jobs: *jobs, Workers: *workers, Slots: *slots, Shards: *shards,
		Job: time.Duration(*jobMS * float64(time.Millisecond)), DueOver: time.Duration(*dueOver * float64(time.Second)),
		KillEvery: time.Duration(*killEvery * float64(time.Second)), WorkLog: *workLog, Seed: uint64(time.Now().UnixNano()), Fresh: *fresh,
		Logf: func(format string, a ...any) { fmt.Fprintf(stderr, "queuekit fleet: %s\n", fmt.Sprintf(format, a...)) }}
	if err := cfg.WithDefaults().Validate(); err != nil {
		return badInput(err)
	}
	f, err := ff.open(ctx)
	if err != nil {
		return err
	}
	rep, err := fleetrun.Run(ctx, f, cfg)
	if err != nil {
		return fleetAsUsage(err)
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	fmt.Fprintf(stdout, "%d jobs, %d workers x %d slots, %d shards%s: %.1f s, %.0f jobs/s\n", rep.Jobs, rep.Workers, rep.Slots, rep.Shards,
		map[bool]string{true: " (every worker polls every shard)", false: " (owned shards)"}[rep.PollAll], rep.Seconds, rep.JobsPerSecond)
	fmt.Fprintf(stdout, "claims won %d, lost %d; attempts %d; succeeded %d, fatal %d; workers killed %d\n",
		rep.Claims.Won, rep.Claims.Lost, rep.Attempts, rep.Succeeded, rep.Fatal, rep.Kills)
	fmt.Fprintf(stdout, "write ceiling %.0f conditional UpdateItems/s (%d clients); %.2f writes per job (%.2f table + %.2f index write units reported)\n",
		rep.WriteCeiling, rep.Workers*rep.Slots, rep.WritesPerJob, rep.TableWUPerJob, rep.IndexWUPerJob)
	return nil
}

func runFleetWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fleet-worker")
	shards := fs.Int("shards", 0, "shards of the fleet table, K (required; must match the table's)")
	slots := fs.Int("slots", 0, "jobs this worker runs at once, S (required)")
	name := fs.String("name", "", "this worker's name (default host-pid)")
	jobMS := fs.Float64("job-ms", 0, "how long one job's work takes, ms")
	workLog := fs.String("work-log", "", "append \"<job_id> <attempt>\" here each time a job's work finishes")
	ff := addFleetFlags(fs, true)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *shards < 1 || *shards > fleet.MaxShards {
		return usagef("--shards %d: required, 1 to %d (the fleet table's K)", *shards, fleet.MaxShards)
	}
	if *slots < 1 || *slots > 1024 {
		return usagef("--slots %d: required, 1 to 1,024", *slots)
	}
	if err := checkNum("job-ms", *jobMS, 3_600_000); err != nil {
		return err
	}
	if err := ff.check(); err != nil {
		return err
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if strings.ContainsAny(*name, " \t\n") || len(*name) > 100 {
		return usagef("--name %q: 1 to 100 characters, no spaces", *name)
	}
	var logw io.Writer
	if *workLog != "" {
		lf, err := fleet.OpenWorkLog(*workLog)
		if err != nil {
			return usagef("--work-log %s: %v", *workLog, err)
		}
		defer lf.Close()
		logw = lf
	}
	f, err := ff.open(ctx)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	st, err := f.Join(ctx, fleet.WorkerConfig{Name: *name, Slots: *slots, Shards: *shards,
		Work: fleet.Sleep(time.Duration(*jobMS * float64(time.Millisecond))), WorkLog: logw,
		OnStats: func(s fleet.Stats) { mu.Lock(); _ = enc.Encode(s); mu.Unlock() }})
	if err != nil {
		return fleetAsUsage(err)
	}
	fmt.Fprintf(stderr, "queuekit fleet-worker %s: claims won %d, lost %d; %d succeeded, %d retried, %d fatal, %d fenced\n",
		st.Name, st.Won, st.Lost, st.Succeeded, st.Retried, st.Fatal, st.Fenced)
	return nil
}

func runFleetSubmit(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("fleet submit")
	user := fs.String("user", "", "user_id (required)")
	job := fs.String("job", "", "job_id (required)")
	typ := fs.String("type", "report", "job_type")
	at := fs.String("at", "", "scheduled_job_execution_time, RFC 3339 (default now)")
	in := fs.Float64("in-s", 0, "schedule the job this many seconds from now (instead of --at)")
	prio := fs.Int("priority", 0, "job_priority, 0 to 9")
	result := fs.String("result", "", "result_location (default s3://results/<user>/<job>)")
	maxRetry := fs.Int("max-retry", 3, "max_retry: retries after the first attempt")
	interval := fs.Int("interval-s", 0, "job_interval, seconds (0: one-off)")
	until := fs.String("repeat-until", "", "a recurring job's last run, RFC 3339 (default: for ever)")
	fail := fs.String("fail", "", `demonstration: every attempt's work fails: "retriable" or "fatal"`)
	create := fs.Bool("create", false, "create the fleet table if it does not exist (with --shards)")
	shards := fs.Int("shards", 16, "shards, when --create creates the table")
	asJSON := fs.Bool("json", false, "print the job as written")
	ff := addFleetFlags(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *at != "" && isSet(fs, "in-s") {
		return usagef("--at and --in-s: give one of them")
	}
	if err := checkNum("in-s", *in, 366*86400); err != nil {
		return err
	}
	when := *at
	if when == "" {
		when = time.Now().Add(time.Duration(*in * float64(time.Second))).UTC().Format(fleet.TimeLayout)
	}
	if *result == "" {
		*result = fmt.Sprintf("s3://results/%s/%s", *user, *job)
	}
	j := fleet.Job{UserID: *user, JobID: *job, JobType: *typ, ScheduledAt: when, Priority: *prio, ResultLocation: *result,
		MaxRetry: *maxRetry, IntervalS: *interval, RepeatUntil: *until, Fail: *fail}
	if err := j.Validate(); err != nil {
		return badInput(fmt.Errorf("%w (flags --user, --job, --type, --at, --priority, --max-retry, --interval-s, --repeat-until, --fail)", err))
	}
	if *shards < 1 || *shards > fleet.MaxShards {
		return usagef("--shards %d: 1 to %d", *shards, fleet.MaxShards)
	}
	f, err := ff.open(ctx)
	if err != nil {
		return err
	}
	if *create {
		if _, err := f.Shards(ctx); err != nil {
			var nf *fleet.NoFleetError
			if !errors.As(err, &nf) {
				return fleetAsUsage(err)
			}
			if err := f.Reset(ctx, *shards); err != nil {
				return fleetAsUsage(err)
			}
		}
	}
	got, err := f.SubmitJob(ctx, j)
	if err != nil {
		return fleetAsUsage(err)
	}
	if *asJSON {
		return writeJSON(stdout, got)
	}
	fmt.Fprintf(stdout, "submitted job %s of user %s: %s, due %s, shard %d\n", got.JobID, got.UserID, got.Status, got.ScheduledAt, got.Shard)
	return nil
}

func runFleetList(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("fleet list")
	user := fs.String("user", "", "user_id (required)")
	asJSON := fs.Bool("json", false, "print the jobs as a JSON array")
	ff := addFleetFlags(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *user == "" {
		return usagef("--user is required, e.g. queuekit fleet list --user user-001")
	}
	f, err := ff.open(ctx)
	if err != nil {
		return err
	}
	jobs, err := f.ListAllJobs(ctx, *user)
	if err != nil {
		return fleetAsUsage(err)
	}
	if *asJSON {
		if jobs == nil {
			jobs = []fleet.Job{}
		}
		return writeJSON(stdout, jobs)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "job_id\tjob_type\tscheduled\texecution_status\tretry\tlost\tattempts\tshard")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\n", j.JobID, j.JobType, j.ScheduledAt, j.Status, j.CurrentRetry, j.MaxRetry, j.LostAttempts, j.Attempt, j.Shard)
	}
	return tw.Flush()
}

func runFleetView(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("fleet view")
	user := fs.String("user", "", "user_id (required)")
	job := fs.String("job", "", "job_id (required)")
	asJSON := fs.Bool("json", false, "print the job as JSON")
	ff := addFleetFlags(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *user == "" || *job == "" {
		return usagef("--user and --job are required, e.g. queuekit fleet view --user user-001 --job job-0000001")
	}
	f, err := ff.open(ctx)
	if err != nil {
		return err
	}
	j, err := f.ViewJob(ctx, *user, *job)
	if err != nil {
		return fleetAsUsage(err)
	}
	if *asJSON {
		return writeJSON(stdout, j)
	}
	fmt.Fprintf(stdout, "job %s of user %s: %s (type %s, priority %d), scheduled %s, retry %d of %d (its own failures), lost attempts %d (leases run out), attempts %d, runs %d, shard %d, result %s\n",
		j.JobID, j.UserID, j.Status, j.JobType, j.Priority, j.ScheduledAt, j.CurrentRetry, j.MaxRetry, j.LostAttempts, j.Attempt, j.Runs, j.Shard, j.ResultLocation)
	if j.LastError != "" {
		fmt.Fprintf(stdout, "last error: %s\n", j.LastError)
	}
	return nil
}

// fleetClock is the fleet's wall clock: time.Now, offset by the test-only
// variable QUEUEKIT_CLOCK_OFFSET (fleet.ClockOffsetEnv, a Go duration such
// as -1s or 500ms) to give a process a skewed clock. The offset moves only
// the timestamps the process writes and compares with items (lease ends,
// due times); durations are measured on the monotonic clock either way.
func fleetClock() (func() time.Time, error) {
	v := os.Getenv(fleet.ClockOffsetEnv)
	if v == "" {
		return time.Now, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < -24*time.Hour || d > 24*time.Hour {
		return nil, usagef("%s=%q: want a Go duration within ±24h, e.g. 500ms or -2s (a test-only clock offset; unset it in production)", fleet.ClockOffsetEnv, v)
	}
	return func() time.Time { return time.Now().Add(d) }, nil
}
