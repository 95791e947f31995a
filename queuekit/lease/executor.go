package lease

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Defaults of Config.
const (
	DefaultMinute   = 50 * time.Millisecond
	DefaultMaxRetry = 3
	// DefaultMaxLost bounds a job's attempts lost to expired leases
	// (Config.MaxLost).
	DefaultMaxLost = 10
	DefaultBackoff = 1.0 // job-minutes before the first retry; doubles each retry
	DefaultLease   = 2 * time.Second
	// StaleAfter is how long a run's heartbeat may be silent before its
	// night counts as abandoned and may be run again.
	StaleAfter = 10 * time.Second
)

// Config is one run of a night.
type Config struct {
	Workers  int           // c: slots of the pool, at least 1
	Policy   sim.Policy    // barrier (default), easy ("backfill" is an alias) or conservative
	Minute   time.Duration // wall time of one job-minute (default 50 ms; time.Minute is real time)
	Poll     time.Duration // how often an idle worker reads the pool (default Minute/4, within 10 ms..1 s)
	Lease    time.Duration // lease of a claimed job (default 2 s, at least 8 polls); heartbeats every Lease/4
	MaxRetry int           // retries after the first attempt: 0 means none (the CLI's --max-retry default is DefaultMaxRetry)
	// MaxLost bounds a job's attempts lost to the infrastructure (a lease
	// that expired: a worker killed, paused, cut off): they are not the
	// job's failures, so they do not spend MaxRetry, but a job that kills
	// every worker it runs on looks the same, so past MaxLost it is ended
	// FATAL_FAILURE and dead-lettered, saying so (default DefaultMaxLost).
	MaxLost int
	Backoff float64 // job-minutes before the first retry, doubling (default 1)
	Shards  int     // partitions per priority in the claimable index (default 1)
}

// WithDefaults returns the configuration with every zero field that has a
// default (Policy, Minute, Poll, Lease, Backoff, Shards) set to it, as a run
// uses it. MaxRetry has none: 0 retries is a setting.
func (c Config) WithDefaults() Config {
	c.Policy = cmp.Or(c.Policy, sim.Barrier)
	if p, err := sim.ParsePolicy(string(c.Policy)); err == nil {
		c.Policy = p // "backfill" is recorded as easy
	}
	c.Minute = cmp.Or(c.Minute, DefaultMinute)
	c.Poll = cmp.Or(c.Poll, min(max(c.Minute/4, 10*time.Millisecond), time.Second))
	c.Lease = cmp.Or(c.Lease, max(DefaultLease, 8*c.Poll))
	c.Backoff = cmp.Or(c.Backoff, DefaultBackoff)
	c.Shards = cmp.Or(c.Shards, 1)
	c.MaxLost = cmp.Or(c.MaxLost, DefaultMaxLost)
	return c
}

// Validate checks a configuration; messages name the value and what to do.
func (c Config) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("workers = %d: need at least 1 worker", c.Workers)
	case c.Minute <= 0:
		return fmt.Errorf("minute = %s: a job-minute must last more than 0 ms", c.Minute)
	case c.Poll <= 0, c.Lease <= 0:
		return fmt.Errorf("poll = %s, lease = %s: both must be positive", c.Poll, c.Lease)
	case c.Lease < 4*c.Poll:
		return fmt.Errorf("lease = %s is shorter than 4 polls (%s): lengthen the lease", c.Lease, 4*c.Poll)
	case c.MaxRetry < 0:
		return fmt.Errorf("max_retry = %d: retries after the first attempt must be 0 or more", c.MaxRetry)
	case c.MaxLost < 0:
		return fmt.Errorf("max_lost = %d: lost attempts allowed must be 0 or more (0: the default, %d)", c.MaxLost, DefaultMaxLost)
	case !(c.Backoff > 0) || math.IsInf(c.Backoff, 0):
		return fmt.Errorf("backoff = %v job-minutes: must be a finite number > 0", c.Backoff)
	case c.Workers > MaxWorkers:
		return workersLimit(c.Workers, MaxWorkers, MaxJobIDBytes)
	case c.Shards < 1 || c.Shards > 64:
		return fmt.Errorf("shards = %d: use 1 to 64", c.Shards)
	}
	_, err := sim.ParsePolicy(string(c.Policy))
	return err
}

