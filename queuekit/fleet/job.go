package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
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
)

// writes counts write requests and the capacity DynamoDB reported.
type writes struct {
	requests        int
	tableWU, gsiWU  float64
	refused, failed int
	landed          int // refused retries recognised as ours (their first try committed)
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
	out, err := f.db.UpdateItem(ctx, k, expr, func(in *dynamodb.UpdateItemInput) {
		in.ReturnValues, in.ReturnConsumedCapacity = types.ReturnValueAllNew, types.ReturnConsumedCapacityIndexes
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
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

// newNonce is a fresh random nonce for one write (see attrNonce).
func newNonce() string { return strconv.FormatUint(rand.Uint64(), 36) }

// landed reports whether a write refused by its condition had in fact
// committed before: the item that refused it (ReturnValuesOnConditionCheckFailure
// ALL_OLD) carries the write's nonce. That is a retry whose first try
// landed with its reply lost; it returns the item as that write left it.
func landed(err error, nonce string) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) || ccf.Item == nil {
		return nil, false
	}
	got, ok := ccf.Item[attrNonce].(*types.AttributeValueMemberS)
	return ccf.Item, ok && got.Value == nonce
}

// held reports whether j was read while held (CLAIMED or PROCESSING).
func held(j Job) bool {
	return j.Status == queuekit.StatusClaimed || j.Status == queuekit.StatusProcessing
}

// takeover is the condition of a write that takes a job read while held
// away from its holder: the lease is exactly as read, token and lease end
// (the holder has not renewed it since), and the job still claimable. The
// caller found the lease stale: seen unchanged for a lease on its own
// clock, or MaxSkew past its end (see the package doc, "Clocks").
func takeover(j Job) expression.ConditionBuilder {
	return jobFence.At(fence.Token(j.Token)).And(n(attrUntil).Equal(v(j.LeaseUntil))).And(expression.AttributeExists(n(attrShard)))
}

// claim is one conditional UpdateItem on a job read from the due index (see
// the package doc). A job read while held must have been found stale (the
// worker's poll does that); its expired lease counts a
// lost attempt (lost_attempts, not current_retry: the job did not fail),
// and past the fleet's MaxLost the job is ended FATAL_FAILURE instead of
// claimed. The lease's clock starts before the call: the holder's lease is
// counted from the moment the claim was sent, so the claim's own latency
// (retries, timeouts) is not added to what the holder believes it has left.
func (f *Fleet) claim(ctx context.Context, w *writes, j Job, holder string) (Job, fence.Hold, time.Time, claimOutcome, error) {
	now := f.now()
	sent := time.Now() // the lease clock: monotonic, started before the call
	seen := fence.Token(j.Token)
	lost := j.LostAttempts
	cond := jobFence.At(seen).And(n(attrDue).LessThanEqual(v(now.UnixMilli()))).And(expression.AttributeExists(n(attrShard)))
	if held(j) { // its holder's lease ended: that attempt was lost, not failed
		cond = takeover(j)
		lost++
		if lost > f.opts.MaxLost {
			err := f.fatal(ctx, w, j, fence.Hold{}, seen, now,
				fmt.Sprintf("lease expired: lost attempts %d, past the fleet's bound of %d: its worker stopped heartbeating each time (a job that kills its worker looks like this)", lost, f.opts.MaxLost), j.Attempt)
			if fence.Refused(err) {
				return j, fence.Hold{}, sent, claimLost, nil
			}
			if err != nil {
				return j, fence.Hold{}, sent, claimLost, err
			}
			return j, fence.Hold{}, sent, claimEnded, nil
		}
	}
	until := now.Add(f.opts.Lease)
	step := jobFence.Acquire(seen, holder, until)
	nonce := newNonce()
	upd := step.Update.Set(n(attrStatus), v(queuekit.StatusClaimed)).Set(n(attrDue), v(until.UnixMilli())).
		Set(n(attrLost), v(lost)).Add(n(attrAttempt), v(1)).Set(n(attrNonce), v(nonce))
	if held(j) { // how late after the lost lease's end the takeover was sent
		upd = upd.Set(n(attrTakeover), v(now.UnixMilli()-j.LeaseUntil))
	} else { // the due index does not carry it: removed whatever it was
		upd = upd.Remove(n(attrTakeover))
	}
	item, err := f.update(ctx, w, jobKey(j), cond, upd)
	if old, ok := landed(err, nonce); ok { // our claim landed, its reply was lost
		item, err = old, nil
		w.refused--
		w.landed++
	}
	if fence.Refused(err) {
		return j, fence.Hold{}, sent, claimLost, nil
	}
	if err != nil {
		return j, fence.Hold{}, sent, claimLost, fmt.Errorf("claim job %s: %w", j.JobID, err)
	}
	got, err := unmarshalJob(item)
	if err != nil {
		return j, fence.Hold{}, sent, claimLost, err
	}
	return got, step.Hold, sent, claimWon, nil
}

// heartbeat renews h's lease on j: lease_until = due_at = until, PROCESSING.
func (f *Fleet) heartbeat(w *writes, j Job, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, jobKey(j), step.Cond, step.Update.Set(n(attrDue), v(until.UnixMilli())).Set(n(attrStatus), v(queuekit.StatusProcessing)))
		return jobFence.Check(err, "heartbeat", h)
	}
}

