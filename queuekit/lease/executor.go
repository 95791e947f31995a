package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Defaults of Config.
const (
	DefaultMinute   = 50 * time.Millisecond
	DefaultMaxRetry = 3
	DefaultBackoff  = 1.0 // job-minutes before the first retry; doubles each retry
	DefaultLease    = 2 * time.Second
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
	MaxRetry int           // retries after the first attempt (default 3; negative means 0)
	Backoff  float64       // job-minutes before the first retry, doubling (default 1)
	Shards   int           // partitions per priority in the claimable index (default 1)
}

// WithDefaults returns the configuration with every zero field set to its
// default, as a run uses it.
func (c Config) WithDefaults() Config {
	c.fill()
	return c
}

func (c *Config) fill() {
	if c.Policy == "" {
		c.Policy = sim.Barrier
	}
	if p, err := sim.ParsePolicy(string(c.Policy)); err == nil {
		c.Policy = p // "backfill" is recorded as easy
	}
	if c.Minute == 0 {
		c.Minute = DefaultMinute
	}
	if c.Poll == 0 {
		c.Poll = min(max(c.Minute/4, 10*time.Millisecond), time.Second)
	}
	if c.Lease == 0 {
		c.Lease = max(DefaultLease, 8*c.Poll)
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = DefaultMaxRetry
	}
	c.MaxRetry = max(c.MaxRetry, 0)
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
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
	case !(c.Backoff > 0) || math.IsInf(c.Backoff, 0):
		return fmt.Errorf("backoff = %v job-minutes: must be a finite number > 0", c.Backoff)
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
	cat *catalog.Catalog // the job catalog
	db  *catalog.Catalog // the companion table, sharing the catalog's client
	now func() time.Time
}

// New returns an executor for the catalog. It does not contact DynamoDB.
func New(cat *catalog.Catalog) (*Executor, error) {
	db, err := cat.Sibling(cat.Table() + TableSuffix)
	if err != nil {
		return nil, fmt.Errorf("executor table: %w", err)
	}
	return &Executor{cat: cat, db: db, now: time.Now}, nil
}

// Table is the companion table's name.
func (e *Executor) Table() string { return e.db.Table() }

// CreateTable creates the companion table and its indexes if missing.
func (e *Executor) CreateTable(ctx context.Context) error { return e.createTable(ctx) }

// DeleteTable deletes the companion table (tests, instructors).
func (e *Executor) DeleteTable(ctx context.Context) error { return e.db.DeleteTable(ctx) }

// BusyError says that a night is already running.
type BusyError struct {
	BatchDate string
	RunID     string
	Seen      time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("night %s is already running (run %s, seen %.1f s ago): wait for it to end, or stop it and retry after %s",
		e.BatchDate, e.RunID, e.Seen.Seconds(), StaleAfter)
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
	if err != nil {
		return queuekit.Night{}, err
	}
	if len(n.Jobs) == 0 {
		return queuekit.Night{}, &NoNightError{BatchDate: date, Table: e.cat.Table()}
	}
	return n, nil
}

// Prepare resets a night's execution state for a run: it refuses a night
// that is running (a *BusyError), deletes the previous run's items, writes
// one JOB item per job (NOT_STARTED, claimable at its arrival minute) and the
// POOL item in state WAITING. It writes nothing when it refuses.
func (e *Executor) Prepare(ctx context.Context, n queuekit.Night, cfg Config) (string, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	if len(n.Jobs) == 0 {
		return "", &NoNightError{BatchDate: n.BatchDate, Table: e.cat.Table()}
	}
	if err := e.createTable(ctx); err != nil {
		return "", err
	}
	if p, ok, err := e.readPool(ctx, n.BatchDate); err != nil {
		return "", err
	} else if ok && p.State != poolDone {
		if seen := e.now().Sub(time.UnixMilli(p.SeenMS)); seen < StaleAfter {
			return "", &BusyError{BatchDate: n.BatchDate, RunID: p.RunID, Seen: seen}
		}
	}
	old, err := e.nightItems(ctx, n.BatchDate, "")
	if err != nil {
		return "", err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	runID := hex.EncodeToString(b[:])
	// Jobs are rewritten in place; every other item of the previous run
	// (attempts, dead letters, workers) is deleted. One batch may not name
	// a key twice.
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
	xp, op := map[int]bool{}, map[int]bool{}
	for _, j := range n.Jobs {
		arr := float64(j.ArrivalMinute(n.Window))
		it := jobItem{BatchDate: n.BatchDate, SK: jobSK(j.JobID), JobID: j.JobID, Class: j.WorkloadClass,
			Priority: j.Priority, Arrival: arr, Estimate: float64(j.RuntimeMinutes), Exclusive: j.RequiresExclusiveLock,
			Status: NotStarted, MaxRetry: cfg.MaxRetry,
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
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	if err := e.batchWrite(ctx, reqs); err != nil {
		return "", fmt.Errorf("reset night %s: %w", n.BatchDate, err)
	}
	p := poolItem{BatchDate: n.BatchDate, SK: skPool, RunID: runID, State: poolWaiting, Capacity: cfg.Workers,
		Policy: string(cfg.Policy), MinuteMS: float64(cfg.Minute) / float64(time.Millisecond), PollMS: cfg.Poll.Milliseconds(),
		LeaseMS: cfg.Lease.Milliseconds(), MaxRetry: cfg.MaxRetry, Backoff: cfg.Backoff, Shards: cfg.Shards,
		Slots: make([]string, cfg.Workers), Running: map[string]float64{}, Jobs: len(n.Jobs),
		XPriority: descending(xp), OPriority: descending(op), SeenMS: e.now().UnixMilli(),
		CutoffMin: float64(n.Window.Minutes()), WindowFrom: n.Window.Start}
	av, err := attributevalue.MarshalMap(p)
	if err != nil {
		return "", fmt.Errorf("marshal pool: %w", err)
	}
	_, err = catalog.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return e.db.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.db.Table()), Item: av})
	})
	if err != nil {
		return "", fmt.Errorf("write pool of night %s: %w", n.BatchDate, err)
	}
	return runID, nil
}

