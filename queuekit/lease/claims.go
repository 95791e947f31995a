package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// This file holds the claim step apart from the worker loop that normally
// makes it: built and sent separately, so that a reader can see the
// transaction's conditions and a lost race's cancellation reasons. It stays
// in lease because it is made of lease's unexported steps (the pool read,
// the planner, the claim builder); staging it outside would export all three.

// Claim is a claim transaction a worker built and has not sent: the job it
// claims and its TransactWriteItems input (the pool item's update first,
// then the job item's, then the attempt's put).
type Claim struct {
	Worker, JobID string
	Input         *dynamodb.TransactWriteItemsInput
}

// StageClaims exposes the claim step of the protocol for inspection, for a
// notebook that races claims (leaselab.RaceForOneJob): it prepares night n with cfg, starts its
// clock with no worker process, and builds the claim each named worker would
// send now, every one from the same read of the pool (one version), so all
// pick the same job, the head of the queue. None is sent (SendClaim sends
// one). end marks the night DONE, so that a run can follow at once; call it
// when done, whatever happened.
func (e *Executor) StageClaims(ctx context.Context, n queuekit.Night, cfg Config, workers []string) (claims []Claim, end func(), err error) {
	cfg = cfg.WithDefaults()
	runID, err := e.Prepare(ctx, n, cfg)
	if err != nil {
		return nil, nil, err
	}
	date := n.BatchDate
	end = func() {
		if expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolDone))).Build(); err == nil {
			_ = e.update(context.WithoutCancel(ctx), date, skPool, expr)
		}
	}
	defer func() {
		if err != nil {
			end()
		}
	}()
	now := e.now().UnixMilli()
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolRunning)).
		Set(expression.Name("t0_ms"), expression.Value(now))).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build start: %w", err)
	}
	if err := e.update(ctx, date, skPool, expr); err != nil {
		return nil, nil, fmt.Errorf("start night %s: %w", date, err)
	}
	p, _, err := e.readPool(ctx, date)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range workers {
		w := &worker{e: e, date: date, run: runID, name: name, p: p}
		picks, err := w.plan(ctx, p, w.minuteAt(now), 1)
		if err != nil {
			return nil, nil, err
		}
		if len(picks) == 0 {
			return nil, nil, fmt.Errorf("night %s: nothing is due at minute 0", date)
		}
		in, _, err := w.claimInput(p, picks[:1], now)
		if err != nil {
			return nil, nil, fmt.Errorf("build claim of %s: %w", picks[0].job.JobID, err)
		}
		claims = append(claims, Claim{Worker: name, JobID: picks[0].job.JobID, Input: in})
	}
	return claims, end, nil
}

// SendClaim sends a staged claim. won is false when DynamoDB cancelled the
// transaction because a condition failed (a lost race: another claim
// changed the pool or the job first); reasons then lists each item's
// cancellation reason in the order of the transaction ("None" where that
// item was fine). Any other failure is err.
func (e *Executor) SendClaim(ctx context.Context, c Claim) (won bool, reasons []string, err error) {
	_, err = dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
		return e.db.Client().TransactWriteItems(ctx, c.Input)
	})
	switch {
	case err == nil:
		return true, nil, nil
	case lostRace(err):
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			for _, r := range tce.CancellationReasons {
				reasons = append(reasons, aws.ToString(r.Code))
			}
		}
		return false, reasons, nil
	}
	return false, nil, fmt.Errorf("claim by %s: %w", c.Worker, err)
}
