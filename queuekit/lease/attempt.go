package lease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// execute runs one claimed attempt: PROCESSING, the work under a heartbeat,
// then the transaction that ends the attempt. A lost lease ends the attempt
// without writing: the reaper owns the job from then on.
func (w *worker) execute(ctx context.Context, c claimed) error {
	j := c.job
	held := expression.Name("worker").Equal(expression.Value(w.name)).
		And(expression.Name("attempt").Equal(expression.Value(j.Attempt)))
	started := time.Now().UnixMilli()
	expr, err := expression.NewBuilder().
		WithCondition(held.And(expression.Name("execution_status").Equal(expression.Value(Claimed)))).
		WithUpdate(expression.Set(expression.Name("execution_status"), expression.Value(Processing)).
			Set(expression.Name("started_ms"), expression.Value(started))).Build()
	if err != nil {
		return fmt.Errorf("build start: %w", err)
	}
	if err := w.e.update(ctx, w.date, jobSK(j.JobID), expr); err != nil {
		if lostRace(err) || errors.Is(err, context.Canceled) {
			w.count(func(s *WorkerStats) { s.Dropped++ })
			return nil
		}
		return fmt.Errorf("start job %s: %w", j.JobID, err)
	}
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var (
		mu   sync.Mutex
		lost bool
	)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		valid := time.UnixMilli(started).Add(lease) // our lease, as far as we know
		tick := time.NewTicker(lease / 4)
		defer tick.Stop()
		for {
			select {
			case <-workCtx.Done():
				return
			case <-tick.C:
			}
			// Give up with a quarter lease to spare, so the work has stopped
			// before anyone else may take the job.
			hctx, cancel := context.WithDeadline(workCtx, valid.Add(-lease/4))
			sent := time.Now()
			err := w.heartbeat(hctx, j, held, sent.Add(lease))
			cancel()
			switch {
			case err == nil:
				valid = sent.Add(lease)
			case workCtx.Err() != nil:
				return
			case lostRace(err) || !time.Now().Before(valid.Add(-lease/4)):
				mu.Lock()
				lost = true
				mu.Unlock()
				stopWork()
				return
			}
		}
	}()
	d := time.Duration(j.Estimate * w.p.MinuteMS * float64(time.Millisecond))
	werr := w.work(workCtx, Job{ID: j.JobID, Class: j.Class, Priority: j.Priority, Exclusive: j.Exclusive,
		Estimate: j.Estimate, Attempt: j.Attempt, Slots: c.slots, Worker: w.name}, d)
	stopped := workCtx.Err() != nil
	stopWork()
	<-hbDone
	mu.Lock()
	dropped := lost
	mu.Unlock()
	if dropped || (stopped && ctx.Err() != nil) {
		w.count(func(s *WorkerStats) { s.Dropped++ })
		return nil
	}
	outcome := Success
	if werr != nil {
		outcome = RetriableFailure
		if IsFatal(werr) || j.CurrentRetry >= j.MaxRetry {
			outcome = FatalFailure
		}
	}
	ok, err := w.e.end(ctx, w.date, w.run, j, held, outcome, errText(werr), started, w.minute(), w.p)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		w.count(func(s *WorkerStats) { s.Dropped++ })
	case outcome == Success:
		w.count(func(s *WorkerStats) { s.Finished++ })
	default:
		w.count(func(s *WorkerStats) { s.Failed++ })
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// heartbeat extends the lease while the attempt is still ours.
func (w *worker) heartbeat(ctx context.Context, j jobItem, held expression.ConditionBuilder, until time.Time) error {
	expr, err := expression.NewBuilder().
		WithCondition(held.And(expression.Name("execution_status").In(expression.Value(Claimed), expression.Value(Processing)))).
		WithUpdate(expression.Set(expression.Name(attrLeaseTil), expression.Value(until.UnixMilli())).
			Set(expression.Name("heartbeat_at"), expression.Value(time.Now().UnixMilli()))).Build()
	if err != nil {
		return fmt.Errorf("build heartbeat: %w", err)
	}
	return w.e.update(ctx, w.date, jobSK(j.JobID), expr)
}

