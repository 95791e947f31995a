package lease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// execute runs one claimed attempt: PROCESSING, the work under a fenced
// lease kept by heartbeats (fence.Keep), then the transaction that ends the
// attempt. Every write is conditioned on the attempt's fencing token and on
// the run: once the reaper took the job over (the token moved on), nothing
// this worker writes about the job lands. A worker whose lease was lost
// still sends its end when it can (the work's outcome if the work finished,
// LEASE_EXPIRED if it was cut short): the storage, not the worker's belief,
// decides; if nobody took the lease over the end is legitimate, otherwise it
// is refused and counted as fenced, never a second end.
func (w *worker) execute(ctx context.Context, c claimed) error {
	j := c.job
	hold := fence.Hold{Holder: w.name, Token: fence.Token(j.Token)}
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	// The start renews the lease too, so the heartbeats count from a fresh
	// write rather than from the claim's decision, which a slow claim (a
	// busy machine, a long plan) may have left far behind. It must land
	// within the claim's lease, less the heartbeat margin.
	started := w.e.now()
	at := c.at
	if at.IsZero() {
		at = time.UnixMilli(c.atMS)
	}
	// Timed from the decision on this process's own clock (a timeout, not a
	// deadline, so an offset clock keeps its durations right), never by
	// comparing wall clocks.
	sctx, cancel := context.WithTimeout(ctx, at.Add(lease-lease/4).Sub(started))
	// No answer: the same start is sent again (startable lets a landed one
	// pass) until it lands or its time is up.
	err := w.outage().Do(sctx, func(ctx context.Context) error { return w.start(ctx, j, hold, started, started.Add(lease)) })
	cancel()
	if err != nil {
		if errors.Is(err, fence.ErrFenced) || sctx.Err() != nil {
			w.count(func(s *WorkerStats) { s.Dropped++ })
			w.logf("job %s attempt %d: start not written in time: %v", j.JobID, j.Attempt, err)
			return nil // the reaper ends the attempt once its lease has expired
		}
		return fmt.Errorf("start job %s: %w", j.JobID, err)
	}
	k, workCtx := fence.Keep(ctx, started, lease, func(bctx context.Context, until time.Time) error {
		err := w.heartbeat(bctx, j, hold, until)
		if err == nil {
			w.heard()
		}
		return err
	}, func(o *fence.Options) { o.Now = w.e.now })
	d := time.Duration(j.Estimate * w.p.MinuteMS * float64(time.Millisecond))
	werr := w.work(workCtx, Job{ID: j.JobID, Class: j.Class, Priority: j.Priority, Exclusive: j.Exclusive,
		Estimate: j.Estimate, Attempt: j.Attempt, Slots: c.slots, Worker: w.name, Run: w.run, Token: WorkToken(w.p.RunSeq, int64(hold.Token))}, d)
	cut := werr != nil && workCtx.Err() != nil // stopped before it finished
	lost := k.Stop()
	if ctx.Err() != nil { // shutting down: the reaper ends the attempt
		w.count(func(s *WorkerStats) { s.Dropped++ })
		return nil
	}
	outcome, msg := queuekit.StatusSuccess, errText(werr)
	switch {
	case cut:
		outcome, msg = LeaseExpired, fmt.Sprintf("lease lost by worker %s: %v", w.name, lost)
	case werr != nil:
		outcome = queuekit.StatusRetriableFailure
		if queuekit.IsFatal(werr) || j.CurrentRetry >= j.MaxRetry {
			outcome = queuekit.StatusFatalFailure
		}
	}
	if lost != nil {
		w.count(func(s *WorkerStats) { s.Dropped++ })
		w.logf("job %s attempt %d: lease lost: %v", j.JobID, j.Attempt, lost)
	}
	err = w.e.end(ctx, w.date, w.run, j, jobFence.Release(hold), hold, nil, outcome, msg, started.UnixMilli(), w.minute(), w.p, w.units)
	switch {
	case errors.Is(err, fence.ErrFenced):
		w.count(func(s *WorkerStats) { s.Fenced++ })
		w.logf("job %s attempt %d: late end (%s) refused by its fencing condition: %v", j.JobID, j.Attempt, outcome, err)
		return nil
	case err != nil:
		return err
	case outcome == queuekit.StatusSuccess:
		w.count(func(s *WorkerStats) { s.Finished++ })
	default:
		w.count(func(s *WorkerStats) { s.Failed++ })
	}
	return nil
}

