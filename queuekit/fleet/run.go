package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// RunConfig is one fleet run (queuekit fleet): N jobs, W worker processes of
// S slots, K shards.
type RunConfig struct {
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
	// ClockOffsetEnv.
	ClockOffsets []time.Duration
}

// RunReport is what a run measured. Its JSON keys are the CLI's contract.
type RunReport struct {
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
	TableWUPerJob float64 `json:"-"` // write units reported by ReturnConsumedCapacity, table
	IndexWUPerJob float64 `json:"-"` // and the due index
	Kills         int     `json:"-"` // workers SIGKILLed
	PerWorker     []Stats `json:"-"` // last counters each worker process reported
	PollAll       bool    `json:"-"`

	// Resumed says that the run continued an interrupted one (RunConfig.Fresh
	// unset): KeptFinished jobs had ended before and were kept, not run
	// again; the others were continued (Submitted: the ones never written).
	Resumed      bool `json:"resumed"`
	KeptFinished int  `json:"kept_finished"`
	Submitted    int  `json:"submitted"`
}

// runItem is META/RUN: the shape of the run in progress on the table.
type runItem struct {
	Jobs     int    `dynamodbav:"jobs"`
	Users    int    `dynamodbav:"users"`
	Shards   int    `dynamodbav:"shards"`
	MaxRetry int    `dynamodbav:"max_retry"`
	State    string `dynamodbav:"state"` // "running" or "done"
}

// lastRun reads META/RUN; ok is false when there is none (or no table).
func (f *Fleet) lastRun(ctx context.Context) (runItem, bool, error) {
	out, err := catalog.Call(ctx, f.cat, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return f.client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true), Key: key("META", "RUN")})
	})
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) {
		return runItem{}, false, nil
	}
	if err != nil {
		return runItem{}, false, fmt.Errorf("read the last run of %s: %w", f.Table(), err)
	}
	if out.Item == nil {
		return runItem{}, false, nil
	}
	var r runItem
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return runItem{}, false, fmt.Errorf("META/RUN of %s: %w", f.Table(), err)
	}
	return r, true, nil
}

func (f *Fleet) putRun(ctx context.Context, r runItem) error {
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return err
	}
	item[attrPK] = &types.AttributeValueMemberS{Value: "META"}
	item[attrSK] = &types.AttributeValueMemberS{Value: "RUN"}
	_, err = catalog.Call(ctx, f.cat, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return f.client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Table()), Item: item})
	})
	if err != nil {
		return fmt.Errorf("record the run on %s: %w", f.Table(), err)
	}
	return nil
}

// proc is one worker process.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	last Stats
	seen bool
	done chan struct{}
	err  []byte
}