// end writes the end of an attempt in one transaction: the job's new state
// (condition held: the attempt is still the one we hold), the pool's release
// (busy, slots, exclusive, running, version; ended for a final state), the
// attempt's outcome, and for FATAL_FAILURE the dead-letter record. ok is
// false when the condition failed: someone else owns the job now.
func (e *Executor) end(ctx context.Context, date, run string, j jobItem, held expression.ConditionBuilder,
	outcome, errMsg string, startedMS int64, now float64, cfg poolItem) (bool, error) {
	nowMS := e.now().UnixMilli()
	status := outcome
	if outcome == LeaseExpired {
		status = RetriableFailure
		if j.CurrentRetry >= j.MaxRetry {
			status = FatalFailure
		}
	}
	ju := expression.Set(expression.Name("execution_status"), expression.Value(status)).
		Remove(expression.Name(attrLeaseSh)).Remove(expression.Name(attrLeaseTil))
	if errMsg != "" {
		ju = ju.Set(expression.Name("last_error"), expression.Value(errMsg))
	}
	if status == RetriableFailure {
		due := now + cfg.Backoff*math.Pow(2, float64(j.CurrentRetry))
		ju = ju.Set(expression.Name("current_retry"), expression.Value(j.CurrentRetry+1)).
			Set(expression.Name(attrShard), expression.Value(shardOf(date, j.Exclusive, j.Priority, j.JobID, cfg.Shards))).
			Set(expression.Name(attrDue), expression.Value(dueKey(due, j.JobID)))
	}
	jobExpr, err := expression.NewBuilder().WithCondition(held).WithUpdate(ju).Build()
	if err != nil {
		return false, fmt.Errorf("build end: %w", err)
	}
	workers := len(j.Slots)
	pu := expression.Add(expression.Name("version"), expression.Value(1)).
		Add(expression.Name("busy"), expression.Value(-workers)).
		Remove(expression.Name("running." + j.JobID))
	for _, i := range j.Slots {
		pu = pu.Set(expression.Name(fmt.Sprintf("slots[%d]", i)), expression.Value(""))
	}
	if j.Exclusive {
		pu = pu.Set(expression.Name("exclusive"), expression.Value(""))
	}
	if status != RetriableFailure {
		pu = pu.Add(expression.Name("ended"), expression.Value(1))
	}
	poolExpr, err := expression.NewBuilder().
		WithCondition(expression.Name("run_id").Equal(expression.Value(run))).WithUpdate(pu).Build()
	if err != nil {
		return false, fmt.Errorf("build release: %w", err)
	}
	au := expression.Set(expression.Name("finished_ms"), expression.Value(nowMS)).
		Set(expression.Name("outcome"), expression.Value(outcome))
	if startedMS > 0 {
		au = au.Set(expression.Name("started_ms"), expression.Value(startedMS))
	}
	if errMsg != "" {
		au = au.Set(expression.Name("error"), expression.Value(errMsg))
	}
	attExpr, err := expression.NewBuilder().WithUpdate(au).Build()
	if err != nil {
		return false, fmt.Errorf("build attempt end: %w", err)
	}
	table := aws.String(e.db.Table())
	items := []types.TransactWriteItem{
		{Update: &types.Update{TableName: table, Key: key(date, jobSK(j.JobID)), ConditionExpression: jobExpr.Condition(),
			UpdateExpression: jobExpr.Update(), ExpressionAttributeNames: jobExpr.Names(), ExpressionAttributeValues: jobExpr.Values()}},
		{Update: &types.Update{TableName: table, Key: key(date, skPool), ConditionExpression: poolExpr.Condition(),
			UpdateExpression: poolExpr.Update(), ExpressionAttributeNames: poolExpr.Names(), ExpressionAttributeValues: poolExpr.Values()}},
		{Update: &types.Update{TableName: table, Key: key(date, attemptSK(j.JobID, j.Attempt)),
			UpdateExpression: attExpr.Update(), ExpressionAttributeNames: attExpr.Names(), ExpressionAttributeValues: attExpr.Values()}},
	}
	if status == FatalFailure {
		dl, err := attributevalue.MarshalMap(struct {
			BatchDate string `dynamodbav:"batch_date"`
			SK        string `dynamodbav:"sk"`
			DeadLetter
		}{date, prefixDLQ + j.JobID, DeadLetter{JobID: j.JobID, Attempts: j.Attempt, LastError: errMsg, AtMS: nowMS}})
		if err != nil {
			return false, fmt.Errorf("marshal dead letter: %w", err)
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: dl}})
	}
	_, err = catalog.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
		return e.db.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			ClientRequestToken: aws.String(token()), TransactItems: items})
	})
	if err != nil {
		if lostRace(err) {
			return false, nil
		}
		return false, fmt.Errorf("end attempt %d of job %s: %w", j.Attempt, j.JobID, err)
	}
	return true, nil
}

// reap re-queues the jobs whose lease expired: one Query on the sparse
// "leases" index, then for each job the end transaction conditioned on the
// lease it saw (lease_until and attempt unchanged), so a heartbeat that
// arrives first wins and the job is left alone.
func (w *worker) reap(ctx context.Context) error {
	nowMS := time.Now().UnixMilli()
	expr, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(attrLeaseSh).Equal(expression.Value(w.date)).
			And(expression.Key(attrLeaseTil).LessThan(expression.Value(nowMS)))).Build()
	if err != nil {
		return fmt.Errorf("build lease query: %w", err)
	}
	pg := dynamodb.NewQueryPaginator(w.e.db.Client(), &dynamodb.QueryInput{TableName: aws.String(w.e.db.Table()),
		IndexName: aws.String(IndexLeases), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	for pg.HasMorePages() {
		page, err := catalog.Call(ctx, w.e.db, func(ctx context.Context) (*dynamodb.QueryOutput, error) { return pg.NextPage(ctx) })
		if err != nil {
			return fmt.Errorf("query expired leases: %w", err)
		}
		var items []jobItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return fmt.Errorf("decode expired leases: %w", err)
		}
		for _, j := range items {
			seen := expression.Name(attrLeaseTil).Equal(expression.Value(j.LeaseUntil)).
				And(expression.Name("attempt").Equal(expression.Value(j.Attempt)))
			msg := fmt.Sprintf("lease expired: worker %s stopped heartbeating", j.Worker)
			ok, err := w.e.end(ctx, w.date, w.run, j, seen, LeaseExpired, msg, j.StartedMS, w.minute(), w.p)
			if err != nil {
				return err
			}
			if ok {
				w.count(func(s *WorkerStats) { s.Reaped++ })
			}
		}
	}
	return nil
}