// Executor runs nights from the job catalog on the companion table
// <catalog table>_exec. It is safe for concurrent use; it holds no state of
// a run, so any number of Executors in any number of processes may work on
// the same night.
type Executor struct {
	cat     *catalog.Catalog // the job catalog
	db      *dynamo.Table    // the companion table: the AWS layer's handle, sharing the catalog's client
	now     func() time.Time
	maxSkew time.Duration // Options.MaxSkew, handed to each Report
}

// Options configure an Executor. Set them with the With... functions.
type Options struct {
	// ClockOffset is added to this process's wall clock wherever the
	// executor reads it (timestamps it writes, the night's clock). For
	// tests only: it simulates a host whose clock is off (see
	// EnvClockOffset); durations stay on the monotonic clock.
	ClockOffset time.Duration
	// MaxSkew bounds the clock skew between any two hosts of a run (its
	// coordinator and workers), as Report.Verify assumes it where it
	// compares times written by different hosts (DefaultMaxSkew unless
	// set; 0 assumes one clock). See Report.Verify and the Clocks section
	// of docs/design/lease.md.
	MaxSkew time.Duration
}

// DefaultMaxSkew is Options.MaxSkew unless set: the skew the executor
// already assumes elsewhere, StaleAfter less the coordinator's 1 s
// heartbeat. A coordinator ahead of a live run's by more takes its night
// (it reads the run's heartbeat as stale), and a worker ahead by more does
// not join it, so a run whose hosts disagree by more does not run as one.
const DefaultMaxSkew = StaleAfter - time.Second

// WithMaxSkew sets Options.MaxSkew.
func WithMaxSkew(d time.Duration) Option { return func(o *Options) { o.MaxSkew = d } }

// Option is one functional option of New: a func(*Options), the SDK's optFns
// form. It is an alias, so the With helpers and a plain func literal mix.
type Option = func(*Options)

// WithClockOffset sets Options.ClockOffset (tests only).
func WithClockOffset(d time.Duration) Option { return func(o *Options) { o.ClockOffset = d } }

// EnvClockOffset is the environment variable the queuekit CLI's run and
// worker commands read for Options.ClockOffset, as a Go duration ("-4s",
// "1500ms"). TEST ONLY: it makes the process's clock wrong on purpose, to
// show what clock skew between hosts does (see the package doc's "Clocks").
const EnvClockOffset = "QUEUEKIT_CLOCK_OFFSET"

// New returns an executor for the catalog. It does not contact DynamoDB.
func New(cat *catalog.Catalog, opts ...Option) (*Executor, error) {
	o := Options{MaxSkew: DefaultMaxSkew}
	for _, fn := range opts {
		fn(&o)
	}
	if o.MaxSkew < 0 {
		return nil, fmt.Errorf("max skew = %s: a bound on clock skew is 0 or more", o.MaxSkew)
	}
	db, err := cat.DB().Open(cat.Table() + TableSuffix)
	if err != nil {
		return nil, fmt.Errorf("executor table: %w", err)
	}
	// The run's workers and coordinator ride out network outages: their
	// client retries by the AWS layer's ride-out policy (see
	// CoordinatorRideOut).
	db = db.RidingOut(rideOut)
	now := time.Now
	if off := o.ClockOffset; off != 0 {
		now = func() time.Time { return time.Now().Add(off) }
	}
	return &Executor{cat: cat, db: db, now: now, maxSkew: o.MaxSkew}, nil
}

// Table is the companion table's name.
func (e *Executor) Table() string { return e.db.Name() }

// CreateTable creates the companion table and its indexes if missing.
func (e *Executor) CreateTable(ctx context.Context) error { return e.createTable(ctx) }

// DeleteTable deletes the companion table (tests, instructors).
func (e *Executor) DeleteTable(ctx context.Context) error { return e.db.DeleteAndWait(ctx) }

