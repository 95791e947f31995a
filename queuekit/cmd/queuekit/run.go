package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/fault"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// runJSON is run --json.
type runJSON struct {
	BatchDate    string        `json:"batch_date"`
	Workers      int           `json:"workers"`
	Policy       string        `json:"policy"`
	Realised     sim.Metrics   `json:"realised"`
	Forecast     sim.Metrics   `json:"forecast"`
	Claims       claimsJSON    `json:"claims"`
	Retries      int           `json:"retries"`
	LostAttempts int           `json:"lost_attempts"`
	DeadLettered int           `json:"dead_lettered"`
	Schedule     []lease.Entry `json:"schedule"`
	// The write units DynamoDB reported for the workers' writes, per job
	// (ReturnConsumedCapacity INDEXES): the table's and the indexes'.
	TableWUPerJob float64 `json:"table_write_units_per_job"`
	IndexWUPerJob float64 `json:"index_write_units_per_job"`
}

type claimsJSON struct {
	Won  int `json:"won"`
	Lost int `json:"lost"`
}

// parsePolicy accepts the simulator's policy names: barrier, easy (EASY
// backfilling) with backfill as its alias, and conservative (conservative
// backfilling); the executor enforces each of them through DynamoDB.
func parsePolicy(s string) (sim.Policy, error) {
	p, err := sim.ParsePolicy(s)
	if err != nil {
		return "", usagef("--policy %q: use barrier, easy or conservative (backfill is an alias of easy)", s)
	}
	return p, nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run")
	date := fs.String("batch-date", "", "the night to run (YYYY-MM-DD), e.g. 2026-05-13 (required)")
	workers := fs.Int("workers", 0, fmt.Sprintf("slots in the pool, N, 1 to %d (required; the pool is one DynamoDB item of at most 400 KB)", lease.MaxWorkers))
	slots := fs.Int("slots", 0, "slots this process provides, 0..N (default: all N); queuekit worker processes provide the rest")
	policy := fs.String("policy", "barrier", "dispatch policy: barrier, easy (EASY backfilling; backfill is an alias) or conservative (conservative backfilling)")
	minute := addMinuteFlag(fs, lease.DefaultMinute.Seconds()*1000)
	pollMS := fs.Int("poll-ms", 0, "how often an idle worker reads the pool, ms (default minute/4, 10..1000)")
	leaseMS := fs.Int("lease-ms", 0, "lease of a claimed job, ms (default 2000, at least 8 polls); heartbeats every quarter")
	maxRetry := fs.Int("max-retry", lease.DefaultMaxRetry, fmt.Sprintf("retries after the first attempt before FATAL_FAILURE, 0 to %d", maxRetries))
	maxLost := fs.Int("max-lost", lease.DefaultMaxLost, fmt.Sprintf("attempts a job may lose to expired leases (a worker killed, paused, cut off; not its failures) before FATAL_FAILURE, 1 to %d", maxRetries))
	var fail failFlag
	fs.Var(&fail, "fail-job", "job id(s) whose work always fails, comma separated (demonstrates retries and dead letters)")
	asJSON := fs.Bool("json", false, `print {"batch_date", "workers", "policy", "realised", "forecast", "claims", "retries", "lost_attempts", "dead_lettered", "schedule", "table_write_units_per_job", "index_write_units_per_job"}`)
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
	// The upper bound is the pool item's (lease.MaxWorkers), checked with
	// its reason by Config.Validate before anything is written.
	if *workers < 1 {
		return usagef("--workers %d: want 1 to %d workers", *workers, lease.MaxWorkers)
	}
	if !isSet(fs, "slots") {
		*slots = *workers
	}
	if *slots < 0 || *slots > *workers {
		return usagef("--slots %d: this process provides 0 to %d (--workers) of the pool's slots", *slots, *workers)
	}
	pol, err := parsePolicy(*policy)
	if err != nil {
		return err
	}
	m, err := minute.duration()
	if err != nil {
		return err
	}
	if m <= 0 {
		return usagef("--minute-ms %v: must be a number of milliseconds > 0", minute.ms)
	}
	if *maxRetry > maxRetries {
		return usagef("--max-retry %d: want 0 to %d retries", *maxRetry, maxRetries)
	}
	if *maxLost < 1 || *maxLost > maxRetries {
		return usagef("--max-lost %d: want 1 to %d lost attempts", *maxLost, maxRetries)
	}
	if *pollMS > 60_000 || *leaseMS > 3_600_000 {
		return usagef("--poll-ms %d, --lease-ms %d: want a poll of at most 60000 ms and a lease of at most 3600000 ms (an hour)", *pollMS, *leaseMS)
	}
	if *pollMS < 0 || *leaseMS < 0 || *maxRetry < 0 {
		return usagef("--poll-ms %d, --lease-ms %d, --max-retry %d: each must be >= 0 (poll and lease 0: the default; max-retry 0: no retry)", *pollMS, *leaseMS, *maxRetry)
	}
	cfg := lease.Config{Workers: *workers, Policy: pol, Minute: m, Poll: time.Duration(*pollMS) * time.Millisecond,
		Lease: time.Duration(*leaseMS) * time.Millisecond, MaxRetry: *maxRetry, MaxLost: *maxLost}
	if err := cfg.WithDefaults().Validate(); err != nil {
		return badInput(err)
	}
	ex, err := openExecutor(ctx, df)
	if err != nil {
		return err
	}
	n, err := ex.Night(ctx, *date)
	if err != nil {
		return err
	}
	began := time.Now()
	var last time.Time
	progress := func(p queuekit.Progress) {
		if time.Since(last) < time.Second && p.Done < p.Total {
			return
		}
		last = time.Now()
		fmt.Fprintf(stderr, "queuekit run: %d of %d jobs ended, %s (%.1f s)\n",
			p.Done, p.Total, p.Note, time.Since(began).Seconds())
	}
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: *slots, Work: fault.FailJobs(fail, nil), Progress: progress})
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return fmt.Errorf("interrupted: night %s stopped unfinished; run it again to start over (`queuekit status --batch-date %s` shows where it stopped)", *date, *date)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, runJSON{BatchDate: rep.BatchDate, Workers: rep.Workers, Policy: string(rep.Policy),
			Realised: rep.Realised.Metrics, Forecast: rep.Forecast.Metrics, Claims: claimsJSON{rep.Won, rep.Lost},
			Retries: rep.Retries, LostAttempts: rep.LostAttempts, DeadLettered: len(rep.DeadLetters), Schedule: rep.Schedule,
			TableWUPerJob: rep.TableWUPerJob, IndexWUPerJob: rep.IndexWUPerJob})
	}
	return writeRunText(stdout, rep)
}

