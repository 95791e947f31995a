package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
)

// FatalError marks a work error that must not be retried.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return "fatal: " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal wraps err so that the job ends FATAL_FAILURE at once.
func Fatal(err error) error { return &FatalError{err} }

// writes counts write requests and the capacity DynamoDB reported.
type writes struct {
	requests        int
	tableWU, gsiWU  float64
	refused, failed int
}

func (w *writes) add(cc ...types.ConsumedCapacity) {
	total, idx := catalog.WriteUnits(cc...)
	w.gsiWU += idx
	w.tableWU += total - idx
}

// update sends one UpdateItem on the job with cond and upd, asking for the
// consumed capacity (table and indexes) and the new item.
func (f *Fleet) update(ctx context.Context, w *writes, k map[string]types.AttributeValue, cond expression.ConditionBuilder, upd expression.UpdateBuilder) (map[string]types.AttributeValue, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return nil, fmt.Errorf("build expression: %w", err)
	}
	w.requests++
	out, err := catalog.Call(ctx, f.cat, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return f.client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.Table()), Key: k,
			ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValues: types.ReturnValueAllNew, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	if err != nil {
		if fence.Refused(err) {
			w.refused++
		} else {
			w.failed++
		}
		return nil, err
	}
	if out.ConsumedCapacity != nil {
		w.add(*out.ConsumedCapacity)
	}
	return out.Attributes, nil
}

func jobKey(j Job) map[string]types.AttributeValue { return key("USER#"+j.UserID, "JOB#"+j.JobID) }

func n(name string) expression.NameBuilder { return expression.Name(name) }
func v(x any) expression.ValueBuilder      { return expression.Value(x) }

// claimOutcome is what a claim did.
type claimOutcome int

const (
	claimWon   claimOutcome = iota // the job is ours under the returned hold
	claimLost                      // another worker got there first (or the read was stale)
	claimEnded                     // the job's expired lease was its last attempt: ended FATAL_FAILURE
)

// claim is one conditional UpdateItem on a job read from the due index (see
// the package doc). A job read while held (its lease expired) counts a retry;
// with none left it is ended FATAL_FAILURE instead of claimed.
func (f *Fleet) claim(ctx context.Context, w *writes, j Job, holder string) (Job, fence.Hold, claimOutcome, error) {
	now := f.now()
	seen := fence.Token(j.Token)
	retry := j.CurrentRetry
	if j.Status == Claimed || j.Status == Processing { // its holder's lease ended: that attempt failed
		retry++
		if retry > j.MaxRetry {
			err := f.fatal(ctx, w, j, fence.Hold{}, seen, now, "lease expired: the worker stopped heartbeating", j.Attempt)
			if fence.Refused(err) {
				return j, fence.Hold{}, claimLost, nil
			}
			if err != nil {
				return j, fence.Hold{}, claimLost, err
			}
			return j, fence.Hold{}, claimEnded, nil
		}
	}
	until := now.Add(f.opts.Lease)
	step := jobFence.Acquire(seen, holder, until)
	cond := step.Cond.And(n(attrDue).LessThanEqual(v(now.UnixMilli()))).And(expression.AttributeExists(n(attrShard)))
	upd := step.Update.Set(n(attrStatus), v(Claimed)).Set(n(attrDue), v(until.UnixMilli())).
		Set(n(attrRetry), v(retry)).Add(n(attrAttempt), v(1))
	item, err := f.update(ctx, w, jobKey(j), cond, upd)
	if fence.Refused(err) {
		return j, fence.Hold{}, claimLost, nil
	}
	if err != nil {
		return j, fence.Hold{}, claimLost, fmt.Errorf("claim job %s: %w", j.JobID, err)
	}
	got, err := unmarshalJob(item)
	if err != nil {
		return j, fence.Hold{}, claimLost, err
	}
	return got, step.Hold, claimWon, nil
}

// heartbeat renews h's lease on j: lease_until = due_at = until, PROCESSING.
func (f *Fleet) heartbeat(w *writes, j Job, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, jobKey(j), step.Cond, step.Update.Set(n(attrDue), v(until.UnixMilli())).Set(n(attrStatus), v(Processing)))
		return jobFence.Check(err, "heartbeat", h)
	}
}

