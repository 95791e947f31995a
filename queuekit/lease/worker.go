package lease

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Job is what a work function is given: one attempt of one job.
type Job struct {
	ID        string
	Class     string
	Priority  int
	Exclusive bool
	Estimate  float64 // estimated runtime, job-minutes
	Attempt   int     // 1 for the first attempt
	Slots     []int   // pool slots held (all of them for an exclusive job)
	Worker    string  // the worker process's name
	// Run is the run the attempt belongs to, and Token the attempt's
	// fencing token for the stores the work writes to, unique and growing
	// across the night's runs: the run's sequence number (1, 2, ... for the
	// night's successive runs) times 2^32 plus the job item's fence_token
	// its claim set (which restarts at 0 each run). A store can then refuse
	// a write whose token is older than one it has seen (Kleppmann's
	// fencing, carried past DynamoDB to the work's own store; see package
	// results).
	Run   string
	Token int64
}

// WorkFunc does one attempt of a job. d is the job's estimated runtime on
// the night's clock. It must return when ctx ends (the lease was lost). A
// nil error is SUCCESS; an error wrapped with queuekit.Fatal ends the job
// FATAL_FAILURE at once; any other error is retried with backoff while
// retries remain.
type WorkFunc func(ctx context.Context, j Job, d time.Duration) error

// Sleep is the default WorkFunc: it sleeps for d.
func Sleep(ctx context.Context, _ Job, d time.Duration) error { return wait.Sleep(ctx, d) }

// WorkerConfig configures one worker process's part of a run.
type WorkerConfig struct {
	Slots int      // jobs this process runs at once, at least 1
	Name  string   // the worker's name in the table (default host-pid-random)
	Work  WorkFunc // default Sleep
	// Wait is how long to wait for a run of the night to be prepared (default
	// 0: it must exist already).
	Wait time.Duration
	// Minute, when not zero, must equal the run's job-minute.
	Minute time.Duration
	// Progress, if not nil, gets this process's progress about once a
	// second: jobs succeeded here (Done; Total 0, the night's jobs are
	// shared) and a Note naming it and its claims ("worker w1: claims won
	// 12, lost 3"). Join's
	// result has every counter (WorkerStats).
	Progress func(queuekit.Progress)
	// Logf, if not nil, gets one line per event worth a log line (a late
	// end refused by its fencing condition).
	Logf func(format string, args ...any)
}

// WorkerStats counts what one worker process did.
type WorkerStats struct {
	Name     string `json:"worker"`
	Won      int    `json:"claims_won"`         // jobs claimed
	Batches  int    `json:"claim_transactions"` // claim transactions that won (one may claim several jobs)
	Lost     int    `json:"claims_lost"`        // claim transactions that lost a race: counted, never errors
	Finished int    `json:"jobs_succeeded"`
	Failed   int    `json:"attempts_failed"`
	Dropped  int    `json:"leases_lost"` // attempts whose lease could not be kept (cut short, or lost before their end)
	Reaped   int    `json:"leases_reaped"`
	// Fenced counts ends this process sent after its lease had passed to
	// another tenure: refused by their fencing condition, so never a second
	// end.
	Fenced int `json:"ends_fenced"`
	// TableWU and IndexWU are the write units DynamoDB reported consumed
	// (ReturnConsumedCapacity INDEXES) by this process's writes about jobs
	// that succeeded: claim transactions, starts, heartbeats, end transactions
	// (its own and the reaper's), split between the table and its indexes.
	// Refused writes report nothing (AWS still bills them) and the
	// WORKER# counters' own writes are not counted, as in queuekit/fleet.
	TableWU float64 `json:"table_wu"`
	IndexWU float64 `json:"index_wu"`
}

// NoRunError says that no run of the night is prepared or running.
type NoRunError struct{ BatchDate string }

func (e *NoRunError) Error() string {
	return fmt.Sprintf("no run of night %s is waiting for workers: start one with `queuekit run --batch-date %s --workers N --slots K`",
		e.BatchDate, e.BatchDate)
}

// OrphanError says that the run a worker joined is gone: its coordinator
// stopped heartbeating the pool, abandoned the run, or another run took the
// night over. The worker leaves; its attempts in flight are ended by the
// reaper of the next run's workers or written off when the night is reset.
type OrphanError struct {
	BatchDate, RunID string
	Reason           string
}

func (e *OrphanError) Error() string {
	return fmt.Sprintf("run %s of night %s has stopped: %s; this worker leaves (start a new run with `queuekit run --batch-date %s`, then workers)",
		e.RunID, e.BatchDate, e.Reason, e.BatchDate)
}

func (w *worker) orphan(reason string) error {
	return &OrphanError{BatchDate: w.date, RunID: w.run, Reason: reason}
}