// start marks the attempt PROCESSING and renews its lease to until, under
// its fence and run.
func (w *worker) start(ctx context.Context, j jobItem, hold fence.Hold, started, until time.Time) error {
	st := jobFence.Renew(hold, until)
	expr, err := expression.NewBuilder().
		WithCondition(startCond(st, w.run, started.UnixMilli())).
		WithUpdate(st.Update.Set(expression.Name("execution_status"), expression.Value(queuekit.StatusProcessing)).
			Set(expression.Name("started_ms"), expression.Value(started.UnixMilli())).
			Set(expression.Name("heartbeat_at"), expression.Value(started.UnixMilli()))).Build()
	if err != nil {
		return fmt.Errorf("build start: %w", err)
	}
	return jobFence.Check(w.e.updateOld(ctx, w.date, jobSK(j.JobID), expr, w.units), "start", hold)
}

// WorkToken is the token lease.Job carries: the run's sequence number in
// the high 32 bits, the job item's fencing token in the low 32.
func WorkToken(runSeq, token int64) int64 { return runSeq<<32 | token&(1<<32-1) }

// startable is the state condition of a start sent at startedMS: the job is
// CLAIMED, or it is PROCESSING since this very start (its started_ms is
// startedMS). The second case is a start whose reply was lost after it had
// landed, sent again by the SDK: it passes and changes nothing, instead of
// being refused and stopping the worker. The fence (token and holder) makes
// startedMS this holder's own.
func startable(startedMS int64) expression.ConditionBuilder {
	return expression.Name("execution_status").Equal(expression.Value(queuekit.StatusClaimed)).
		Or(expression.Name("execution_status").Equal(expression.Value(queuekit.StatusProcessing)).
			And(expression.Name("started_ms").Equal(expression.Value(startedMS))))
}

// startCond is the condition of a start sent at startedMS under the renew
// step st: the fence, the run, and startable.
func startCond(st fence.Step, run string, startedMS int64) expression.ConditionBuilder {
	return st.Cond.And(ofRun(run), startable(startedMS))
}

// heartbeatCond is the condition of a heartbeat under the renew step r: the
// fence, the run, and a live state.
func heartbeatCond(r fence.Step, run string) expression.ConditionBuilder {
	return r.Cond.And(ofRun(run), expression.Name("execution_status").In(expression.Value(queuekit.StatusClaimed), expression.Value(queuekit.StatusProcessing)))
}

// endJobCond is the job's condition of an end (a holder's release or the
// reaper's revoke, step): the step's fence, the run, and extra if any.
func endJobCond(step fence.Step, run string, extra *expression.ConditionBuilder) expression.ConditionBuilder {
	jc := step.Cond.And(ofRun(run))
	if extra != nil {
		jc = jc.And(*extra)
	}
	return jc
}

// endPoolCond is the pool's condition of the end of j: the run, the slots
// (or the exclusive mark) j holds still taken, and for a final end (not
// RETRIABLE_FAILURE) an end not counted beyond jobs.
func endPoolCond(run string, j jobItem, final bool) expression.ConditionBuilder {
	pc := ofRun(run).And(expression.Name("busy").GreaterThanEqual(expression.Value(len(j.Slots))))
	if j.Exclusive {
		pc = pc.And(expression.Name("exclusive").Equal(expression.Value(j.JobID)))
	} else {
		for _, i := range j.Slots {
			pc = pc.And(expression.Name(fmt.Sprintf("slots[%d]", i)).Equal(expression.Value(j.JobID)))
		}
	}
	if final {
		pc = pc.And(expression.Name("ended").LessThan(expression.Name("jobs")))
	}
	return pc
}

// ofRun is the condition of every write of a worker: the item belongs to
// the run the worker joined.
func ofRun(run string) expression.ConditionBuilder {
	return expression.Name(attrRun).Equal(expression.Value(run))
}

// ofRun is ofRun of the worker's run.
func (w *worker) ofRun() expression.ConditionBuilder { return ofRun(w.run) }

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// heartbeat extends the lease to until while the attempt is still ours:
// its fencing token and holder, its run, and a live state.
func (w *worker) heartbeat(ctx context.Context, j jobItem, hold fence.Hold, until time.Time) error {
	r := jobFence.Renew(hold, until)
	expr, err := expression.NewBuilder().
		WithCondition(heartbeatCond(r, w.run)).
		WithUpdate(r.Update.Set(expression.Name("heartbeat_at"), expression.Value(w.e.now().UnixMilli()))).Build()
	if err != nil {
		return fmt.Errorf("build heartbeat: %w", err)
	}
	return jobFence.Check(w.e.updateOld(ctx, w.date, jobSK(j.JobID), expr, w.units), "heartbeat", hold)
}