func descending(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// batchWrite writes requests 25 at a time, resending unprocessed items.
func (e *Executor) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	for len(reqs) > 0 {
		n := min(25, len(reqs))
		batch := reqs[:n]
		reqs = reqs[n:]
		for attempt := 0; len(batch) > 0; attempt++ {
			if attempt > 10 {
				return fmt.Errorf("%d items unprocessed after 10 attempts", len(batch))
			}
			out, err := catalog.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.BatchWriteItemOutput, error) {
				return e.db.Client().BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
					RequestItems: map[string][]types.WriteRequest{e.db.Table(): batch}})
			})
			if err != nil {
				return err
			}
			batch = out.UnprocessedItems[e.db.Table()]
			if len(batch) > 0 {
				if err := sleep(ctx, time.Duration(10<<attempt)*time.Millisecond); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Start waits until the slots that joined the run reach its capacity, then
// starts the night clock (state RUNNING, minute 0 = now). It keeps the run's
// heartbeat until ctx ends or the night is done.
func (e *Executor) Start(ctx context.Context, date, runID string) error {
	for {
		p, ok, err := e.readPool(ctx, date)
		if err != nil {
			return err
		}
		if !ok || p.RunID != runID {
			return fmt.Errorf("night %s: run %s was replaced by another run", date, runID)
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
			if err := e.update(ctx, date, skPool, expr); err != nil && !lostRace(err) {
				return fmt.Errorf("start night %s: %w", date, err)
			}
			return nil
		}
		if err := e.touch(ctx, date, runID); err != nil {
			return err
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
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
		if lostRace(err) {
			return fmt.Errorf("night %s: run %s was replaced by another run", date, runID)
		}
		return fmt.Errorf("run heartbeat of night %s: %w", date, err)
	}
	return nil
}

// update runs one conditional UpdateItem.
func (e *Executor) update(ctx context.Context, date, sk string, expr expression.Expression) error {
	_, err := catalog.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return e.db.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.db.Table()),
			Key: key(date, sk), ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	})
	return err
}

// Progress is what a run reports while it waits: jobs ended of all, jobs
// running, and the night's minute.
type Progress struct {
	Ended, Jobs, Running int
	Minute               float64
}

// WaitDone waits until every job of the run has ended (SUCCESS or
// FATAL_FAILURE), keeping the run's heartbeat, then marks the night DONE so
// workers leave. progress, if not nil, is called about ten times a second.
func (e *Executor) WaitDone(ctx context.Context, date, runID string, progress func(Progress)) error {
	last := time.Time{}
	for {
		p, ok, err := e.readPool(ctx, date)
		if err != nil {
			return err
		}
		if !ok || p.RunID != runID {
			return fmt.Errorf("night %s: run %s was replaced by another run", date, runID)
		}
		if progress != nil {
			progress(Progress{Ended: p.Ended, Jobs: p.Jobs, Running: len(p.Running), Minute: e.minute(p)})
		}
		if p.Ended >= p.Jobs {
			expr, err := expression.NewBuilder().
				WithCondition(expression.Name("run_id").Equal(expression.Value(runID))).
				WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolDone))).Build()
			if err != nil {
				return fmt.Errorf("build done: %w", err)
			}
			if err := e.update(ctx, date, skPool, expr); err != nil {
				return fmt.Errorf("mark night %s done: %w", date, err)
			}
			return nil
		}
		if time.Since(last) > time.Second {
			if err := e.touch(ctx, date, runID); err != nil {
				return err
			}
			last = time.Now()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// abandon marks an interrupted run's night DONE (if it is still that run),
// so its workers leave and the next run need not wait StaleAfter. Best
// effort: if it fails, the night frees itself after StaleAfter.
func (e *Executor) abandon(ctx context.Context, date, runID string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	expr, err := expression.NewBuilder().
		WithCondition(expression.Name("run_id").Equal(expression.Value(runID))).
		WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolDone))).Build()
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

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Run runs a night start to end in this process: Prepare, slots of this
// process's own (0..cfg.Workers; the rest must join with Join from other
// processes), Start, WaitDone, then the Report. work nil means the scaled
// sleep.
func (e *Executor) Run(ctx context.Context, n queuekit.Night, cfg Config, slots int, work WorkFunc, progress func(Progress)) (Report, error) {
	cfg = cfg.WithDefaults()
	if slots < 0 || slots > cfg.Workers {
		return Report{}, fmt.Errorf("slots = %d: this process can provide 0 to %d of the pool's slots", slots, cfg.Workers)
	}
	runID, err := e.Prepare(ctx, n, cfg)
	if err != nil {
		return Report{}, err
	}
	parent := ctx
	defer func() {
		if parent.Err() != nil { // interrupted: free the night for the next run at once
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
	if !joined { // the night is DONE: this process's slots leave at their next poll
		if err := <-werr; err != nil {
			return Report{}, err
		}
	}
	return e.Report(context.WithoutCancel(ctx), n, cfg.Workers)
}