// BusyError says that a night is already running: another run holds it and
// its coordinator heartbeat is fresh.
type BusyError struct {
	BatchDate string
	RunID     string
	Host      string
	PID       int
	Started   time.Time     // when that run took the night
	Seen      time.Duration // since its coordinator's last heartbeat
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("night %s is already running: run %s, started %s by host %s pid %d (last heartbeat %.1f s ago); wait for it to end, or stop it and retry %s after its last heartbeat",
		e.BatchDate, e.RunID, e.Started.UTC().Format("2006-01-02 15:04:05 MST"), e.Host, e.PID, e.Seen.Seconds(), StaleAfter)
}

// NoNightError says that the catalog holds no jobs for a night.
type NoNightError struct{ BatchDate, Table string }

func (e *NoNightError) Error() string {
	return fmt.Sprintf("night %s has no jobs in table %s: choose a seeded night (e.g. 2026-05-13) or %s",
		e.BatchDate, e.Table, catalog.SeedHint)
}

// Night reads a night from the catalog with Query; a night without jobs is
// a *NoNightError.
func (e *Executor) Night(ctx context.Context, date string) (queuekit.Night, error) {
	n, _, err := e.cat.QueryNight(ctx, date, "")
	// The coordinator's first call: lost replies are ridden out as the
	// reset's are; a refused connection (nothing listens there: a server
	// not started) is said at once, in one line naming the endpoint.
	if dynamo.NoAnswer(err) && !errors.Is(err, syscall.ECONNREFUSED) {
		err = e.coordinatorOutage(date).Do(ctx, func(ctx context.Context) error {
			var err error
			n, _, err = e.cat.QueryNight(ctx, date, "")
			return err
		})
	}
	if err != nil {
		return queuekit.Night{}, err
	}
	if len(n.Jobs) == 0 {
		return queuekit.Night{}, &NoNightError{BatchDate: date, Table: e.cat.Table()}
	}
	return n, nil
}