// PoolError says that the pool item refused a release although the job's
// fence held: the release would have taken busy below 0, ended above jobs,
// or freed slots the job does not hold. DynamoDB refused it, so the pool is
// unchanged; it means a bug, and the run stops rather than corrupt the pool.
type PoolError struct {
	BatchDate, JobID string
	Attempt          int
	Err              error
}

func (e *PoolError) Error() string {
	return fmt.Sprintf("night %s: the pool refused the release of job %s attempt %d (busy would leave 0..c, ended would pass jobs, or the slots are not the job's): the pool is unchanged; this is a bug, please report it",
		e.BatchDate, e.JobID, e.Attempt)
}

// Unwrap returns DynamoDB's refusal.
func (e *PoolError) Unwrap() error { return e.Err }

// end writes the end of an attempt in one transaction:
//
//  0. the job: its new state, under step (the holder's Release of hold, or
//     the reaper's Revoke of the hold it saw: either way the fencing token
//     moves on) and the run, and extra (the reaper's: the lease it saw is
//     unchanged);
//  1. the pool: the release (busy, slots, exclusive, running, version;
//     ended for a final state), under conditions that keep the counters
//     right whoever sends it: the run, busy >= the slots released, the
//     slots (or the exclusive mark) still the job's, and ended < jobs for
//     a final state;
//  2. the attempt's outcome, and for FATAL_FAILURE 3. the dead-letter record.
//
// A refusal of the job (its fence or run moved on), or of the pool by a
// newer run, is an error matching fence.ErrFenced: the attempt is someone
// else's now and nothing was written. A refusal of the pool by its counter
// conditions is a *PoolError.
func (e *Executor) end(ctx context.Context, date, run string, j jobItem, step fence.Step, hold fence.Hold, extra *expression.ConditionBuilder,
	outcome queuekit.Status, errMsg string, startedMS int64, now float64, cfg poolItem, units func(...types.ConsumedCapacity)) error {
	nowMS := e.now().UnixMilli()
	status := endStatus(outcome, j, cfg.maxLost())
	if outcome == LeaseExpired && status == queuekit.StatusFatalFailure {
		errMsg = fmt.Sprintf("%s; lost attempts %d, past the run's bound of %d (a job that kills every worker it runs on looks like this)",
			errMsg, j.LostAttempts+1, cfg.maxLost())
	}
	// The end names itself on the job (end_nonce): an end whose reply was
	// lost after it had landed, refused when sent again (its own write moved
	// the token on), recognises itself instead of counting as fenced.
	nonce := token()
	jobExpr, err := endJobExpr(date, run, j, step, extra, outcome, status, errMsg, now, cfg, nonce)
	if err != nil {
		return err
	}
	poolExpr, err := releaseExpr(run, j, status)
	if err != nil {
		return err
	}
	attExpr, err := attemptEndExpr(outcome, errMsg, startedMS, nowMS, hold.Token.Next())
	if err != nil {
		return err
	}
	table := aws.String(e.db.Name())
	old := types.ReturnValuesOnConditionCheckFailureAllOld
	items := []types.TransactWriteItem{
		{Update: &types.Update{TableName: table, Key: key(date, jobSK(j.JobID)), ConditionExpression: jobExpr.Condition(),
			UpdateExpression: jobExpr.Update(), ExpressionAttributeNames: jobExpr.Names(), ExpressionAttributeValues: jobExpr.Values(),
			ReturnValuesOnConditionCheckFailure: old}},
		{Update: &types.Update{TableName: table, Key: key(date, skPool), ConditionExpression: poolExpr.Condition(),
			UpdateExpression: poolExpr.Update(), ExpressionAttributeNames: poolExpr.Names(), ExpressionAttributeValues: poolExpr.Values(),
			ReturnValuesOnConditionCheckFailure: old}},
		{Update: &types.Update{TableName: table, Key: key(date, attemptSK(j.JobID, j.Attempt)),
			UpdateExpression: attExpr.Update(), ExpressionAttributeNames: attExpr.Names(), ExpressionAttributeValues: attExpr.Values()}},
	}
	if status == queuekit.StatusFatalFailure {
		dl, err := attributevalue.MarshalMap(struct {
			BatchDate string `dynamodbav:"batch_date"`
			SK        string `dynamodbav:"sk"`
			DeadLetter
		}{date, prefixDLQ + j.JobID, DeadLetter{JobID: j.JobID, Attempts: j.Attempt, LastError: errMsg, AtMS: nowMS}})
		if err != nil {
			return fmt.Errorf("marshal dead letter: %w", err)
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: dl}})
	}
	err, stopped := e.sendEnd(ctx, items, units, e.db.Outage(WorkerRideOut(time.Duration(cfg.LeaseMS)*time.Millisecond),
		fmt.Sprintf("the end of attempt %d of job %s, night %s", j.Attempt, j.JobID, date),
		"the job's lease expires and the reapers re-queue it; check the network to DynamoDB, then start a worker again"))
	if stopped != nil {
		return stopped
	}
	if err == nil {
		return nil
	}
	if fence.Refused(err, 0) {
		landed, lerr := e.endLanded(ctx, date, j.JobID, err, nonce)
		if lerr != nil {
			return fmt.Errorf("end attempt %d of job %s: read it back after a refusal: %w", j.Attempt, j.JobID, lerr)
		}
		if landed {
			return nil
		}
	}
	return endRefused(err, date, run, j, hold, extra)
}

