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

	"github.com/nightqueue/workshop/queuekit/fanout"
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
	fs := newFlags("fanout")
	slices := fs.Int("slices", 0, fmt.Sprintf("how many slices (nights from --start), 1 to %d (required)", fanout.MaxSlices))
	workers := fs.Int("workers", 4, fmt.Sprintf("processors' bound on slices in flight, 1 to %d", maxFanoutWorkers))
	failList := fs.String("fail-slices", "", "slice indices that always fail, e.g. 3,7 (they end in the dead-letter queue)")
	maxReceives := fs.Int("max-receives", 3, "RedrivePolicy maxReceiveCount, 1 to 1000: receives before a message moves to the dead-letter queue")
	asJSON := fs.Bool("json", false, `print {"slices", "processed", "dead_lettered", "redelivered", "result", ...}`)
	start := fs.String("start", workload.DefaultStart, "first night (YYYY-MM-DD); the catalog must hold the nights (queuekit seed --generate-nights N)")
	simWorkers := fs.Int("sim-workers", 3, fmt.Sprintf("workers c of each night's simulation, 1 to %d", maxSimWorkers))
	runID := fs.String("run", "", "run id (default: random); with --resume, the run to continue")
	resume := fs.Bool("resume", false, "continue run --run: do not trigger again, process what is left and collate")
	redrive := fs.Bool("redrive", false, "with --resume: move the run's dead-lettered slices back to the work queue first")
	keep := fs.Bool("keep", false, "keep the queues even when the run completes without dead letters")
	visibility := fs.Duration("visibility", 30*time.Second, "visibility timeout of the work queue (whole seconds); a running slice extends it every half")
	retryAfter := fs.Duration("retry-after", 0, "visibility given to a failed slice's message before its next receive, whole seconds, at most 12 h")
	poll := fs.Duration("poll", 2*time.Second, "long-poll time of a receive, whole seconds, at most 20 s")
	sourceRate := fs.Float64("source-rate", 0, fmt.Sprintf("requests a second the source bears (token bucket, burst 1), 0 (no limit) to %d", maxSourceRate))
	sliceTime := fs.Duration("slice-time", 0, "extra time each slice takes (a slow source), to see visibility extended")
	crashAfter := fs.Int("crash-after-write", -1, "testing: after writing this slice's result, stop before deleting its message and wait to be killed")
	crashBefore := fs.Int("crash-before-process", -1, "testing: on receiving this slice, stop before processing it and wait to be killed")
	resultsTable := fs.String("results-table", "queuekit_fanout_results", "DynamoDB table of slice results and final results")
	sqsEndpoint := addSQSFlag(fs)
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	wholeSeconds := func(d time.Duration) bool { return d%time.Second == 0 }
	switch {
	case *slices < 1 || *slices > fanout.MaxSlices:
		return usagef("--slices %d: want 1 to %d slices (one night each)", *slices, fanout.MaxSlices)
	case *workers < 1 || *workers > maxFanoutWorkers:
		return usagef("--workers %d: want 1 to %d processors", *workers, maxFanoutWorkers)
	case *maxReceives < 1 || *maxReceives > 1000:
		return usagef("--max-receives %d: SQS allows a maxReceiveCount of 1 to 1000", *maxReceives)
	case *simWorkers < 1 || *simWorkers > maxSimWorkers:
		return usagef("--sim-workers %d: want 1 to %d", *simWorkers, maxSimWorkers)
	case *visibility < time.Second || *visibility > 12*time.Hour || !wholeSeconds(*visibility):
		return usagef("--visibility %s: SQS takes whole seconds from 1 s to 12 h, e.g. 30s", *visibility)
	case *poll < 0 || *poll > 20*time.Second || !wholeSeconds(*poll):
		return usagef("--poll %s: SQS long polls whole seconds from 0 to 20 s, e.g. 2s", *poll)
	case *retryAfter < 0 || *retryAfter > 12*time.Hour || !wholeSeconds(*retryAfter):
		return usagef("--retry-after %s: SQS takes a visibility of whole seconds from 0 to 12 h, e.g. 5s", *retryAfter)
	case *sliceTime < 0 || *sliceTime > 12*time.Hour:
		return usagef("--slice-time %s: want 0 to 12h", *sliceTime)
	case !(*sourceRate >= 0) || *sourceRate > maxSourceRate:
		return usagef("--source-rate %v: want a number of requests a second from 0 (no limit) to %d", *sourceRate, maxSourceRate)
	case *redrive && !*resume:
		return usagef("--redrive needs --resume --run <id>: it redrives a run that has dead letters")
	case *resume && *runID == "":
		return usagef("--resume needs --run <id> of the run to continue")
	case *runID != "" && !runIDPattern.MatchString(*runID):
		return usagef("--run %q: use 1 to 40 letters, digits, '-' or '_'", *runID)
	}
	if err := checkSQSEndpoint(*sqsEndpoint); err != nil {
		return err
	}
	fail := map[int]bool{}
	if *failList != "" {
		for _, f := range strings.Split(*failList, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= *slices {
				return usagef("--fail-slices %q: %q is not a slice index; use integers from 0 to %d", *failList, f, *slices-1)
			}
			fail[i] = true
		}
	}
	keys, err := fanout.NightKeys(*start, *slices)
	if err != nil {
		return usagef("--start: %v", err)
	}
	if *runID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		*runID = hex.EncodeToString(b[:])
	}
	began := time.Now()
	step := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, a...))
	}

	src, err := df.open(ctx)
	if err != nil {
		return err
	}
	for _, k := range []string{keys[0], keys[len(keys)-1]} { // the trigger's count of slices must be real nights
		n, _, err := src.QueryNight(ctx, k, "")
		if err != nil {
			return err
		}
		if len(n.Jobs) == 0 { // the catalog's state, not the command line: exit 1
			return fmt.Errorf("night %s has no jobs in %s: seed the nights with `go run ./queuekit/cmd/queuekit seed --generate-nights %d --start %s --table %s` or lower --slices",
				k, describeTarget(src), *slices, *start, src.Table())
		}
	}
	q, err := openQueues(ctx, *sqsEndpoint)
	if err != nil {
		return err
	}
	if err := q.Ping(ctx); err != nil {
		return err
	}
	if *resume { // refuse an unknown run before anything is created
		for _, name := range []string{fanout.QueueName(*runID), fanout.QueueName(*runID) + "-dlq"} {
			if _, err := q.Open(ctx, name); err != nil {
				return resumeError(*runID, err)
			}
		}
	}
	resCat, err := openCatalog(ctx, df.endpoint, *resultsTable)
	if err != nil {
		return err
	}
	results := fanout.NewResults(resCat)
	if err := results.Create(ctx); err != nil {
		return err
	}
	source := fanout.NightSource(src, *simWorkers, sim.Barrier)
	if *sliceTime > 0 {
		source = fanout.Slow(source, *sliceTime)
	}
	if *sourceRate > 0 {
		source = fanout.Limited(source, *sourceRate, 1)
	}
	out, err := fanout.Execute(ctx, fanout.Config{Queues: q, Results: results, Run: *runID, Keys: keys, Source: source,
		MaxReceives: *maxReceives, Resume: *resume, Redrive: *redrive, Keep: *keep, Logf: step,
		Processing: fanout.Processing{Workers: *workers, Visibility: *visibility, Wait: *poll, RetryAfter: *retryAfter,
			Fail: func(p fanout.Pointer) error {
				if p.Slice == *crashBefore {
					step("crash point: received slice %d, nothing recorded; waiting to be killed", p.Slice)
					<-ctx.Done()
					return ctx.Err()
				}
				if fail[p.Slice] {
					return fmt.Errorf("slice %d fails (--fail-slices)", p.Slice)
				}
				return nil
			},
			AfterWrite: func(p fanout.Pointer) {
				if p.Slice == *crashAfter {
					step("crash point: wrote slice %d, its message is not deleted; waiting to be killed", p.Slice)
					<-ctx.Done()
				}
			},
		},
	})
	if err != nil {
		return resumeError(*runID, err)
	}
	for _, i := range out.DeadByFailure {
		step("slice %d (night %s) dead-lettered by its own failures; its last attempt failed with: %s", i, keys[i], out.LastErrors[i])
	}
	for _, i := range out.DeadByCrash {
		step("slice %d (night %s) dead-lettered by crashes: no attempt recorded a failure, every receive ended with its processor gone (maxReceiveCount %d counts crashes too); the slice may be healthy", i, keys[i], *maxReceives)
	}
	redriveCmd := ""
	if len(out.DeadLettered) > 0 {
		redriveCmd = fmt.Sprintf("queuekit fanout --slices %d --run %s --resume --redrive", *slices, *runID)
		switch {
		case len(out.DeadByFailure) == 0:
			step("redrive the crashed slices once the processors are stable: %s", redriveCmd)
		default:
			step("after a fix (the crashed slices need none, only stable processors): %s", redriveCmd)
		}
	}
	res := fanoutResult{Run: *runID, Slices: out.Slices, Processed: out.Processed, DeadLettered: out.DeadLettered,
		Redelivered: out.Stats.Redelivered, Duplicates: out.Stats.Duplicates, Throttled: out.Stats.Throttled, Extended: out.Stats.Extended,
		LastErrors: out.LastErrors, DeadByFailure: out.DeadByFailure, DeadByCrash: out.DeadByCrash, Redrive: redriveCmd, Elapsed: float64(out.Elapsed.Milliseconds()) / 1000, Result: out.Result}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	var cap fanout.Capacity
	if err := json.Unmarshal(out.Result, &cap); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s: %d slices, %d processed, dead-lettered %v, %d redelivered (%d found their result written)\n",
		res.Run, res.Slices, res.Processed, res.DeadLettered, res.Redelivered, res.Duplicates)
	if len(res.DeadLettered) > 0 {
		fmt.Fprintf(stdout, "dead-lettered by their own failures %v, by crashes (no failure recorded) %v; redrive: %s\n", res.DeadByFailure, res.DeadByCrash, res.Redrive)
	}
	fmt.Fprintf(stdout, "capacity with %d workers: %d nights, %d jobs; %d of the nights overflow (%d jobs late); mean utilization %.1f%%; worst night %s drained at minute %.0f\n",
		*simWorkers, cap.Nights, cap.Jobs, cap.OverflowNights, cap.OverflowJobs, 100*cap.MeanUtilization, cap.WorstNight, cap.WorstDrained)
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