// Prepare takes the night for a new run and resets its execution state.
// In order, so that nothing is written before the run is valid and nothing
// of a previous run is deleted before the new run holds the night:
//
//  1. it validates the configuration and the limits (the pool item and the
//     largest claim must fit DynamoDB's item and expression limits: a
//     *LimitError), and reads the night's jobs;
//  2. it takes the night with one conditional write of the POOL item (state
//     PREPARING, the new run id, this host and pid): the write succeeds
//     only if the night has no pool, or its run is over (DONE, ABANDONED),
//     or its coordinator has not heartbeaten for StaleAfter. Of two runs
//     started at the same instant exactly one write succeeds; the other
//     gets a *BusyError naming the run that holds the night. From this
//     write on, every write of the previous run's workers is refused (each
//     names its run);
//  3. it deletes the previous run's items and writes one JOB item per job
//     (NOT_STARTED, claimable at its arrival minute, fencing token 0, the
//     new run id), heartbeating the pool meanwhile, every write fenced by
//     the pool's run (resetGuard: a run that lost the night writes nothing
//     more);
//  4. it sets the pool WAITING: workers may join.
func (e *Executor) Prepare(ctx context.Context, n queuekit.Night, cfg Config) (string, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	if len(n.Jobs) == 0 {
		return "", &NoNightError{BatchDate: n.BatchDate, Table: e.cat.Table()}
	}
	if err := e.checkLimits(n, cfg); err != nil {
		return "", err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	runID := hex.EncodeToString(b[:])
	xp, op := map[int]bool{}, map[int]bool{}
	var jobs []types.WriteRequest
	for _, j := range n.Jobs {
		arr := float64(j.ArrivalMinute(n.Window))
		it := jobItem{BatchDate: n.BatchDate, SK: jobSK(j.JobID), JobID: j.JobID, Class: j.WorkloadClass,
			Priority: j.Priority, Arrival: arr, Estimate: float64(j.RuntimeMinutes), Exclusive: j.RequiresExclusiveLock,
			Status: queuekit.StatusNotStarted, MaxRetry: cfg.MaxRetry, RunID: runID,
			ClaimShard: shardOf(n.BatchDate, j.RequiresExclusiveLock, j.Priority, j.JobID, cfg.Shards), DueKey: dueKey(arr, j.JobID)}
		if j.RequiresExclusiveLock {
			xp[j.Priority] = true
		} else {
			op[j.Priority] = true
		}
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			return "", fmt.Errorf("marshal job %s: %w", j.JobID, err)
		}
		jobs = append(jobs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	host, _ := os.Hostname()
	now := e.now().UnixMilli()
	p := poolItem{BatchDate: n.BatchDate, SK: skPool, RunID: runID, State: poolPreparing, Capacity: cfg.Workers,
		Policy: string(cfg.Policy), MinuteMS: float64(cfg.Minute) / float64(time.Millisecond), PollMS: cfg.Poll.Milliseconds(),
		LeaseMS: cfg.Lease.Milliseconds(), MaxRetry: cfg.MaxRetry, MaxLost: cfg.MaxLost, Backoff: cfg.Backoff, Shards: cfg.Shards,
		Slots: make([]string, cfg.Workers), Running: map[string]float64{}, Jobs: len(n.Jobs),
		XPriority: descending(xp), OPriority: descending(op), SeenMS: now,
		CutoffMin: float64(n.Window.Minutes()), WindowFrom: n.Window.Start, Host: host, PID: os.Getpid(), StartedMS: now}
	pool, err := attributevalue.MarshalMap(p)
	if err != nil {
		return "", fmt.Errorf("marshal pool: %w", err)
	}
	if err := e.createTable(ctx); err != nil {
		return "", err
	}
	// The run's sequence number: the previous run's plus one (the take is
	// conditioned on the sequence it read, so two runs never share one).
	prev, ok, err := e.readPool(ctx, n.BatchDate)
	if err != nil {
		return "", err
	}
	seq := int64(1)
	if ok {
		seq = prev.RunSeq + 1
	}
	pool[attrRunSeq] = &types.AttributeValueMemberN{Value: fmt.Sprint(seq)}
	if err := e.takeNight(ctx, n.BatchDate, pool, now, seq-1); err != nil {
		return "", err
	}
	// The night is ours: keep its heartbeat while the reset runs, and run
	// the reset under the heartbeat's context, so that a heartbeat refused
	// (a newer run took the night) stops the reset at once. The reset's
	// writes are fenced by the pool item as well (see resetGuard): a
	// coordinator paused past StaleAfter in the middle of its reset cannot
	// overwrite a newer run's items when it resumes, whatever its context.
	hctx, stopBeat := context.WithCancelCause(ctx)
	beat := make(chan error, 1)
	go func() {
		berr := e.keepAlive(hctx, n.BatchDate, runID)
		stopBeat(berr)
		beat <- berr
	}()
	err = e.reset(hctx, n, runID, jobs)
	if err != nil && hctx.Err() != nil && ctx.Err() == nil {
		err = context.Cause(hctx) // the heartbeat's error says why the reset stopped
	}
	stopBeat(context.Canceled)
	if berr := <-beat; err == nil && berr != nil && !errors.Is(berr, context.Canceled) {
		err = berr
	}
	if err == nil {
		var expr expression.Expression
		expr, err = expression.NewBuilder().
			// WAITING too: this very write, landed and its reply lost, sent
			// again by the SDK, must pass (it changes nothing then).
			WithCondition(expression.Name(attrRun).Equal(expression.Value(runID)).
				And(expression.Name("state").In(expression.Value(poolPreparing), expression.Value(poolWaiting)))).
			WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolWaiting)).
				Set(expression.Name("run_seen_ms"), expression.Value(e.now().UnixMilli()))).Build()
		if err == nil {
			// Ridden out as the reset's other calls; sent again after a
			// lost reply, it passes its own condition (WAITING, above).
			err = e.coordinatorOutage(n.BatchDate).Do(ctx, func(ctx context.Context) error {
				return e.update(ctx, n.BatchDate, skPool, expr)
			})
		}
	}
	if err != nil {
		e.abandon(context.WithoutCancel(ctx), n.BatchDate, runID)
		return "", fmt.Errorf("reset night %s: %w", n.BatchDate, err)
	}
	return runID, nil
}