// end writes the outcome of h's attempt on j (see the package doc) and
// returns the status written.
func (f *Fleet) end(ctx context.Context, w *writes, j Job, h fence.Hold, workErr error) (string, error) {
	now := f.now()
	step := jobFence.Release(h)
	upd := step.Update
	status := Success
	var fatal *FatalError
	switch {
	case workErr == nil:
		sched, _ := time.Parse(time.RFC3339Nano, j.ScheduledAt)
		next := sched.Add(time.Duration(j.IntervalS) * time.Second)
		repeat := j.IntervalS > 0
		if repeat && j.RepeatUntil != "" {
			until, _ := time.Parse(time.RFC3339Nano, j.RepeatUntil)
			repeat = !next.After(until)
		}
		upd = upd.Add(n(attrEnds), v(1)).Add(n(attrRuns), v(1)).Remove(n("last_error"))
		if repeat { // the next run starts with its retries afresh
			status = NotStarted
			upd = upd.Set(n(attrRetry), v(0)).Set(n(attrStatus), v(NotStarted)).Set(n("scheduled_job_execution_time"), v(next.UTC().Format(TimeLayout))).
				Set(n(attrDue), v(next.UnixMilli()))
		} else {
			upd = upd.Set(n(attrStatus), v(Success)).Remove(n(attrShard)).Remove(n(attrDue))
		}
	case !errors.As(workErr, &fatal) && j.CurrentRetry < j.MaxRetry:
		status = RetriableFailure
		retryAt := now.Add(f.backoff(j.CurrentRetry))
		upd = upd.Set(n(attrStatus), v(RetriableFailure)).Set(n(attrRetry), v(j.CurrentRetry+1)).
			Set(n(attrDue), v(retryAt.UnixMilli())).Set(n("last_error"), v(trim(workErr.Error())))
	default:
		err := f.fatal(ctx, w, j, h, 0, now, workErr.Error(), j.Attempt)
		return FatalFailure, jobFence.Check(err, "end", h, 0)
	}
	_, err := f.update(ctx, w, jobKey(j), step.Cond, upd)
	return status, jobFence.Check(err, "end", h)
}

// backoff is RetryBase·2^retry, capped at RetryMax, with full jitter.
func (f *Fleet) backoff(retry int) time.Duration {
	d := f.opts.RetryBase << min(retry, 20)
	if d > f.opts.RetryMax || d <= 0 {
		d = f.opts.RetryMax
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func trim(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}

// fatal ends j FATAL_FAILURE and puts its dead letter, in one transaction.
// The job's write is fenced: by h (the holder ending its attempt) or, for a
// job whose lease expired on its last attempt, by the token seen and the
// lease's end (h zero).
func (f *Fleet) fatal(ctx context.Context, w *writes, j Job, h fence.Hold, seen fence.Token, now time.Time, why string, attempts int) error {
	var step fence.Step
	if h != (fence.Hold{}) {
		step = jobFence.Release(h)
	} else {
		step = jobFence.Revoke(seen)
		step.Cond = step.Cond.And(n(attrDue).LessThanEqual(v(now.UnixMilli()))).And(expression.AttributeExists(n(attrShard)))
	}
	upd := step.Update.Set(n(attrStatus), v(FatalFailure)).Remove(n(attrShard)).Remove(n(attrDue)).
		Add(n(attrEnds), v(1)).Set(n("last_error"), v(trim(why)))
	expr, err := expression.NewBuilder().WithCondition(step.Cond).WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	dl, err := attributevalue.MarshalMap(DeadLetter{UserID: j.UserID, JobID: j.JobID, Attempts: attempts, LastError: trim(why), At: now.UTC().Format(TimeLayout)})
	if err != nil {
		return err
	}
	dl[attrPK] = &types.AttributeValueMemberS{Value: "DLQ"}
	dl[attrSK] = &types.AttributeValueMemberS{Value: j.UserID + "#" + j.JobID}
	w.requests += 2
	out, err := catalog.Call(ctx, f.cat, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
		return f.client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
			TransactItems: []types.TransactWriteItem{
				{Update: &types.Update{TableName: aws.String(f.Table()), Key: jobKey(j), ConditionExpression: expr.Condition(),
					UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}},
				{Put: &types.Put{TableName: aws.String(f.Table()), Item: dl}},
			}})
	})
	if err != nil {
		w.refused++
		return err
	}
	w.add(out.ConsumedCapacity...)
	return nil
}

// attemptText is "<job_id> <attempt>", one line of the work log.
func attemptText(j Job) string { return j.JobID + " " + strconv.Itoa(j.Attempt) + "\n" }