// worker is one process's part of a run.
type worker struct {
	e        *Executor
	date     string
	run      string
	name     string
	p        poolItem // configuration part of the pool, as joined
	work     WorkFunc
	mu       sync.Mutex
	stats    WorkerStats
	synced   WorkerStats // counters already added to WORKER#<name>
	progress func(queuekit.Progress)
	log      func(format string, args ...any)
	profile  sim.Profile          // conservative's free-slot profile, reused by the claimer loop
	seen     map[string]leaseSeen // the reaper's observations of held leases
	// answered is when a heartbeat of one of its jobs last got through
	// (under mu): its claim loop rides out an outage timed from then.
	answered time.Time
}

// heard records that DynamoDB answered one of the worker's heartbeats.
func (w *worker) heard() {
	w.mu.Lock()
	w.answered = time.Now()
	w.mu.Unlock()
}

// lastAnswered is when a heartbeat of the worker last got through.
func (w *worker) lastAnswered() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answered
}

// Join joins the night's run with wc.Slots slots from this process and works
// until the night is done. It returns this process's counters.
func (e *Executor) Join(ctx context.Context, date string, wc WorkerConfig) (WorkerStats, error) {
	if wc.Slots < 1 {
		return WorkerStats{}, fmt.Errorf("slots = %d: a worker needs at least 1 slot", wc.Slots)
	}
	if wc.Work == nil {
		wc.Work = Sleep
	}
	if wc.Name == "" {
		host, _ := os.Hostname()
		var b [2]byte
		_, _ = crand.Read(b[:])
		wc.Name = host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	}
	deadline := time.Now().Add(wc.Wait)
	var p poolItem
	reads := e.db.Outage(StaleAfter, fmt.Sprintf("worker %s of night %s", wc.Name, date),
		"check the network to DynamoDB, then start the worker again")
	answered := false // DynamoDB has answered this worker once: an outage is ridden out from then on
	for {
		q, ok, err := e.readPool(ctx, date)
		var missing *catalog.TableMissingError
		if errors.As(err, &missing) { // no run has created the table yet
			ok, err = false, nil
		}
		if err != nil && !answered {
			// Never answered: a wrong endpoint or a server not started,
			// not an outage to ride out; say so at once.
			return WorkerStats{}, err
		}
		if err = reads.Ride(ctx, err); err != nil {
			return WorkerStats{}, err
		}
		if reads.Lasted() > 0 { // not answered: read again
			continue
		}
		answered = true
		// A run that is preparing is waited for; a run whose coordinator
		// went silent is not joined (its night is free for the next run).
		if ok && (q.State == poolWaiting || q.State == poolRunning) && time.Since(time.UnixMilli(q.SeenMS)) < StaleAfter {
			p = q
			break
		}
		if time.Now().After(deadline) {
			return WorkerStats{}, &NoRunError{BatchDate: date}
		}
		if err := wait.Sleep(ctx, 50*time.Millisecond); err != nil {
			return WorkerStats{}, err
		}
	}
	if wc.Slots > p.Capacity {
		return WorkerStats{}, &LimitError{Flag: "--slots", Value: wc.Slots, Max: p.Capacity,
			Why: fmt.Sprintf("the run %s of night %s has a pool of %d slots, and a worker cannot hold more slots than the pool has", p.RunID, date, p.Capacity)}
	}
	if wc.Minute != 0 && math.Abs(float64(wc.Minute)/float64(time.Millisecond)-p.MinuteMS) > 1e-9 {
		return WorkerStats{}, fmt.Errorf("minute = %s, but the run of night %s uses %g ms per job-minute: pass the run's value or leave it out",
			wc.Minute, date, p.MinuteMS)
	}
	w := &worker{e: e, date: date, run: p.RunID, name: wc.Name, p: p, work: wc.Work, progress: wc.Progress, log: wc.Logf}
	w.stats.Name = wc.Name
	if err := w.join(ctx, wc.Slots); err != nil {
		return WorkerStats{}, err
	}
	err := w.loop(ctx, wc.Slots)
	// The last counters (idempotent SETs) are sent until answered, unless
	// the worker is giving up on an outage already.
	if err == nil {
		err = w.outage().Do(context.WithoutCancel(ctx), func(ctx context.Context) error { return w.flush(ctx, wc.Slots) })
	} else {
		_ = w.flush(context.WithoutCancel(ctx), wc.Slots)
	}
	return w.snapshot(), err
}