// endStatus is the job's state after an attempt with this outcome: a lease
// that expired is a lost attempt, not a failure of the job: it is claimable
// again (RETRIABLE_FAILURE) until the job has lost maxLost of them, then
// FATAL_FAILURE.
func endStatus(outcome queuekit.Status, j jobItem, maxLost int) queuekit.Status {
	if outcome != LeaseExpired {
		return outcome
	}
	if j.LostAttempts >= maxLost {
		return queuekit.StatusFatalFailure
	}
	return queuekit.StatusRetriableFailure
}

// maxLost is the run's bound on lost attempts (DefaultMaxLost for a pool
// written before it existed).
func (p poolItem) maxLost() int { return cmp.Or(p.MaxLost, DefaultMaxLost) }

// endJobExpr is the end's write of the job (item 0): its new state under
// step, the run and extra; a retriable failure is due again after its
// backoff (current_retry + 1), a lost attempt (outcome LEASE_EXPIRED) at
// once (lost_attempts + 1: the job did not fail).
func endJobExpr(date, run string, j jobItem, step fence.Step, extra *expression.ConditionBuilder,
	outcome, status queuekit.Status, errMsg string, now float64, cfg poolItem, nonce string) (expression.Expression, error) {
	ju := step.Update.Set(expression.Name("execution_status"), expression.Value(status)).
		Set(expression.Name(attrEndNonce), expression.Value(nonce)).
		Remove(expression.Name(attrLeaseSh))
	if errMsg != "" {
		ju = ju.Set(expression.Name("last_error"), expression.Value(errMsg))
	}
	switch {
	case outcome == LeaseExpired:
		ju = ju.Set(expression.Name("lost_attempts"), expression.Value(j.LostAttempts+1))
		if status == queuekit.StatusRetriableFailure {
			ju = ju.Set(expression.Name(attrShard), expression.Value(shardOf(date, j.Exclusive, j.Priority, j.JobID, cfg.Shards))).
				Set(expression.Name(attrDue), expression.Value(dueKey(now, j.JobID)))
		}
	case status == queuekit.StatusRetriableFailure:
		due := now + cfg.Backoff*math.Pow(2, float64(j.CurrentRetry))
		ju = ju.Set(expression.Name("current_retry"), expression.Value(j.CurrentRetry+1)).
			Set(expression.Name(attrShard), expression.Value(shardOf(date, j.Exclusive, j.Priority, j.JobID, cfg.Shards))).
			Set(expression.Name(attrDue), expression.Value(dueKey(due, j.JobID)))
	}
	x, err := expression.NewBuilder().WithCondition(endJobCond(step, run, extra)).WithUpdate(ju).Build()
	if err != nil {
		return x, fmt.Errorf("build end: %w", err)
	}
	return x, nil
}