func writeRunText(w io.Writer, rep lease.Report) error {
	fmt.Fprintf(w, "Night %s ran for real: %d workers, policy %s, %.0f ms per job-minute, %.1f s of wall time\n\n",
		rep.BatchDate, rep.Workers, rep.Policy, rep.MinuteMS, rep.Elapsed.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tforecast (sim)\trealised\tdifference")
	for _, d := range lease.Compare(rep.Forecast.Metrics, rep.Realised.Metrics) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Metric, num(d.Forecast), num(d.Realised), num(d.Realised-d.Forecast))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nclaims won %d, lost %d (lost races: counted, then read again); retries %d (the jobs' own failures); lost attempts %d (leases that expired); dead-lettered %d\n",
		rep.Won, rep.Lost, rep.Retries, rep.LostAttempts, len(rep.DeadLetters))
	fmt.Fprintf(w, "write units per job (ReturnConsumedCapacity): %.2f table + %.2f index\n", rep.TableWUPerJob, rep.IndexWUPerJob)
	for _, d := range rep.DeadLetters {
		fmt.Fprintf(w, "  dead letter %s after %d attempts: %s\n", d.JobID, d.Attempts, d.LastError)
	}
	fmt.Fprintln(w, "\nschedule (night minutes from the window start):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "job\tattempt\tstart\tfinish\tslots\toutcome")
	for _, e := range rep.Schedule {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%v\t%s\n", e.ID, e.Attempt, e.Start, e.Finish, e.Workers, e.Outcome)
	}
	return tw.Flush()
}

// num formats a metric with at most three decimals and no trailing zeros.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }
