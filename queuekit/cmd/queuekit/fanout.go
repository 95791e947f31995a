package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// fanoutResult is the --json form.
type fanoutResult struct {
	Run          string         `json:"run"`
	Slices       int            `json:"slices"`
	Processed    int            `json:"processed"`
	DeadLettered []int          `json:"dead_lettered"`
	Redelivered  int            `json:"redelivered"`
	Duplicates   int            `json:"duplicates"`
	Throttled    int            `json:"throttled"`
	Extended     int            `json:"visibility_extensions"`
	LastErrors   map[int]string `json:"last_errors,omitempty"` // each dead-lettered slice's last cause
	// Dead-lettered by their own failures (a cause recorded) and by crashes
	// (no failure recorded: every receive ended with its processor gone).
	DeadByFailure []int `json:"dead_by_failure"`
	DeadByCrash   []int `json:"dead_by_crash"`
	// Redrive is the command that sends the dead-lettered slices back.
	Redrive string          `json:"redrive,omitempty"`
	Elapsed float64         `json:"elapsed_seconds"`
	Result  json.RawMessage `json:"result"`
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// Limits of fanout's count flags, checked before anything starts.
const (
	maxFanoutWorkers = 1000    // processors' slices in flight
	maxSimWorkers    = 10_000  // workers of each night's simulation
	maxSourceRate    = 1000000 // requests a second of the token bucket
)

func runFanout(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFanout(args)
	if err != nil {
		return err
	}
	began := time.Now()
	step := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, a...))
	}
	src, err := o.df.open(ctx)
	if err != nil {
		return err
	}
	if err := o.checkNights(ctx, src); err != nil {
		return err
	}
	q, err := o.openQueues(ctx)
	if err != nil {
		return err
	}
	resCat, err := openCatalog(ctx, o.df.endpoint, o.resultsTable)
	if err != nil {
		return err
	}
	results := fanout.NewResults(resCat)
	if err := results.Create(ctx); err != nil {
		return err
	}
	out, err := fanout.Execute(ctx, fanout.Config{Queues: q, Results: results, Run: o.runID, Keys: o.keys, Source: o.source(src), Combine: nights.Combine,
		MaxReceives: o.maxReceives, Resume: o.resume, Redrive: o.redrive, Keep: o.keep, Logf: step,
		Processing: o.processing(ctx, step),
	})
	if err != nil {
		return resumeError(o.runID, err)
	}
	res := fanoutResult{Run: o.runID, Slices: out.Slices, Processed: out.Processed, DeadLettered: out.DeadLettered,
		Redelivered: out.Stats.Redelivered, Duplicates: out.Stats.Duplicates, Throttled: out.Stats.Throttled, Extended: out.Stats.Extended,
		LastErrors: out.LastErrors, DeadByFailure: out.DeadByFailure, DeadByCrash: out.DeadByCrash, Redrive: o.explainDeadLetters(step, out),
		Elapsed: float64(out.Elapsed.Milliseconds()) / 1000, Result: out.Result}
	if o.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return o.print(stdout, res)
}

// fanoutOpts are fanout's flags, parsed and checked.
type fanoutOpts struct {
	slices, workers, maxReceives, simWorkers int
	crashAfter, crashBefore                  int
	failList, start, runID, resultsTable     string
	asJSON, resume, redrive, keep            bool
	visibility, retryAfter, poll, sliceTime  time.Duration
	sourceRate                               float64
	sqsEndpoint                              *string
	df                                       *dynamoFlags

	fail map[int]bool // --fail-slices
	keys []string     // the slices' nights
}

// parseFanout parses and checks fanout's flags before anything is
// created: every mistake is a usage error (exit 2). An unset --run gets a
// random id.
func parseFanout(args []string) (*fanoutOpts, error) {
	o := &fanoutOpts{}
	fs := newFlags("fanout")
	fs.IntVar(&o.slices, "slices", 0, fmt.Sprintf("how many slices (nights from --start), 1 to %d (required)", nights.MaxSlices))
	fs.IntVar(&o.workers, "workers", 4, fmt.Sprintf("processors' bound on slices in flight, 1 to %d", maxFanoutWorkers))
	fs.StringVar(&o.failList, "fail-slices", "", "slice indices that always fail, e.g. 3,7 (they end in the dead-letter queue)")
	fs.IntVar(&o.maxReceives, "max-receives", 3, "RedrivePolicy maxReceiveCount, 1 to 1000: receives before a message moves to the dead-letter queue")
	fs.BoolVar(&o.asJSON, "json", false, `print {"slices", "processed", "dead_lettered", "redelivered", "result", ...}`)
	fs.StringVar(&o.start, "start", workload.DefaultStart, "first night (YYYY-MM-DD); the catalog must hold the nights (queuekit seed --generate-nights N)")
	fs.IntVar(&o.simWorkers, "sim-workers", 3, fmt.Sprintf("workers c of each night's simulation, 1 to %d", maxSimWorkers))
	fs.StringVar(&o.runID, "run", "", "run id (default: random); with --resume, the run to continue")
	fs.BoolVar(&o.resume, "resume", false, "continue run --run: do not trigger again, process what is left and collate")
	fs.BoolVar(&o.redrive, "redrive", false, "with --resume: move the run's dead-lettered slices back to the work queue first")
	fs.BoolVar(&o.keep, "keep", false, "keep the queues even when the run completes without dead letters")
	fs.DurationVar(&o.visibility, "visibility", 30*time.Second, "visibility timeout of the work queue (whole seconds); a running slice extends it every half")
	fs.DurationVar(&o.retryAfter, "retry-after", 0, "visibility given to a failed slice's message before its next receive, whole seconds, at most 12 h")
	fs.DurationVar(&o.poll, "poll", 2*time.Second, "long-poll time of a receive, whole seconds, at most 20 s")
	fs.Float64Var(&o.sourceRate, "source-rate", 0, fmt.Sprintf("requests a second the source bears (token bucket, burst 1), 0 (no limit) to %d", maxSourceRate))
	fs.DurationVar(&o.sliceTime, "slice-time", 0, "extra time each slice takes (a slow source), to see visibility extended")
	fs.IntVar(&o.crashAfter, "crash-after-write", -1, "testing: after writing this slice's result, stop before deleting its message and wait to be killed")
	fs.IntVar(&o.crashBefore, "crash-before-process", -1, "testing: on receiving this slice, stop before processing it and wait to be killed")
	fs.StringVar(&o.resultsTable, "results-table", "queuekit_fanout_results", "DynamoDB table of slice results and final results")
	o.sqsEndpoint = addSQSFlag(fs)
	o.df = addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := checkSQSEndpoint(*o.sqsEndpoint); err != nil {
		return nil, err
	}
	o.fail = map[int]bool{}
	if o.failList != "" {
		for _, f := range strings.Split(o.failList, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= o.slices {
				return nil, usagef("--fail-slices %q: %q is not a slice index; use integers from 0 to %d", o.failList, f, o.slices-1)
			}
			o.fail[i] = true
		}
	}
	keys, err := nights.Keys(o.start, o.slices)
	if err != nil {
		return nil, usagef("--start: %v", err)
	}
	o.keys = keys
	if o.runID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.runID = hex.EncodeToString(b[:])
	}
	return o, nil
}

// check checks the flags' ranges and combinations.
func (o *fanoutOpts) check() error {
	wholeSeconds := func(d time.Duration) bool { return d%time.Second == 0 }
	switch {
	case o.slices < 1 || o.slices > nights.MaxSlices:
		return usagef("--slices %d: want 1 to %d slices (one night each)", o.slices, nights.MaxSlices)
	case o.workers < 1 || o.workers > maxFanoutWorkers:
		return usagef("--workers %d: want 1 to %d processors", o.workers, maxFanoutWorkers)
	case o.maxReceives < 1 || o.maxReceives > 1000:
		return usagef("--max-receives %d: SQS allows a maxReceiveCount of 1 to 1000", o.maxReceives)
	case o.simWorkers < 1 || o.simWorkers > maxSimWorkers:
		return usagef("--sim-workers %d: want 1 to %d", o.simWorkers, maxSimWorkers)
	case o.visibility < time.Second || o.visibility > 12*time.Hour || !wholeSeconds(o.visibility):
		return usagef("--visibility %s: SQS takes whole seconds from 1 s to 12 h, e.g. 30s", o.visibility)
	case o.poll < 0 || o.poll > 20*time.Second || !wholeSeconds(o.poll):
		return usagef("--poll %s: SQS long polls whole seconds from 0 to 20 s, e.g. 2s", o.poll)
	case o.retryAfter < 0 || o.retryAfter > 12*time.Hour || !wholeSeconds(o.retryAfter):
		return usagef("--retry-after %s: SQS takes a visibility of whole seconds from 0 to 12 h, e.g. 5s", o.retryAfter)
	case o.sliceTime < 0 || o.sliceTime > 12*time.Hour:
		return usagef("--slice-time %s: want 0 to 12h", o.sliceTime)
	case !(o.sourceRate >= 0) || o.sourceRate > maxSourceRate:
		return usagef("--source-rate %v: want a number of requests a second from 0 (no limit) to %d", o.sourceRate, maxSourceRate)
	case o.redrive && !o.resume:
		return usagef("--redrive needs --resume --run <id>: it redrives a run that has dead letters")
	case o.resume && o.runID == "":
		return usagef("--resume needs --run <id> of the run to continue")
	case o.runID != "" && !runIDPattern.MatchString(o.runID):
		return usagef("--run %q: use 1 to 40 letters, digits, '-' or '_'", o.runID)
	}
	return nil
}

// checkNights checks that the first and the last slice are real nights in
// the catalog (the trigger's count of slices must be).
func (o *fanoutOpts) checkNights(ctx context.Context, src *catalog.Catalog) error {
	for _, k := range []string{o.keys[0], o.keys[len(o.keys)-1]} {
		n, _, err := src.QueryNight(ctx, k, "")
		if err != nil {
			return err
		}
		if len(n.Jobs) == 0 { // the catalog's state, not the command line: exit 1
			return fmt.Errorf("night %s has no jobs in %s: seed the nights with `go run ./queuekit/cmd/queuekit seed --generate-nights %d --start %s --table %s` or lower --slices",
				k, describeTarget(src), o.slices, o.start, src.Table())
		}
	}
	return nil
}

// openQueues opens SQS and, with --resume, refuses an unknown run before
// anything is created.
func (o *fanoutOpts) openQueues(ctx context.Context) (*sqsqueue.Client, error) {
	q, err := openQueues(ctx, *o.sqsEndpoint)
	if err != nil {
		return nil, err
	}
	if err := q.Ping(ctx); err != nil {
		return nil, err
	}
	if o.resume {
		for _, name := range []string{fanout.QueueName(o.runID), fanout.QueueName(o.runID) + "-dlq"} {
			if _, err := q.Open(ctx, name); err != nil {
				return nil, resumeError(o.runID, err)
			}
		}
	}
	return q, nil
}

// source is the nights source, slowed (--slice-time) and rate-limited
// (--source-rate) as asked.
func (o *fanoutOpts) source(src *catalog.Catalog) fanout.Source {
	source := nights.Source(src, o.simWorkers, sim.Barrier)
	if o.sliceTime > 0 {
		source = fanout.Slow(source, o.sliceTime)
	}
	if o.sourceRate > 0 {
		source = fanout.Limited(source, o.sourceRate, 1)
	}
	return source
}

// processing is the processors' settings, with --fail-slices and the
// testing crash points.
func (o *fanoutOpts) processing(ctx context.Context, step func(string, ...any)) fanout.Processing {
	return fanout.Processing{Workers: o.workers, Visibility: o.visibility, Wait: o.poll, RetryAfter: o.retryAfter,
		Fail: func(p fanout.Pointer) error {
			if p.Slice == o.crashBefore {
				step("crash point: received slice %d, nothing recorded; waiting to be killed", p.Slice)
				<-ctx.Done()
				return ctx.Err()
			}
			if o.fail[p.Slice] {
				return fmt.Errorf("slice %d fails (--fail-slices)", p.Slice)
			}
			return nil
		},
		AfterWrite: func(p fanout.Pointer) {
			if p.Slice == o.crashAfter {
				step("crash point: wrote slice %d, its message is not deleted; waiting to be killed", p.Slice)
				<-ctx.Done()
			}
		},
	}
}

// explainDeadLetters says why each dead-lettered slice is there, and
// returns the command that redrives them ("" when there are none).
func (o *fanoutOpts) explainDeadLetters(step func(string, ...any), out fanout.Outcome) string {
	for _, i := range out.DeadByFailure {
		step("slice %d (night %s) dead-lettered by its own failures; its last attempt failed with: %s", i, o.keys[i], out.LastErrors[i])
	}
	for _, i := range out.DeadByCrash {
		step("slice %d (night %s) dead-lettered by crashes: no attempt recorded a failure, every receive ended with its processor gone (maxReceiveCount %d counts crashes too); the slice may be healthy", i, o.keys[i], o.maxReceives)
	}
	if len(out.DeadLettered) == 0 {
		return ""
	}
	redriveCmd := fmt.Sprintf("queuekit fanout --slices %d --run %s --resume --redrive", o.slices, o.runID)
	switch {
	case len(out.DeadByFailure) == 0:
		step("redrive the crashed slices once the processors are stable: %s", redriveCmd)
	default:
		step("after a fix (the crashed slices need none, only stable processors): %s", redriveCmd)
	}
	return redriveCmd
}

// print writes the run's outcome and its capacity report as text.
func (o *fanoutOpts) print(stdout io.Writer, res fanoutResult) error {
	var cap nights.Capacity
	if err := json.Unmarshal(res.Result, &cap); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s: %d slices, %d processed, dead-lettered %v, %d redelivered (%d found their result written)\n",
		res.Run, res.Slices, res.Processed, res.DeadLettered, res.Redelivered, res.Duplicates)
	if len(res.DeadLettered) > 0 {
		fmt.Fprintf(stdout, "dead-lettered by their own failures %v, by crashes (no failure recorded) %v; redrive: %s\n", res.DeadByFailure, res.DeadByCrash, res.Redrive)
	}
	fmt.Fprintf(stdout, "capacity with %d workers: %d nights, %d jobs; %d of the nights overflow (%d jobs late); mean utilization %.1f%%; worst night %s drained at minute %.0f\n",
		o.simWorkers, cap.Nights, cap.Jobs, cap.OverflowNights, cap.OverflowJobs, 100*cap.MeanUtilization, cap.WorstNight, cap.WorstDrained)
	return nil
}

// resumeError explains a run whose queues are missing (it finished or never
// started); other errors pass unchanged. It is the server's answer, so exit 1.
func resumeError(run string, err error) error {
	var missing *sqsqueue.MissingError
	if errors.As(err, &missing) {
		return fmt.Errorf("--run %s: %w; it finished (its queues are deleted when no dead letters remain) or never started: drop --resume to start a run", run, err)
	}
	return err
}