// releaseExpr is the end's release of the pool (item 1): busy, the job's
// slots (or the exclusive mark), running, version, and ended for a final
// state, under endPoolCond.
func releaseExpr(run string, j jobItem, status queuekit.Status) (expression.Expression, error) {
	final := status != queuekit.StatusRetriableFailure
	pu := expression.Add(expression.Name("version"), expression.Value(1)).
		Add(expression.Name("busy"), expression.Value(-len(j.Slots))).
		Remove(expression.Name("running." + j.JobID))
	if j.Exclusive {
		// An exclusive claim marks the pool, not each slot: see claimInput.
		pu = pu.Set(expression.Name("exclusive"), expression.Value(""))
	} else {
		for _, i := range j.Slots {
			pu = pu.Set(expression.Name(fmt.Sprintf("slots[%d]", i)), expression.Value(""))
		}
	}
	if final {
		pu = pu.Add(expression.Name("ended"), expression.Value(1))
	}
	x, err := expression.NewBuilder().WithCondition(endPoolCond(run, j, final)).WithUpdate(pu).Build()
	if err != nil {
		return x, fmt.Errorf("build release: %w", err)
	}
	return x, nil
}

// attemptEndExpr is the end's write of the attempt's outcome (item 2),
// with the fence token the end moves the job to (endToken: the holder's
// Release and the reaper's Revoke both move it from the attempt's token to
// the next).
func attemptEndExpr(outcome queuekit.Status, errMsg string, startedMS, nowMS int64, endToken fence.Token) (expression.Expression, error) {
	au := expression.Set(expression.Name("finished_ms"), expression.Value(nowMS)).
		Set(expression.Name("outcome"), expression.Value(outcome)).
		Set(expression.Name("end_token"), expression.Value(int64(endToken)))
	if startedMS > 0 {
		au = au.Set(expression.Name("started_ms"), expression.Value(startedMS))
	}
	if errMsg != "" {
		au = au.Set(expression.Name("error"), expression.Value(errMsg))
	}
	x, err := expression.NewBuilder().WithUpdate(au).Build()
	if err != nil {
		return x, fmt.Errorf("build attempt end: %w", err)
	}
	return x, nil
}

// sendEnd sends the end's transaction and returns DynamoDB's answer (err).
// A conflict with another transaction on the pool (a claim, say) says
// nothing about the lease: it is sent again, up to 20 times, unless ctx
// ends while it waits to (stopped). No answer is ridden out by o: the same
// transaction (the same ClientRequestToken) is sent again until it is
// answered, or an *OutageError once o gives up.
func (e *Executor) sendEnd(ctx context.Context, items []types.TransactWriteItem, units func(...types.ConsumedCapacity), o *dynamo.Outage) (err, stopped error) {
	for try := 0; ; try++ {
		in := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token()), TransactItems: items,
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
		var out *dynamodb.TransactWriteItemsOutput
		err := o.Do(ctx, func(ctx context.Context) (err error) {
			out, err = dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
				return e.db.Client().TransactWriteItems(ctx, in)
			})
			return err
		})
		if err == nil && units != nil {
			units(out.ConsumedCapacity...)
		}
		if !fence.Conflict(err) || try >= 20 {
			return err, nil
		}
		if err := wait.Sleep(ctx, time.Duration(1+rand.N(10<<min(try, 4)))*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// endRefused names a failed end that did not land: fenced (the job or the
// night moved on), a *PoolError, or the call's error.
func endRefused(err error, date, run string, j jobItem, hold fence.Hold, extra *expression.ConditionBuilder) error {
	switch {
	case fence.Refused(err, 0) && extra != nil:
		// The reaper's write is conditioned on the token and the lease end
		// it read: a refusal means the job changed since, either another
		// end or reaper moved the token on, or the holder's heartbeat came
		// first and renewed the lease (same token, later lease_until). In
		// both cases the reaper lost the race and must leave the job alone.
		return &fence.FencedError{Op: "reap", Hold: hold, Now: jobFence.HoldOf(refusedImage(err)), Err: err}
	case fence.Refused(err, 0):
		return jobFence.Check(err, "end", hold, 0)
	case fence.Refused(err, 1):
		if p := poolImage(err); p != nil && p.RunID != run { // a newer run holds the night
			return &fence.FencedError{Op: "end", Hold: hold, Err: err}
		}
		return &PoolError{BatchDate: date, JobID: j.JobID, Attempt: j.Attempt, Err: err}
	}
	return fmt.Errorf("end attempt %d of job %s: %w", j.Attempt, j.JobID, err)
}

// endLanded reports whether an end refused by the job's condition was
// refused by its own earlier landing: the job carries its nonce, in the
// refusal's old image or, when DynamoDB returned none, read back
// consistently.
func (e *Executor) endLanded(ctx context.Context, date, id string, err error, nonce string) (bool, error) {
	img := refusedImage(err)
	if img == nil {
		reads := e.db.Outage(StaleAfter, fmt.Sprintf("the read-back of job %s, night %s", id, date),
			"check the network to DynamoDB, then start a worker again")
		if rerr := reads.Do(ctx, func(ctx context.Context) (err error) { img, err = e.getItem(ctx, date, jobSK(id)); return err }); rerr != nil {
			return false, rerr
		}
	}
	n, ok := img[attrEndNonce].(*types.AttributeValueMemberS)
	return ok && n.Value == nonce, nil
}

// refusedImage is the job's old image in a cancelled end transaction
// (item 0), or nil.
func refusedImage(err error) map[string]types.AttributeValue {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) < 1 {
		return nil
	}
	return tce.CancellationReasons[0].Item
}