// Run creates the fleet table afresh, submits the jobs, measures the write
// ceiling, starts the worker processes, kills and replaces them when asked,
// waits until every job has ended, stops the workers and reads the table
// back.
func (f *Fleet) Run(ctx context.Context, cfg RunConfig) (RunReport, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return RunReport{}, err
	}
	say := func(format string, a ...any) {
		if cfg.Logf != nil {
			cfg.Logf(format, a...)
		}
	}
	rep := RunReport{Jobs: cfg.Jobs, Workers: cfg.Workers, Slots: cfg.Slots, Shards: cfg.Shards, PollAll: f.opts.PollAll}
	shape := runItem{Jobs: cfg.Jobs, Users: cfg.Users, Shards: cfg.Shards, MaxRetry: cfg.MaxRetry, State: "running"}
	if !cfg.Fresh {
		last, ok, err := f.lastRun(ctx)
		if err != nil {
			return rep, err
		}
		rep.Resumed = ok && last == shape // the same run, interrupted
	}
	if rep.Resumed {
		say("resuming the interrupted run on %s: finished jobs are kept (--fresh starts afresh)", f.Table())
	} else {
		if err := f.Reset(ctx, cfg.Shards); err != nil {
			return rep, err
		}
		say("created table %s with %d shards", f.Table(), cfg.Shards)
	}
	if err := f.putRun(ctx, shape); err != nil {
		return rep, err
	}
	if cfg.Ceiling > 0 {
		say("measuring the write ceiling: %d clients for %s", cfg.Workers*cfg.Slots, cfg.Ceiling)
		c, err := f.WriteCeiling(ctx, cfg.Workers*cfg.Slots, cfg.Ceiling)
		if err != nil {
			return rep, err
		}
		rep.WriteCeiling = c
	}
	start := f.now()
	jobs := make([]Job, cfg.Jobs)
	for i := range jobs {
		at := start
		if cfg.DueOver > 0 {
			at = start.Add(time.Duration(float64(cfg.DueOver) * float64(i) / float64(cfg.Jobs)))
		}
		jobs[i] = Job{UserID: fmt.Sprintf("user-%03d", i%cfg.Users), JobID: fmt.Sprintf("job-%07d", i+1), JobType: "report",
			ScheduledAt: at.UTC().Format(TimeLayout), Priority: i % 3, ResultLocation: fmt.Sprintf("s3://results/job-%07d", i+1),
			MaxRetry: cfg.MaxRetry}
	}
	if rep.Resumed { // submit only the jobs never written; keep the rest as they are
		have := map[string]bool{}
		for u := range cfg.Users {
			js, err := f.ListAllJobs(ctx, fmt.Sprintf("user-%03d", u))
			if err != nil {
				return rep, err
			}
			for _, j := range js {
				have[j.UserID+"/"+j.JobID] = true
				if j.Status == queuekit.StatusSuccess || j.Status == queuekit.StatusFatalFailure {
					rep.KeptFinished++
				}
			}
		}
		jobs = slices.DeleteFunc(jobs, func(j Job) bool { return have[j.UserID+"/"+j.JobID] })
		say("%d jobs finished before are kept, %d never written are submitted", rep.KeptFinished, len(jobs))
	}
	rep.Submitted = len(jobs)
	say("submitting %d jobs", len(jobs))
	var sub SubmitReport
	if len(jobs) > 0 {
		var err error
		if sub, err = f.SubmitJobs(ctx, jobs); err != nil {
			return rep, err
		}
	}

	var (
		mu    sync.Mutex
		procs []*proc
		seq   atomic.Int64
	)
	startProc := func() (*proc, error) {
		name := fmt.Sprintf("w%03d", seq.Add(1))
		args := []string{"fleet-worker", "--shards", strconv.Itoa(cfg.Shards), "--slots", strconv.Itoa(cfg.Slots), "--name", name,
			"--job-ms", strconv.FormatFloat(float64(cfg.Job)/float64(time.Millisecond), 'f', -1, 64),
			"--table", f.Table(), "--lease-ms", strconv.FormatInt(f.opts.Lease.Milliseconds(), 10),
			"--shard-lease-ms", strconv.FormatInt(f.opts.ShardLease.Milliseconds(), 10)}
		if ep := f.cat.Endpoint(); ep != "" {
			args = append(args, "--endpoint", ep)
		}
		if cfg.WorkLog != "" {
			args = append(args, "--work-log", cfg.WorkLog)
		}
		if f.opts.PollAll {
			args = append(args, "--poll-all")
		}
		p := &proc{name: name, cmd: exec.Command(cfg.Bin, args...), done: make(chan struct{})}
		if len(cfg.ClockOffsets) > 0 {
			off := cfg.ClockOffsets[int(seq.Load()-1)%len(cfg.ClockOffsets)]
			p.cmd.Env = append(os.Environ(), ClockOffsetEnv+"="+off.String())
		}
		out, err := p.cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		stderr := &limitedBuffer{max: 4096}
		p.cmd.Stderr = stderr
		if err := p.cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s fleet-worker: %w", cfg.Bin, err)
		}
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64*1024), 1<<20)
			for sc.Scan() {
				var st Stats
				if json.Unmarshal(sc.Bytes(), &st) == nil {
					p.mu.Lock()
					p.last, p.seen = st, true
					p.mu.Unlock()
				}
			}
			_ = p.cmd.Wait()
			p.mu.Lock()
			p.err = stderr.Bytes()
			p.mu.Unlock()
			close(p.done)
		}()
		mu.Lock()
		procs = append(procs, p)
		mu.Unlock()
		return p, nil
	}
	stopAll := func() {
		mu.Lock()
		ps := slices.Clone(procs)
		mu.Unlock()
		for _, p := range ps {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
	}
	defer stopAll()

	say("starting %d fleet-worker processes of %d slots", cfg.Workers, cfg.Slots)
	began := time.Now()
	live := make([]*proc, 0, cfg.Workers)
	for range cfg.Workers {
		p, err := startProc()
		if err != nil {
			return rep, err
		}
		live = append(live, p)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 3))
	var killTick <-chan time.Time
	if cfg.KillEvery > 0 {
		t := time.NewTicker(cfg.KillEvery)
		defer t.Stop()
		killTick = t.C
	}
	check := time.NewTicker(500 * time.Millisecond)
	defer check.Stop()
	lastSay, lastCount := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return rep, context.Cause(ctx)
		case <-killTick:
			i := rng.IntN(len(live))
			victim := live[i]
			_ = victim.cmd.Process.Kill()
			<-victim.done
			rep.Kills++
			p, err := startProc()
			if err != nil {
				return rep, err
			}
			live[i] = p
			say("killed %s (SIGKILL), started %s", victim.name, p.name)
			continue
		case <-check.C:
		}
		for _, p := range live {
			select {
			case <-p.done:
				return rep, fmt.Errorf("fleet-worker %s exited on its own (%v): %s", p.name, p.cmd.ProcessState, oneLine(p.err))
			default:
			}
		}
		// The workers' own counts say when the end is near; the index (a
		// COUNT Query per shard, which reads every unfinished job's index
		// entry) confirms it, and is read every 5 s regardless, since a
		// killed worker's last counts are lost. Reading it every half
		// second would cost DynamoDB Local more than the workers do.
		ended := 0
		mu.Lock()
		for _, p := range procs {
			p.mu.Lock()
			ended += p.last.Succeeded + p.last.Fatal
			p.mu.Unlock()
		}
		mu.Unlock()
		if ended < cfg.Jobs && time.Since(lastCount) < 5*time.Second {
			continue
		}
		lastCount = time.Now()
		left, err := f.Unfinished(ctx, cfg.Shards)
		if err != nil {
			return rep, err
		}
		if time.Since(lastSay) > 2*time.Second {
			lastSay = time.Now()
			say("%d of %d jobs ended (%.0f s)", cfg.Jobs-left, cfg.Jobs, time.Since(began).Seconds())
		}
		if left == 0 {
			break
		}
	}
	elapsed := time.Since(began)
	stopAll()
	shape.State = "done"
	if err := f.putRun(ctx, shape); err != nil {
		return rep, err
	}
	rep.Seconds = elapsed.Seconds()
	rep.JobsPerSecond = float64(cfg.Jobs) / rep.Seconds
	// One write per job submitted (a BatchWriteItem carries 25 puts; each is
	// one write, as submitJob's PutItem), then every write the workers sent.
	writes := float64(rep.Submitted)
	tableWU, indexWU := sub.WriteUnits-sub.IndexWriteUnits, sub.IndexWriteUnits
	mu.Lock()
	for _, p := range procs {
		p.mu.Lock()
		if p.seen {
			rep.PerWorker = append(rep.PerWorker, p.last)
			rep.Claims.Lost += p.last.Lost // as last reported: a killed worker's last second is missing
			writes += float64(p.last.Writes)
			tableWU += p.last.TableWU
			indexWU += p.last.IndexWU
		}
		p.mu.Unlock()
	}
	mu.Unlock()
	rep.WritesPerJob = writes / float64(cfg.Jobs)
	rep.TableWUPerJob = tableWU / float64(cfg.Jobs)
	rep.IndexWUPerJob = indexWU / float64(cfg.Jobs)
	say("reading the jobs back")
	for u := range cfg.Users {
		js, err := f.ListAllJobs(ctx, fmt.Sprintf("user-%03d", u))
		if err != nil {
			return rep, err
		}
		for _, j := range js {
			rep.Attempts += j.Attempt
			rep.Claims.Won += j.Attempt // every attempt is a claim that won, read from the table
			switch j.Status {
			case queuekit.StatusSuccess:
				rep.Succeeded++
			case queuekit.StatusFatalFailure:
				rep.Fatal++
			}
		}
	}
	return rep, nil
}