// takeNight writes the new run's pool item if the night is free: no pool,
// a run that is over, or a coordinator silent for StaleAfter. Otherwise it
// returns a *BusyError naming the run that holds the night.
func (e *Executor) takeNight(ctx context.Context, date string, pool map[string]types.AttributeValue, now, seenSeq int64) error {
	free := expression.AttributeNotExists(expression.Name(attrSK)).
		Or(expression.Name("state").In(expression.Value(poolDone), expression.Value(poolAbandoned)),
			expression.Name("run_seen_ms").LessThan(expression.Value(now-StaleAfter.Milliseconds())))
	if seenSeq > 0 { // the pool read is still the one the sequence number follows
		free = free.And(expression.Name(attrRunSeq).Equal(expression.Value(seenSeq)))
	} else {
		free = free.And(expression.AttributeNotExists(expression.Name(attrRunSeq)))
	}
	expr, err := expression.NewBuilder().WithCondition(free).Build()
	if err != nil {
		return fmt.Errorf("build take: %w", err)
	}
	// Sent again while DynamoDB gives no answer, like the coordinator's
	// other calls. A take that landed and lost its reply is refused when
	// sent again (the sequence moved on): the pool then names this very
	// run, which is the take's success, not a busy night.
	err = e.coordinatorOutage(date).Do(ctx, func(ctx context.Context) error {
		_, err := dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return e.db.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.db.Name()), Item: pool,
				ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		})
		return err
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var old poolItem
		if ccf.Item == nil || attributevalue.UnmarshalMap(ccf.Item, &old) != nil {
			if p, ok, rerr := e.readPool(ctx, date); rerr == nil && ok {
				old = p
			}
		}
		if mine, ok := pool[attrRun].(*types.AttributeValueMemberS); ok && old.RunID == mine.Value {
			return nil // this take landed; its reply was lost
		}
		return &BusyError{BatchDate: date, RunID: old.RunID, Host: old.Host, PID: old.PID,
			Started: time.UnixMilli(old.StartedMS), Seen: e.now().Sub(time.UnixMilli(old.SeenMS))}
	}
	if err != nil {
		return fmt.Errorf("take night %s: %w", date, err)
	}
	return nil
}

// reset deletes the previous run's items of the night (attempts, dead
// letters, workers, jobs no longer in it) and writes the new run's jobs.
func (e *Executor) reset(ctx context.Context, n queuekit.Night, runID string, jobs []types.WriteRequest) error {
	// The night's items, ridden out as the coordinator's other calls: a
	// Query whose reply was lost is read again from its first page.
	var old []map[string]types.AttributeValue
	err := e.coordinatorOutage(n.BatchDate).Do(ctx, func(ctx context.Context) error {
		var err error
		old, err = e.nightItems(ctx, n.BatchDate, "")
		return err
	})
	if err != nil {
		return err
	}
	// Jobs are rewritten in place; one batch may not name a key twice.
	rewritten := map[string]bool{skPool: true}
	for _, j := range n.Jobs {
		rewritten[jobSK(j.JobID)] = true
	}
	var reqs []types.WriteRequest
	for _, it := range old {
		if sk, ok := it[attrSK].(*types.AttributeValueMemberS); ok && rewritten[sk.Value] {
			continue
		}
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{
			attrDate: it[attrDate], attrSK: it[attrSK]}}})
	}
	return e.fencedWrite(ctx, n.BatchDate, runID, append(reqs, jobs...))
}

// ResetChunk is how many item writes of a reset go in one transaction: the
// TransactWriteItems limit of 100 actions, less the pool's ConditionCheck.
const ResetChunk = 99

// resetGuard is the condition of every write of run runID's reset, checked
// on the night's pool item in the same transaction: the night is still this
// run's, and still PREPARING. Once a newer run has taken the night (or this
// run has moved on), every write of the reset is refused.
func resetGuard(runID string) expression.ConditionBuilder {
	return expression.Name(attrRun).Equal(expression.Value(runID)).
		And(expression.Name("state").Equal(expression.Value(poolPreparing)))
}

// ReplacedError says that a run lost its night to a newer run: a write of
// its own was refused by the run fence.
type ReplacedError struct {
	BatchDate, RunID string
	Op               string // what the run was doing, e.g. "reset"
}

func (e *ReplacedError) Error() string {
	return fmt.Sprintf("night %s: run %s was replaced by another run during its %s; nothing more of it was written", e.BatchDate, e.RunID, e.Op)
}