// join adds the worker's slots to the pool's joined count, once: in one
// transaction with the creation of its WORKER# item, which names the join
// (a nonce). A join whose reply was lost after it had landed, sent again by
// the SDK, is refused by its own WORKER# item and recognised by the nonce,
// so the pool never counts a process's slots twice.
func (w *worker) join(ctx context.Context, slots int) error {
	expr, err := expression.NewBuilder().
		WithCondition(expression.Name(attrRun).Equal(expression.Value(w.run)).
			And(expression.Name("state").In(expression.Value(poolWaiting), expression.Value(poolRunning)))).
		WithUpdate(expression.Add(expression.Name("joined"), expression.Value(slots))).Build()
	if err != nil {
		return fmt.Errorf("build join: %w", err)
	}
	nonce := token()
	item, err := attributevalue.MarshalMap(struct {
		BatchDate string `dynamodbav:"batch_date"`
		SK        string `dynamodbav:"sk"`
		Worker    string `dynamodbav:"worker"`
		Slots     int    `dynamodbav:"slots"`
		RunID     string `dynamodbav:"run_id"`
		Nonce     string `dynamodbav:"join_nonce"`
	}{w.date, prefixWorker + w.name, w.name, slots, w.run, nonce})
	if err != nil {
		return fmt.Errorf("marshal worker: %w", err)
	}
	table := aws.String(w.e.db.Name())
	absent, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(attrSK))).Build()
	if err != nil {
		return fmt.Errorf("build join: %w", err)
	}
	// A transaction conflict (another transaction held the pool item at the
	// same moment, as AWS answers it) refused nothing: send the same join
	// again, its nonce unchanged, until it lands or is refused.
	// No answer: the same join is sent again (ridden out), and recognised
	// by its nonce if it had landed.
	joining := w.outage()
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		err = joining.Do(ctx, func(ctx context.Context) error {
			_, err := dynamo.Call(ctx, w.e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
				return w.e.db.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					txUpdate(table, key(w.date, skPool), expr),
					{Put: &types.Put{TableName: table, Item: item, ConditionExpression: absent.Condition(), ExpressionAttributeNames: absent.Names(),
						ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
				}})
			})
			return err
		})
		if !fence.Conflict(err) {
			break
		}
		if serr := wait.Sleep(ctx, backoff); serr != nil {
			return fmt.Errorf("join night %s: %w", w.date, serr)
		}
	}
	switch {
	case err == nil:
		return nil
	case fence.Refused(err, 1):
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) && len(tce.CancellationReasons) > 1 {
			if n, ok := tce.CancellationReasons[1].Item["join_nonce"].(*types.AttributeValueMemberS); ok && n.Value == nonce {
				return nil // our own join, landed before its reply was lost
			}
		}
		it, rerr := w.e.getItem(ctx, w.date, prefixWorker+w.name)
		if rerr != nil {
			return fmt.Errorf("join night %s: read back: %w", w.date, rerr)
		}
		if n, ok := it["join_nonce"].(*types.AttributeValueMemberS); ok && n.Value == nonce {
			return nil
		}
		return fmt.Errorf("join night %s: a worker named %s has already joined run %s: give each worker process its own --name", w.date, w.name, w.run)
	case lostRace(err):
		return &NoRunError{BatchDate: w.date}
	}
	return fmt.Errorf("join night %s: %w", w.date, err)
}

func (w *worker) snapshot() WorkerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

func (w *worker) count(fn func(s *WorkerStats)) {
	w.mu.Lock()
	fn(&w.stats)
	w.mu.Unlock()
}

// units adds consumed capacity to the worker's write units.
func (w *worker) units(ccs ...types.ConsumedCapacity) {
	total, index := catalog.WriteUnits(ccs...)
	w.count(func(s *WorkerStats) { s.TableWU += total - index; s.IndexWU += index })
}

// flush writes this process's counters to WORKER#<name>, in a transaction
// that checks the pool still belongs to this worker's run: a worker of an
// older run writes nothing into a newer run of the night. The counters are
// SET to this process's totals, not ADDed as deltas: a flush whose reply was
// lost and that the SDK sends again (it had landed) writes the same values
// again instead of counting twice. Each process writes only its own item,
// one flush at a time, so the totals only grow.
func (w *worker) flush(ctx context.Context, slots int) error {
	s := w.snapshot()
	expr, err := expression.NewBuilder().WithUpdate(counterUpdate(s, w.name, w.run, slots, w.e.now().UnixMilli())).Build()
	if err != nil {
		return fmt.Errorf("build worker counters: %w", err)
	}
	run, err := expression.NewBuilder().WithCondition(w.ofRun()).Build()
	if err != nil {
		return fmt.Errorf("build worker counters: %w", err)
	}
	table := aws.String(w.e.db.Name())
	_, err = dynamo.Call(ctx, w.e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
		return w.e.db.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key(w.date, skPool), ConditionExpression: run.Condition(),
				ExpressionAttributeNames: run.Names(), ExpressionAttributeValues: run.Values()}},
			txUpdate(table, key(w.date, prefixWorker+w.name), expr),
		}})
	})
	switch {
	case fence.Refused(err, 0): // a newer run holds the night: its tables are not ours to count in
		return nil
	case fence.Conflict(err): // counted at the next flush
		return nil
	case err != nil:
		return fmt.Errorf("write worker counters: %w", err)
	}
	w.synced = s
	if w.progress != nil {
		w.progress(queuekit.Progress{Done: s.Finished, Note: fmt.Sprintf("worker %s: claims won %d, lost %d", w.name, s.Won, s.Lost)})
	}
	return nil
}

// counterUpdate is the write of a worker's counters: idempotent SETs of its
// totals (see flush).
func counterUpdate(s WorkerStats, name, run string, slots int, nowMS int64) expression.UpdateBuilder {
	return expression.Set(expression.Name("won"), expression.Value(s.Won)).
		Set(expression.Name("lost"), expression.Value(s.Lost)).
		Set(expression.Name("finished"), expression.Value(s.Finished)).
		Set(expression.Name("fenced"), expression.Value(s.Fenced)).
		Set(expression.Name("table_wu"), expression.Value(s.TableWU)).
		Set(expression.Name("index_wu"), expression.Value(s.IndexWU)).
		Set(expression.Name("worker"), expression.Value(name)).
		Set(expression.Name("slots"), expression.Value(slots)).
		Set(expression.Name(attrRun), expression.Value(run)).
		Set(expression.Name("seen_ms"), expression.Value(nowMS))
}

// logf logs one line, if the worker has a log.
func (w *worker) logf(format string, args ...any) {
	if w.log != nil {
		w.log("worker %s: %s", w.name, fmt.Sprintf(format, args...))
	}
}

func (w *worker) minute() float64 { return w.minuteAt(w.e.now().UnixMilli()) }

// minuteAt is the night's clock at a Unix time in milliseconds.
func (w *worker) minuteAt(ms int64) float64 { return float64(ms-w.p.T0) / w.p.MinuteMS }

// claimed is a job this process won.
type claimed struct {
	job   jobItem
	slots []int
	atMS  int64     // when the claim was decided: its lease runs from here
	at    time.Time // the same instant with the monotonic clock, for timing the lease locally
}