// WithDefaults fills in the defaults of zero fields: 50 users, max retry 3,
// a 3 s write-ceiling measurement.
func (c RunConfig) WithDefaults() RunConfig {
	if c.Users == 0 {
		c.Users = 50
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = 3
	}
	if c.Ceiling == 0 {
		c.Ceiling = 3 * time.Second
	}
	return c
}

// Validate checks a run's configuration before anything is written.
func (c RunConfig) Validate() error {
	switch {
	case c.Jobs < 1 || c.Jobs > 10_000_000:
		return fmt.Errorf("--jobs %d: want 1 to 10,000,000", c.Jobs)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("--workers %d: want 1 to 256 processes", c.Workers)
	case c.Slots < 1 || c.Slots > 1024:
		return fmt.Errorf("--slots %d: want 1 to 1,024 per worker", c.Slots)
	case c.Shards < 1 || c.Shards > MaxShards:
		return fmt.Errorf("--shards %d: want 1 to %d", c.Shards, MaxShards)
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

// Unfinished counts the jobs still in the due index (not ended), one COUNT
// Query per shard.
func (f *Fleet) Unfinished(ctx context.Context, shards int) (int, error) {
	var total atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for k := range shards {
		g.Go(func() error {
			in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), IndexName: aws.String(IndexDue),
				Select: types.SelectCount, KeyConditionExpression: aws.String("claim_shard = :k"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberN{Value: strconv.Itoa(k)}}}
			for out, err := range f.cat.DB().QueryPages(gctx, in) {
				if err != nil {
					return fmt.Errorf("count unfinished jobs of shard %d: %w", k, err)
				}
				total.Add(int64(out.Count))
			}
			return nil
		})
	}
	err := g.Wait()
	return int(total.Load()), err
}

// WriteCeiling measures what the server accepts: clients goroutines, each
// making conditional UpdateItems on an item of its own (no two clients
// touch one item), back to back, for d. It returns committed writes per
// second.
func (f *Fleet) WriteCeiling(ctx context.Context, clients int, d time.Duration) (float64, error) {
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	stop := began.Add(d)
	for i := range clients {
		g.Go(func() error {
			k := key("CEILING", fmt.Sprintf("%05d", i))
			for n := 0; time.Now().Before(stop); n++ {
				_, err := catalog.Call(gctx, f.cat, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
					return f.client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.Table()), Key: k,
						UpdateExpression:    aws.String("SET n = :n"),
						ConditionExpression: aws.String("attribute_not_exists(n) OR n < :n"),
						ExpressionAttributeValues: map[string]types.AttributeValue{
							":n": &types.AttributeValueMemberN{Value: strconv.Itoa(n + 1)}}})
				})
				if err != nil {
					return fmt.Errorf("write ceiling: client %d: %w", i, err)
				}
				done.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return float64(done.Load()) / time.Since(began).Seconds(), nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

func oneLine(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; ") }