// end writes the outcome of h's attempt on j (see the package doc) and
// returns the status written.
func (f *Fleet) end(ctx context.Context, w *writes, j Job, h fence.Hold, workErr error) (queuekit.Status, error) {
	now := f.now()
	step := jobFence.Release(h)
	upd := step.Update
	status := queuekit.StatusSuccess
	var fatal *queuekit.FatalError
	switch {
	case workErr == nil:
		sched, err := parseSchedule(j.ScheduledAt)
		next := sched.Add(time.Duration(j.IntervalS) * time.Second)
		repeat := j.IntervalS > 0
		if repeat && j.RepeatUntil != "" && err == nil {
			var until time.Time
			until, err = parseSchedule(j.RepeatUntil)
			repeat = !next.After(until)
		}
		if repeat && err != nil { // never schedule from a bad time (a negative due_at fires in a hot loop)
			bad := queuekit.Fatal(fmt.Errorf("%w", &InputError{"scheduled_job_execution_time", j.ScheduledAt + " / " + j.RepeatUntil, "a recurring job needs RFC 3339 times from 2000 to 9999: fix and resubmit it"}))
			ferr := f.fatal(ctx, w, j, h, 0, now, bad.Error(), j.Attempt)
			return queuekit.StatusFatalFailure, jobFence.Check(ferr, "end", h, 0)
		}
		upd = upd.Add(n(attrEnds), v(1)).Add(n(attrRuns), v(1)).Remove(n("last_error"))
		if repeat { // the next run starts with its retries afresh
			status = queuekit.StatusNotStarted
			upd = upd.Set(n(attrRetry), v(0)).Set(n(attrLost), v(0)).Set(n(attrStatus), v(queuekit.StatusNotStarted)).Set(n("scheduled_job_execution_time"), v(next.UTC().Format(TimeLayout))).
				Set(n(attrDue), v(next.UnixMilli()))
		} else {
			upd = upd.Set(n(attrStatus), v(queuekit.StatusSuccess)).Remove(n(attrShard)).Remove(n(attrDue))
		}
	case !errors.As(workErr, &fatal) && j.CurrentRetry < j.MaxRetry:
		status = queuekit.StatusRetriableFailure
		retryAt := now.Add(f.backoff(j.CurrentRetry))
		upd = upd.Set(n(attrStatus), v(queuekit.StatusRetriableFailure)).Set(n(attrRetry), v(j.CurrentRetry+1)).
			Set(n(attrDue), v(retryAt.UnixMilli())).Set(n("last_error"), v(trim(workErr.Error())))
	default:
		err := f.fatal(ctx, w, j, h, 0, now, workErr.Error(), j.Attempt)
		return queuekit.StatusFatalFailure, jobFence.Check(err, "end", h, 0)
	}
	nonce := newNonce()
	_, err := f.update(ctx, w, jobKey(j), step.Cond, upd.Set(n(attrNonce), v(nonce)))
	if _, ok := landed(err, nonce); ok { // our end landed, its reply was lost: not fenced
		w.refused--
		w.landed++
		return status, nil
	}
	return status, jobFence.Check(err, "end", h)
}