// loop is the claimer: it reads the pool and the claimable index, claims for
// free slots, hands claimed jobs to the slot goroutines, and reaps expired
// leases.
func (w *worker) loop(ctx context.Context, slots int) error {
	g, gctx := errgroup.WithContext(ctx)
	jobs := make(chan claimed)
	finished := make(chan struct{}, slots)
	for range slots {
		g.Go(func() error {
			for c := range jobs {
				if err := w.execute(gctx, c); err != nil {
					return err
				}
				finished <- struct{}{}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(jobs)
		return w.claimLoop(gctx, slots, jobs, finished)
	})
	return g.Wait()
}

// ReapEvery is how long a worker's claim loop waits between two reads of
// the night's held leases (its reaper): a poll, or an eighth of the lease
// when that is longer. The loop looks once a poll, so an idle worker reaps
// on its first look at least ReapEvery after the last reap.
func ReapEvery(poll, lease time.Duration) time.Duration { return max(poll, lease/8) }

// claimLoop claims jobs for the free slots until the night is done: it
// reads the pool, checks the run is still its own and alive, reaps expired
// leases, and claims what the policy starts now, handing each job to a slot
// through jobs; finished says a slot came free. A step that gets no answer
// from DynamoDB is ridden out (the loop starts again after a backoff) until
// the outage passes WorkerRideOut.
func (w *worker) claimLoop(ctx context.Context, free int, jobs chan<- claimed, finished <-chan struct{}) error {
	poll := time.Duration(w.p.PollMS) * time.Millisecond
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	c := &claimer{w: w, free: free, finished: finished, poll: poll, reapEvery: ReapEvery(poll, lease), seen: w.p.SeenMS, seenAt: time.Now()}
	o := w.outage()
	for {
		done, err := c.step(ctx, jobs)
		if err = o.Ride(ctx, err); done || err != nil {
			return err
		}
	}
}

// step is one turn of claimLoop; done when the night is.
func (c *claimer) step(ctx context.Context, jobs chan<- claimed) (done bool, err error) {
	w := c.w
	c.collect()
	if time.Since(c.lastFlush) > time.Second {
		if err := w.flush(ctx, cap(c.finished)); err != nil {
			return false, err
		}
		c.lastFlush = time.Now()
	}
	p, ok, err := w.e.readPool(ctx, w.date)
	if err != nil {
		return false, err
	}
	if done, err := c.check(p, ok); done || err != nil {
		return done, err
	}
	if p.State == poolWaiting {
		return false, c.idle(ctx)
	}
	if w.p.T0 != p.T0 { // set once, before any job is handed to a slot
		w.p.T0 = p.T0
	}
	if time.Since(c.lastReap) >= c.reapEvery {
		if err := w.reap(ctx); err != nil {
			return false, err
		}
		c.lastReap = time.Now()
	}
	if c.free == 0 {
		return false, c.idle(ctx)
	}
	return false, c.claimDue(ctx, p, jobs)
}

// claimer is claimLoop's state from one pool read to the next.
type claimer struct {
	w                   *worker
	free                int             // slots with no job
	finished            <-chan struct{} // a slot's job ended: one more free
	poll, reapEvery     time.Duration
	lastReap, lastFlush time.Time
	seen                int64     // the coordinator's last heartbeat seen on the pool
	seenAt              time.Time // when it changed, on this process's clock
}

// collect counts the slots freed since the last look.
func (c *claimer) collect() {
	for {
		select {
		case <-c.finished:
			c.free++
		default:
			return
		}
	}
}

// idle waits a poll, or less when a slot comes free.
func (c *claimer) idle(ctx context.Context) error {
	t := time.NewTimer(c.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.finished:
		c.free++
	case <-t.C:
	}
	return nil
}

// check reads the run's state from the pool: done when the night is, an
// *OrphanError when the run is gone, taken over, abandoned, or its
// coordinator silent for StaleAfter.
func (c *claimer) check(p poolItem, ok bool) (done bool, err error) {
	w := c.w
	switch {
	case ok && p.RunID == w.run && p.State == poolDone:
		return true, nil
	case !ok:
		return false, w.orphan("its pool item is gone")
	case p.RunID != w.run:
		return false, w.orphan(fmt.Sprintf("run %s (host %s, pid %d) has taken the night over", p.RunID, p.Host, p.PID))
	case p.State == poolAbandoned:
		return false, w.orphan("its coordinator abandoned it")
	}
	// The coordinator heartbeats the pool; its silence is timed on this
	// process's clock (from when the heartbeat last changed), so clocks
	// of different machines need not agree.
	if p.SeenMS != c.seen {
		c.seen, c.seenAt = p.SeenMS, time.Now()
	} else if silent := time.Since(c.seenAt); silent > StaleAfter {
		return false, w.orphan(fmt.Sprintf("its coordinator (host %s, pid %d) has not heartbeaten the pool for %.0f s", p.Host, p.PID, silent.Seconds()))
	}
	return false, nil
}

// claimDue plans the jobs to start now on pool p and claims them in one
// transaction, handing each won job to a slot; with nothing due it idles,
// and after a lost race it steps aside.
func (c *claimer) claimDue(ctx context.Context, p poolItem, jobs chan<- claimed) error {
	w := c.w
	// The decision's instant: after the pool read, so every release the
	// read saw finished before it; the attempt records it as its start.
	decided := w.e.now() // carries the monotonic clock: the claim's lease is timed on it
	nowMS := decided.UnixMilli()
	picks, err := w.plan(ctx, p, w.minuteAt(nowMS), c.free)
	if err != nil {
		return err
	}
	if len(picks) == 0 {
		return c.idle(ctx)
	}
	cs, won, err := w.claim(ctx, p, picks, nowMS)
	if err != nil {
		return err
	}
	if !won {
		w.count(func(s *WorkerStats) { s.Lost++ })
		// Someone else moved the pool: step aside for a random part of
		// a poll so the racers spread out instead of colliding again.
		return wait.Sleep(ctx, rand.N(c.poll/2+1))
	}
	for i := range cs {
		cs[i].at = decided
	}
	w.count(func(s *WorkerStats) { s.Won += len(cs); s.Batches++ })
	c.free -= len(cs)
	for _, cl := range cs {
		select {
		case jobs <- cl:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// maxBatch bounds the jobs one claim transaction takes: two items each plus
// the pool item, within TransactWriteItems' 100.
const maxBatch = 32

// plan decides, as sim's dispatch loop does at one instant, up to free jobs
// to start now: each decision is made on the pool as the previous ones
// leave it, so one transaction can claim them all.
func (w *worker) plan(ctx context.Context, p poolItem, now float64, free int) ([]pick, error) {
	q := p
	q.Running = make(map[string]float64, len(p.Running)+free)
	for k, v := range p.Running {
		q.Running[k] = v
	}
	q.Slots = append([]string(nil), p.Slots...)
	skip := map[string]bool{}
	var due dueSnapshot
	var picks []pick
	for len(picks) < min(free, maxBatch) {
		pk, err := w.decide(ctx, q, now, skip, &due)
		if err != nil || pk == nil {
			return picks, err
		}
		for i, s := range q.Slots {
			if s == "" && len(pk.ids) < pk.workers {
				pk.ids = append(pk.ids, i)
				q.Slots[i] = pk.job.JobID
			}
		}
		if len(pk.ids) < pk.workers { // the slot table disagrees with busy: read again
			return picks, nil
		}
		q.Busy += pk.workers
		q.Running[pk.job.JobID] = now + pk.job.Estimate
		if pk.job.Exclusive {
			q.Exclusive = pk.job.JobID
		}
		skip[pk.job.JobID] = true
		picks = append(picks, *pk)
	}
	return picks, nil
}

// pick is a dispatch decision: a job and how many slots it takes.
type pick struct {
	job     jobItem
	workers int
	ids     []int // the slots it takes
}

// decide applies the policy's rules, as sim does, to the pool at one version
// and the claimable index at minute now. due caches, for conservative, the
// index read once per plan.
func (w *worker) decide(ctx context.Context, p poolItem, now float64, skip map[string]bool, due *dueSnapshot) (*pick, error) {
	if p.Exclusive != "" || p.Busy >= p.Capacity {
		return nil, nil
	}
	if sim.Policy(p.Policy) == sim.Conservative {
		return w.conservative(ctx, p, now, skip, due)
	}
	ex, err := w.first(ctx, true, p.XPriority, now, nil, skip)
	if err != nil {
		return nil, err
	}
	if ex == nil {
		o, err := w.first(ctx, false, p.OPriority, now, nil, skip)
		if err != nil || o == nil {
			return nil, err
		}
		return &pick{job: *o, workers: 1}, nil
	}
	if p.Busy == 0 {
		return &pick{job: *ex, workers: p.Capacity}, nil
	}
	if sim.Policy(p.Policy) == sim.Barrier {
		return nil, nil
	}
	// Backfill around ex's reservation at the shadow time.
	shadow := now
	for _, f := range p.Running {
		shadow = math.Max(shadow, f)
	}
	o, err := w.first(ctx, false, p.OPriority, now, func(j jobItem) bool { return now+j.Estimate <= shadow }, skip)
	if err != nil || o == nil {
		return nil, err
	}
	return &pick{job: *o, workers: 1}, nil
}

// dueSnapshot is every job due at one instant, in dispatch order, read
// from the claimable index once per plan.
type dueSnapshot struct {
	jobs []jobItem
	read bool
}

// conservative decides by conservative backfilling, with sim's Profile: the
// free-slot profile starts with every slot free from now on, each running
// job takes its slots out until its estimated finish (an overdue job, whose
// estimate has passed, counts as finishing now, as in sim), then every due
// job, in dispatch order (priority descending, due minute, job id, whatever
// its kind), reserves its slots (one, or all c for an exclusive job) at the
// earliest start where they are free for its whole estimate. The first job
// whose reservation is now and whose slots are free now (busy counts the
// overdue jobs still holding theirs) is the pick. Planned jobs (skip) are
// already in p.Running and p.Busy, so a plan's successive picks are the
// jobs sim starts at one instant, in its order.
func (w *worker) conservative(ctx context.Context, p poolItem, now float64, skip map[string]bool, due *dueSnapshot) (*pick, error) {
	if !due.read {
		jobs, err := w.allDue(ctx, p, now)
		if err != nil {
			return nil, err
		}
		due.jobs, due.read = jobs, true
	}
	c := p.Capacity
	w.profile.Reset(now, c)
	for id, f := range p.Running {
		if f > now {
			w.profile.Reserve(now, f, held(p, id))
		}
	}
	free := c - p.Busy
	for i := range due.jobs {
		j := &due.jobs[i]
		if skip[j.JobID] {
			continue
		}
		need := 1
		if j.Exclusive {
			need = c
		}
		at := w.profile.EarliestFit(j.Estimate, need)
		if at == now && need <= free {
			return &pick{job: *j, workers: need}, nil
		}
		w.profile.Reserve(at, at+j.Estimate, need)
	}
	return nil, nil
}

// held is the number of slots job id holds: all c for the exclusive job,
// otherwise its entries in the slot table (at least 1).
func held(p poolItem, id string) int {
	if p.Exclusive == id {
		return p.Capacity
	}
	n := 0
	for _, s := range p.Slots {
		if s == id {
			n++
		}
	}
	return max(n, 1)
}

// allDue reads every due job of the night, of every priority and kind, in
// dispatch order: priority descending, then due_key (due minute, job id).
func (w *worker) allDue(ctx context.Context, p poolItem, now float64) ([]jobItem, error) {
	prios := slices.Concat(p.XPriority, p.OPriority)
	slices.SortFunc(prios, func(a, b int) int { return cmp.Compare(b, a) })
	prios = slices.Compact(prios)
	var out []jobItem
	for _, prio := range prios {
		var same []jobItem
		for _, exclusive := range []bool{true, false} {
			if !slices.Contains(p.XPriority, prio) && exclusive || !slices.Contains(p.OPriority, prio) && !exclusive {
				continue
			}
			for k := range w.p.Shards {
				items, err := w.queryDue(ctx, shardName(w.date, exclusive, prio, k), now, 0)
				if err != nil {
					return nil, err
				}
				same = append(same, items...)
			}
		}
		slices.SortFunc(same, func(a, b jobItem) int { return strings.Compare(a.DueKey, b.DueKey) })
		out = append(out, same...)
	}
	return out, nil
}

// first returns the first due job of a kind in dispatch order (priority
// descending, then due minute, then job id) that satisfies fit (nil: any)
// and is not in skip (jobs already planned at this instant).
func (w *worker) first(ctx context.Context, exclusive bool, priorities []int, now float64, fit func(jobItem) bool, skip map[string]bool) (*jobItem, error) {
	for _, prio := range priorities {
		var due []jobItem
		for k := range w.p.Shards {
			limit := 0 // all
			if fit == nil {
				limit = 1 + len(skip) // the planned jobs head their shards
			}
			items, err := w.queryDue(ctx, shardName(w.date, exclusive, prio, k), now, limit)
			if err != nil {
				return nil, err
			}
			due = append(due, items...)
		}
		sort.Slice(due, func(a, b int) bool { return due[a].DueKey < due[b].DueKey })
		for i := range due {
			if !skip[due[i].JobID] && (fit == nil || fit(due[i])) {
				return &due[i], nil
			}
		}
	}
	return nil, nil
}

// queryDue reads the due jobs of one shard of the claimable index: the first
// limit of them, or all of them (limit 0).
func (w *worker) queryDue(ctx context.Context, shard string, now float64, limit int) ([]jobItem, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrShard).Equal(expression.Value(shard)).
			And(expression.Key(attrDue).LessThanEqual(expression.Value(dueBound(now))))).Build()
	if err != nil {
		return nil, fmt.Errorf("build due query: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(w.e.db.Name()), IndexName: aws.String(IndexClaim),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values()}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	var out []jobItem
	for page, err := range w.e.db.QueryPages(ctx, in) {
		if err != nil {
			return nil, fmt.Errorf("query claimable jobs of %s: %w", shard, err)
		}
		var items []jobItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode claimable jobs: %w", err)
		}
		out = append(out, items...)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

func token() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// claim tries to take the planned jobs in one transaction: each job and a
// new attempt item for it, and the pool at the version read. won is false on
// a lost race.
func (w *worker) claim(ctx context.Context, p poolItem, picks []pick, nowMS int64) ([]claimed, bool, error) {
	in, cs, err := w.claimInput(p, picks, nowMS)
	if err != nil {
		return nil, false, err
	}
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	// Sent again, the same input (its ClientRequestToken too), until it is
	// answered: a claim that landed unanswered is then recognised below,
	// instead of leaving a job claimed by nobody until its lease expires.
	var out *dynamodb.TransactWriteItemsOutput
	err = w.outage().Do(ctx, func(ctx context.Context) (err error) {
		out, err = dynamo.Call(ctx, w.e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
			return w.e.db.Client().TransactWriteItems(ctx, in)
		})
		return err
	})
	if err != nil {
		if fence.Refused(err) {
			// Refused: a lost race, or this very claim landed and its reply
			// was lost, and the SDK's retry was refused by its own writes.
			landed, lerr := w.claimLanded(ctx, err, aws.ToString(in.ClientRequestToken), picks[0].job.JobID)
			if lerr != nil {
				return nil, false, fmt.Errorf("claim job %s: read it back after a refusal: %w", picks[0].job.JobID, lerr)
			}
			if landed {
				return cs, true, nil
			}
			return nil, false, nil
		}
		if lostRace(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("claim job %s: %w", picks[0].job.JobID, err)
	}
	w.units(out.ConsumedCapacity...)
	return cs, true, nil
}

// claimJobCond is a job's condition in a claim under the grant: the fence
// at the token read, the claim shard and attempt read, and the run.
func claimJobCond(grant fence.Step, shard string, attempt int, run string) expression.ConditionBuilder {
	return grant.Cond.And(expression.Name(attrShard).Equal(expression.Value(shard)),
		expression.Name("attempt").Equal(expression.Value(attempt)),
		expression.Name(attrRun).Equal(expression.Value(run)))
}

// claimPoolCond is the pool's condition in a claim of total slots on pool p
// as read: the run, its version and state, and room (all of it for whole,
// an exclusive claim).
func claimPoolCond(run string, p poolItem, whole bool, total int) expression.ConditionBuilder {
	cond := expression.Name("run_id").Equal(expression.Value(run)).
		And(expression.Name("version").Equal(expression.Value(p.Version))).
		And(expression.Name("state").Equal(expression.Value(poolRunning)))
	if whole {
		return cond.And(expression.Name("busy").Equal(expression.Value(0)), expression.Name("exclusive").Equal(expression.Value("")))
	}
	return cond.And(expression.Name("busy").LessThanEqual(expression.Value(p.Capacity - total))).
		And(expression.Name("exclusive").Equal(expression.Value("")))
}

// txUpdate is one Update of a transaction from a built expression.
func txUpdate(table *string, k map[string]types.AttributeValue, e expression.Expression) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: table, Key: k,
		ConditionExpression: e.Condition(), UpdateExpression: e.Update(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}}
}

// claimInput builds the claim transaction of picks (slots chosen by plan)
// on pool p at nowMS: the pool item first, then each job and its attempt.
func (w *worker) claimInput(p poolItem, picks []pick, nowMS int64) (*dynamodb.TransactWriteItemsInput, []claimed, error) {
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	table := aws.String(w.e.db.Name())
	nonce := token()
	total := 0
	up := expression.Add(expression.Name("version"), expression.Value(1))
	var items []types.TransactWriteItem
	var atts []attemptItem // each job's attempt, put after its job once busy is known
	var cs []claimed
	for _, pk := range picks {
		j := pk.job
		attempt := j.Attempt + 1
		total += pk.workers
		grant := jobFence.Acquire(fence.Token(j.Token), w.name, time.UnixMilli(nowMS+lease.Milliseconds()))
		jobExpr, err := expression.NewBuilder().
			WithCondition(claimJobCond(grant, j.ClaimShard, j.Attempt, w.run)).
			WithUpdate(grant.Update.Set(expression.Name("execution_status"), expression.Value(queuekit.StatusClaimed)).
				Set(expression.Name("attempt"), expression.Value(attempt)).
				Set(expression.Name("worker_ids"), expression.Value(pk.ids)).
				Set(expression.Name(attrLeaseSh), expression.Value(w.date)).
				Set(expression.Name("heartbeat_at"), expression.Value(nowMS)).
				Set(expression.Name(attrClaimNonce), expression.Value(nonce)).
				// The previous attempt's start is not this one's: an attempt
				// whose start never lands (its holder died first) is reaped
				// with no start rather than with an older attempt's.
				Remove(expression.Name(attrShard)).Remove(expression.Name(attrDue)).Remove(expression.Name("started_ms"))).Build()
		if err != nil {
			return nil, nil, fmt.Errorf("build claim: %w", err)
		}
		atts = append(atts, attemptItem{BatchDate: w.date, SK: attemptSK(j.JobID, attempt), JobID: j.JobID,
			Attempt: attempt, Worker: w.name, Slots: pk.ids, Exclusive: j.Exclusive, ClaimedMS: nowMS, Estimate: j.Estimate,
			ClaimToken: int64(grant.Hold.Token), PoolVersion: p.Version + 1})
		items = append(items, txUpdate(table, key(w.date, jobSK(j.JobID)), jobExpr), types.TransactWriteItem{})
		up = up.Set(expression.Name("running."+j.JobID), expression.Value(w.minuteAt(nowMS)+j.Estimate))
		if j.Exclusive {
			// An exclusive job holds every slot: the pool records it once
			// (exclusive, busy = c), not slot by slot, so the claim's
			// expression stays small whatever c is.
			up = up.Set(expression.Name("exclusive"), expression.Value(j.JobID))
		} else {
			for _, i := range pk.ids {
				up = up.Set(expression.Name(fmt.Sprintf("slots[%d]", i)), expression.Value(j.JobID))
			}
		}
		j.Attempt, j.Worker, j.Slots, j.Token = attempt, w.name, pk.ids, int64(grant.Hold.Token)
		cs = append(cs, claimed{job: j, slots: pk.ids, atMS: nowMS})
	}
	// The attempts record the pool version this transaction makes (its
	// condition is the version read) and the slots busy after it: the
	// night's occupancy in the pool's own order, for Report.Verify.
	absent, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(attrSK))).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build claim: %w", err)
	}
	for i, a := range atts {
		a.PoolBusy = p.Busy + total
		att, err := attributevalue.MarshalMap(a)
		if err != nil {
			return nil, nil, fmt.Errorf("marshal attempt: %w", err)
		}
		items[2*i+1] = types.TransactWriteItem{Put: &types.Put{TableName: table, Item: att, ConditionExpression: absent.Condition(), ExpressionAttributeNames: absent.Names()}}
	}
	up = up.Add(expression.Name("busy"), expression.Value(total))
	cond := claimPoolCond(w.run, p, len(picks) == 1 && picks[0].workers == p.Capacity, total)
	poolExpr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(up).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build claim: %w", err)
	}
	items = append([]types.TransactWriteItem{txUpdate(table, key(w.date, skPool), poolExpr)}, items...)
	// The claim names itself on every job it takes (claim_nonce), and a
	// refused job returns its old image: a claim whose reply was lost after
	// it had landed, refused when the SDK sends it again, is recognised as
	// won (see claimLanded).
	for i := range items[1:] {
		if u := items[1+i].Update; u != nil {
			u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		}
	}
	return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(nonce), TransactItems: items}, cs, nil
}

// claimLanded reports whether a refused claim transaction was refused by
// its own earlier landing: a job it claims carries its nonce, in the refusal's
// old images or, when DynamoDB returned none, read back consistently.
func (w *worker) claimLanded(ctx context.Context, err error, nonce string, first string) (bool, error) {
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if r.Item == nil {
				continue
			}
			if sk, ok := r.Item[attrSK].(*types.AttributeValueMemberS); !ok || !strings.HasPrefix(sk.Value, prefixJob) {
				continue // the pool's or an attempt's image
			}
			// A job's image: the transaction is all or nothing, so one job
			// tells for all.
			n, ok := r.Item[attrClaimNonce].(*types.AttributeValueMemberS)
			return ok && n.Value == nonce, nil
		}
	}
	it, err := w.e.getItem(ctx, w.date, jobSK(first))
	if err != nil {
		return false, err
	}
	n, ok := it[attrClaimNonce].(*types.AttributeValueMemberS)
	return ok && n.Value == nonce, nil
}