// fencedWrite writes a reset's puts and deletes in transactions of
// ResetChunk items, in order, each with a ConditionCheck of resetGuard on
// the pool item, so that no write of the reset lands once the run has lost
// the night (a *ReplacedError). The SDK gives each transaction an
// idempotency token (ClientRequestToken), so a transaction whose reply was
// lost and that the SDK sends again is not applied twice. A transaction
// conflict (the run's own heartbeat writing the pool item at that moment)
// is sent again after a short backoff.
func (e *Executor) fencedWrite(ctx context.Context, date, runID string, reqs []types.WriteRequest) error {
	guard, err := expression.NewBuilder().WithCondition(resetGuard(runID)).Build()
	if err != nil {
		return fmt.Errorf("build reset guard: %w", err)
	}
	table := aws.String(e.db.Name())
	check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key(date, skPool),
		ConditionExpression: guard.Condition(), ExpressionAttributeNames: guard.Names(), ExpressionAttributeValues: guard.Values()}}
	for start := 0; start < len(reqs); start += ResetChunk {
		chunk := reqs[start:min(start+ResetChunk, len(reqs))]
		items := make([]types.TransactWriteItem, 0, len(chunk)+1)
		items = append(items, check)
		for _, r := range chunk {
			switch {
			case r.PutRequest != nil:
				items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: r.PutRequest.Item}})
			case r.DeleteRequest != nil:
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: r.DeleteRequest.Key}})
			}
		}
		for attempt := 1; ; attempt++ {
			// No answer: the same transaction (its puts and deletes are the
			// same whenever they land, and its guard still holds for this
			// run) is sent again, ridden out as the coordinator's other calls.
			in := &dynamodb.TransactWriteItemsInput{TransactItems: items}
			err = e.coordinatorOutage(date).Do(ctx, func(ctx context.Context) error {
				_, err := dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
					return e.db.Client().TransactWriteItems(ctx, in)
				})
				return err
			})
			if err == nil {
				break
			}
			if fence.Refused(err, 0) {
				return &ReplacedError{BatchDate: date, RunID: runID, Op: "reset"}
			}
			if !fence.Conflict(err) || attempt >= 10 {
				return fmt.Errorf("reset night %s (items %d to %d of %d): %w", date, start+1, start+len(chunk), len(reqs), err)
			}
			if err := wait.Sleep(ctx, time.Duration(attempt)*20*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepAlive heartbeats the run's pool once a second until ctx ends; it
// returns the error that stopped it (a replaced run, DynamoDB silent for
// longer than CoordinatorRideOut).
func (e *Executor) keepAlive(ctx context.Context, date, runID string) error {
	beats := e.coordinatorOutage(date)
	for {
		if err := wait.Sleep(ctx, time.Second); err != nil {
			return err
		}
		if err := beats.Ride(ctx, e.touch(ctx, date, runID)); err != nil {
			return err
		}
	}
}

func descending(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// Start waits until the slots that joined the run reach its capacity, then
// starts the night clock (state RUNNING, minute 0 = now). It keeps the run's
// heartbeat until ctx ends or the night is done.
func (e *Executor) Start(ctx context.Context, date, runID string) error {
	var touched time.Time
	// Reads and heartbeats ride out an outage each on their own, so that
	// reads that get through cannot hide heartbeats that do not.
	reads, beats := e.coordinatorOutage(date), e.coordinatorOutage(date)
	for {
		p, ok, err := e.readPool(ctx, date)
		if err = reads.Ride(ctx, err); err != nil {
			return err
		}
		if reads.Lasted() > 0 { // not answered: read again
			continue
		}
		if !ok || p.RunID != runID {
			return &ReplacedError{BatchDate: date, RunID: runID, Op: "start"}
		}
		if p.State != poolWaiting {
			return nil
		}
		if p.Joined >= p.Capacity {
			now := e.now().UnixMilli()
			expr, err := expression.NewBuilder().
				WithCondition(expression.Name("run_id").Equal(expression.Value(runID)).
					And(expression.Name("state").Equal(expression.Value(poolWaiting)))).
				WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolRunning)).
					Set(expression.Name("t0_ms"), expression.Value(now)).
					Set(expression.Name("run_seen_ms"), expression.Value(now))).Build()
			if err != nil {
				return fmt.Errorf("build start: %w", err)
			}
			// Refused: the pool moved on (another start, a newer run), and the
			// next read says which. A transaction conflict (a worker's join or
			// claim held the pool item, as AWS answers it) refused nothing:
			// read again and send the start again. Either way the loop ends
			// only once the pool has left WAITING.
			if err := e.update(ctx, date, skPool, expr); err != nil && !lostRace(err) {
				if err := reads.Ride(ctx, err); err != nil {
					return fmt.Errorf("start night %s: %w", date, err)
				}
			}
			if err := wait.Sleep(ctx, 20*time.Millisecond); err != nil {
				return err
			}
			continue
		}
		if time.Since(touched) >= time.Second {
			if err := beats.Ride(ctx, e.touch(ctx, date, runID)); err != nil {
				return err
			}
			touched = time.Now()
		}
		if err := wait.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// touch records that the run is alive.
func (e *Executor) touch(ctx context.Context, date, runID string) error {
	expr, err := expression.NewBuilder().
		WithCondition(expression.Name("run_id").Equal(expression.Value(runID))).
		WithUpdate(expression.Set(expression.Name("run_seen_ms"), expression.Value(e.now().UnixMilli()))).Build()
	if err != nil {
		return fmt.Errorf("build heartbeat: %w", err)
	}
	if err := e.update(ctx, date, skPool, expr); err != nil {
		switch {
		case fence.Refused(err):
			return &ReplacedError{BatchDate: date, RunID: runID, Op: "heartbeat"}
		case fence.Conflict(err):
			// A transaction (a worker's counters, the reset) was writing the
			// pool item at that moment: this beat did not land; the next
			// one, a second later, will (StaleAfter is ten beats).
			return nil
		}
		return fmt.Errorf("run heartbeat of night %s: %w", date, err)
	}
	return nil
}

// updateOld is update asking for the item's old image when the condition
// fails (for fence.Check), and for the consumed capacity (table and
// indexes), given to units when the write lands and units is not nil.
func (e *Executor) updateOld(ctx context.Context, date, sk string, expr expression.Expression, units func(...types.ConsumedCapacity)) error {
	out, err := e.db.UpdateItem(ctx, key(date, sk), expr, func(in *dynamodb.UpdateItemInput) {
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	})
	if err == nil && units != nil && out.ConsumedCapacity != nil {
		units(*out.ConsumedCapacity)
	}
	return err
}

// update runs one conditional UpdateItem.
func (e *Executor) update(ctx context.Context, date, sk string, expr expression.Expression) error {
	_, err := e.db.UpdateItem(ctx, key(date, sk), expr)
	return err
}

// WaitDone waits until every job of the run has ended (SUCCESS or
// FATAL_FAILURE), keeping the run's heartbeat, then marks the night DONE so
// workers leave. progress, if not nil, is called about ten times a second
// with the jobs ended (Done) of all (Total) and a Note such as
// "3 running, minute 41.5".
func (e *Executor) WaitDone(ctx context.Context, date, runID string, progress func(queuekit.Progress)) error {
	last := time.Time{}
	reads, beats := e.coordinatorOutage(date), e.coordinatorOutage(date)
	live := &liveness{e: e, date: date, run: runID}
	for {
		p, ok, err := e.readPool(ctx, date)
		if err = reads.Ride(ctx, err); err != nil {
			return err
		}
		if reads.Lasted() > 0 { // not answered: read again
			continue
		}
		if !ok || p.RunID != runID {
			return &ReplacedError{BatchDate: date, RunID: runID, Op: "run"}
		}
		// Workers that all left (gave up, were killed) leave the night to
		// the next workers: say so, and re-queue their expired leases.
		note, err := live.look(ctx, p)
		if err = reads.Ride(ctx, err); err != nil {
			return err
		}
		if progress != nil {
			msg := fmt.Sprintf("%d running, minute %.1f", len(p.Running), e.minute(p))
			if note != "" {
				msg += "; " + note
			}
			progress(queuekit.Progress{Done: p.Ended, Total: p.Jobs, Note: msg})
		}
		if p.Ended >= p.Jobs {
			expr, err := expression.NewBuilder().
				WithCondition(expression.Name("run_id").Equal(expression.Value(runID))).
				WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolDone))).Build()
			if err != nil {
				return fmt.Errorf("build done: %w", err)
			}
			// Idempotent (a SET under the run's id): sent again until answered.
			if err := reads.Do(ctx, func(ctx context.Context) error { return e.update(ctx, date, skPool, expr) }); err != nil {
				return fmt.Errorf("mark night %s done: %w", date, err)
			}
			return nil
		}
		if time.Since(last) > time.Second {
			if err := beats.Ride(ctx, e.touch(ctx, date, runID)); err != nil {
				return err
			}
			last = time.Now()
		}
		if err := wait.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// abandon marks an interrupted or failed run's night ABANDONED (if it is