// backoff is RetryBase·2^retry, capped at RetryMax, with full jitter (the
// module's one rule, wait.Backoff; retry 0 is its first attempt).
func (f *Fleet) backoff(retry int) time.Duration {
	return wait.Backoff(retry+1, f.opts.RetryBase, f.opts.RetryMax)
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
		step.Cond = takeover(j)
	}
	nonce := newNonce()
	upd := step.Update.Set(n(attrStatus), v(queuekit.StatusFatalFailure)).Remove(n(attrShard)).Remove(n(attrDue)).
		Add(n(attrEnds), v(1)).Set(n("last_error"), v(trim(why))).Set(n(attrNonce), v(nonce))
	expr, err := expression.NewBuilder().WithCondition(step.Cond).WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	dl, err := attributevalue.MarshalMap(DeadLetter{UserID: j.UserID, JobID: j.JobID, Attempts: attempts, LastError: trim(why), At: now.UTC().Format(TimeLayout)})
	if err != nil {
		return err
	}
	dl[AttrPK] = &types.AttributeValueMemberS{Value: DeadLetterKey(j.UserID, j.JobID)}
	dl[AttrSK] = &types.AttributeValueMemberS{Value: j.UserID + "#" + j.JobID}
	w.requests += 2
	out, err := dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
		return f.client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
			TransactItems: []types.TransactWriteItem{
				{Update: &types.Update{TableName: aws.String(f.Table()), Key: jobKey(j), ConditionExpression: expr.Condition(),
					UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
				{Put: &types.Put{TableName: aws.String(f.Table()), Item: dl}},
			}})
	})
	if err != nil {
		// The SDK gives the transaction one ClientRequestToken for all its
		// tries, so a retry of a transaction that landed succeeds; a later
		// refusal whose item carries our nonce landed too.
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) && len(tce.CancellationReasons) > 0 {
			if got, ok := tce.CancellationReasons[0].Item[attrNonce].(*types.AttributeValueMemberS); ok && got.Value == nonce {
				w.landed++
				return nil
			}
		}
		w.refused++
		return err
	}
	w.add(out.ConsumedCapacity...)
	return nil
}

// attemptText is "<job_id> <attempt>", one line of the work log.
func attemptText(j Job) string { return j.JobID + " " + strconv.Itoa(j.Attempt) + "\n" }

// Unfinished counts the jobs still in the due index (not ended: claimable,
// held, or waiting for a retry), one COUNT Query per shard. A count that
// gets no answer from DynamoDB (lost replies, resets, a refused or silent
// endpoint) is read again after a backoff, for up to RideOut: the
// coordinator that waits on it rides out an outage its workers ride out
// too, and gives up past it with a *dynamo.OutageError saying what to do.
func (f *Fleet) Unfinished(ctx context.Context, shards int) (int, error) {
	var total atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for k := range shards {
		g.Go(func() error {
			kc, err := expression.NewBuilder().WithKeyCondition(expression.Key(attrShard).Equal(expression.Value(k))).Build()
			if err != nil {
				return fmt.Errorf("count shard %d's unfinished jobs: build the key condition: %w", k, err)
			}
			in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), IndexName: aws.String(IndexDue), Select: types.SelectCount,
				KeyConditionExpression: kc.KeyCondition(), ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values()}
			o := f.db.Outage(f.RideOut(), fmt.Sprintf("the count of shard %d's unfinished jobs on %s", k, f.Table()),
				"the workers keep their jobs; check the network to DynamoDB, then run the same fleet again (it resumes the table)")
			var n int64
			err = o.Do(gctx, func(ctx context.Context) error {
				n = 0
				for out, err := range f.db.QueryPages(ctx, in) {
					if err != nil {
						return err
					}
					n += int64(out.Count)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("count unfinished jobs of shard %d: %w", k, err)
			}
			total.Add(n)
			return nil
		})
	}
	err := g.Wait()
	return int(total.Load()), err
}

// RideOut is the longest outage of DynamoDB that the fleet's coordinator
// calls ride out (Unfinished): two of the longer of the job and shard
// leases, and at least 10 s. Its workers ride out any outage (they never
// exit on a call that got no answer); a lease they could not renew within
// it is lost and its job claimed again, as the package doc says.
func (f *Fleet) RideOut() time.Duration {
	return max(10*time.Second, 2*max(f.opts.Lease, f.opts.ShardLease))
}