// poolImage is the pool's old image in a cancelled end transaction (item 1).
func poolImage(err error) *poolItem {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) < 2 || tce.CancellationReasons[1].Item == nil {
		return nil
	}
	var p poolItem
	if attributevalue.UnmarshalMap(tce.CancellationReasons[1].Item, &p) != nil {
		return nil
	}
	return &p
}

// leaseSeen is a held lease as this worker's reaper saw it: its token and
// lease end (opaque values, never compared with a clock), and when it first
// saw that pair, on this process's monotonic clock.
type leaseSeen struct {
	token, until int64
	at           time.Time
}

// reap re-queues the jobs whose lease expired, without comparing clocks
// (the DynamoDB lock client's rule): one Query on the sparse "leases" index
// reads every held lease of the night; a lease whose (token, lease_until)
// this reaper has seen unchanged for a whole lease, timed on its own
// monotonic clock, has not been renewed for a lease, whatever the holder's
// and the reaper's wall clocks say. Then the end transaction under the
// fence's Revoke (the token it saw, which moves on) and the lease end it
// saw, so a heartbeat that arrives first wins and the job is left alone,
// and the old holder's every later write is refused.
func (w *worker) reap(ctx context.Context) error {
	expr, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrLeaseSh).Equal(expression.Value(w.date))).Build()
	if err != nil {
		return fmt.Errorf("build lease query: %w", err)
	}
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	in := &dynamodb.QueryInput{TableName: aws.String(w.e.db.Name()),
		IndexName: aws.String(IndexLeases), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	if w.seen == nil {
		w.seen = map[string]leaseSeen{}
	}
	held := map[string]bool{}
	for page, err := range w.e.db.QueryPages(ctx, in) {
		if err != nil {
			return fmt.Errorf("query held leases: %w", err)
		}
		var items []jobItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return fmt.Errorf("decode held leases: %w", err)
		}
		for _, j := range items {
			if j.RunID != w.run {
				continue
			}
			held[j.JobID] = true
			s, ok := w.seen[j.JobID]
			if !ok || s.token != j.Token || s.until != j.LeaseUntil {
				w.seen[j.JobID] = leaseSeen{token: j.Token, until: j.LeaseUntil, at: time.Now()}
				continue
			}
			if time.Since(s.at) <= lease {
				continue
			}
			delete(w.seen, j.JobID)
			err := w.e.end(ctx, w.date, w.run, j, jobFence.Revoke(fence.Token(j.Token)), fence.Hold{Holder: j.Worker, Token: fence.Token(j.Token)},
				reapSeen(j.LeaseUntil), LeaseExpired, fmt.Sprintf("lease expired: worker %s stopped heartbeating", j.Worker), j.StartedMS, w.minute(), w.p, w.units)
			switch {
			case err == nil:
				w.count(func(s *WorkerStats) { s.Reaped++ })
			case errors.Is(err, fence.ErrFenced): // a heartbeat or another reaper came first
			default:
				return err
			}
		}
	}
	for id := range w.seen {
		if !held[id] {
			delete(w.seen, id)
		}
	}
	return nil
}

// reapSeen is the reaper's extra condition: the lease end it saw is still
// the item's (no heartbeat landed since).
func reapSeen(until int64) *expression.ConditionBuilder {
	c := expression.Name(attrLeaseTil).Equal(expression.Value(until))
	return &c
}