// still that run's and not done), so its workers leave and the next run need
// not wait StaleAfter. Best effort: if it fails, the night frees itself
// after StaleAfter.
func (e *Executor) abandon(ctx context.Context, date, runID string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	expr, err := expression.NewBuilder().
		WithCondition(expression.Name("run_id").Equal(expression.Value(runID)).
			And(expression.Name("state").NotEqual(expression.Value(poolDone)))).
		WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolAbandoned))).Build()
	if err == nil {
		_ = e.update(ctx, date, skPool, expr)
	}
}

// minute is the night's clock for pool p now.
func (e *Executor) minute(p poolItem) float64 {
	if p.T0 == 0 {
		return 0
	}
	return float64(e.now().UnixMilli()-p.T0) / p.MinuteMS
}

// RunConfig is Run's configuration: the night's settings, which Prepare
// records for every worker, and this process's own part in the run.
type RunConfig struct {
	Config
	// Slots is how many of the pool's Workers slots this process runs
	// itself, 0 to Workers (0: none; the rest join with Join from other
	// processes, e.g. `queuekit worker`).
	Slots int
	// Work runs one job in this process's slots (nil: Sleep, the job's
	// runtime scaled by Minute).
	Work WorkFunc
	// Progress, if not nil, gets the run's progress about ten times a
	// second: jobs ended of all, and what is running (see WaitDone).
	Progress func(queuekit.Progress)
}

// Run runs a night start to end in this process: Prepare, rc.Slots of
// this process's own, Start, WaitDone, then the Report, which must pass
// Verify for Run to succeed.
func (e *Executor) Run(ctx context.Context, n queuekit.Night, rc RunConfig) (Report, error) {
	cfg := rc.Config.WithDefaults()
	slots, work, progress := rc.Slots, rc.Work, rc.Progress
	if slots < 0 || slots > cfg.Workers {
		return Report{}, fmt.Errorf("slots = %d: this process can provide 0 to %d of the pool's slots", slots, cfg.Workers)
	}
	runID, err := e.Prepare(ctx, n, cfg)
	if err != nil {
		return Report{}, err
	}
	parent := ctx
	finished := false
	defer func() {
		if !finished { // interrupted or failed: free the night for the next run at once
			e.abandon(context.WithoutCancel(parent), n.BatchDate, runID)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	werr := make(chan error, 1)
	if slots > 0 {
		go func() {
			_, err := e.Join(ctx, n.BatchDate, WorkerConfig{Slots: slots, Work: work})
			werr <- err
		}()
	} else {
		werr <- nil
	}
	done := make(chan error, 1)
	go func() {
		if err := e.Start(ctx, n.BatchDate, runID); err != nil {
			done <- err
			return
		}
		done <- e.WaitDone(ctx, n.BatchDate, runID, progress)
	}()
	var joinErr error
	joined := false
	select {
	case err := <-done:
		if err != nil {
			return Report{}, err
		}
	case joinErr = <-werr:
		joined = true
		if joinErr != nil {
			return Report{}, joinErr
		}
		if err := <-done; err != nil {
			return Report{}, err
		}
	}
	finished = true // the night is DONE
	if !joined {    // this process's slots leave at their next poll
		if err := <-werr; err != nil {
			return Report{}, err
		}
	}
	var rep Report
	err = e.coordinatorOutage(n.BatchDate).Do(context.WithoutCancel(ctx), func(ctx context.Context) (err error) {
		rep, err = e.Report(ctx, n, cfg.Workers)
		return err
	})
	if err != nil {
		return Report{}, err
	}
	// A run reports success only when the night kept every promise.
	if err := rep.Verify(n); err != nil {
		return rep, err
	}
	return rep, nil
}
