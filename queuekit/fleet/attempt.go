package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fence"
)

// ClaimResult is what Claim did.
type ClaimResult int

const (
	// Claimed: the job is the caller's, under the Attempt returned.
	Claimed ClaimResult = iota
	// Refused: the claim's condition refused it: the job was claimed by
	// someone else, has ended, or moved on since it was read (a duplicate
	// message, or a stale one). Nothing was written.
	Refused
	// EndedFatal: the job was read held, its holder's lease ran out, and
	// that was its last attempt: the claim ended it FATAL_FAILURE with its
	// dead letter instead.
	EndedFatal
)

// WriteCost is what a holder's writes cost: requests sent (refused ones
// too: AWS bills them), the write units DynamoDB reported for the table
// and its indexes, and retries refused by their own earlier landing
// (recognised by the op_nonce).
type WriteCost struct {
	Requests         int
	TableWU, IndexWU float64
	Landed           int
}

// Attempt is one claimed attempt at a job by a holder outside Join: the
// two-tier fleet's executors (package dispatch) claim jobs they receive
// from a queue with Claim, and run them with Run (or end them with End).
// Every write is the one Join's workers send: the claim, the heartbeats of
// fence.Keep every Lease/4, and the end fenced by the claim's token.
type Attempt struct {
	f *Fleet
	// Job is the job as the claim left it: its fence token moved on, the
	// holder named, its attempt counted.
	Job  Job
	hold fence.Hold
	sent time.Time

	mu sync.Mutex
	w  writes
	// also, when set (the one-tier worker's), gets each write's counts as
	// it is sent, so a worker's counters move while its attempts run.
	also func(writes)
}

// Claim claims j for holder with the one conditional UpdateItem of the
// package doc: fence_token = the token read AND due_at <= now AND the job
// still in the due index; or, for j read while held (its holder's lease
// stale to whoever read it: watched unchanged for a lease or MaxSkew past
// its end, the caller's duty, as a dispatcher's), fence_token AND lease_until exactly as read, counting a
// lost attempt, and past the fleet's MaxLost ending it FATAL_FAILURE
// (EndedFatal). j needs the fields a due-index entry carries: user_id,
// job_id, fence_token, execution_status, lease_until, current_retry,
// max_retry, lost_attempts, attempt.
//
// A refused claim (a duplicate or stale message, a job claimed or ended
// by someone else) returns Refused and a nil Attempt, with no error. An
// error means DynamoDB gave no answer: the claim may have landed, and the
// job then comes back when that lease ends. The lease's clock starts
// before the call.
func (f *Fleet) Claim(ctx context.Context, j Job, holder string) (*Attempt, ClaimResult, WriteCost, error) {
	var w writes
	got, h, sent, outcome, err := f.claim(ctx, &w, j, holder)
	cost := w.cost()
	switch {
	case err != nil:
		return nil, Refused, cost, err
	case outcome == claimLost:
		return nil, Refused, cost, nil
	case outcome == claimEnded:
		return nil, EndedFatal, cost, nil
	}
	return &Attempt{f: f, Job: got, hold: h, sent: sent}, Claimed, cost, nil
}

func (w writes) cost() WriteCost {
	return WriteCost{Requests: w.requests, TableWU: w.tableWU, IndexWU: w.gsiWU, Landed: w.landed}
}

// Token is the attempt's fence token: every heartbeat and the end are
// conditioned on it.
func (a *Attempt) Token() int64 { return int64(a.hold.Token) }

// Cost is what the attempt's heartbeats and end cost so far (the claim's
// cost is Claim's).
func (a *Attempt) Cost() WriteCost {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.w.cost()
}

func (a *Attempt) merge(w writes) {
	a.mu.Lock()
	a.w.requests += w.requests
	a.w.tableWU += w.tableWU
	a.w.gsiWU += w.gsiWU
	a.w.landed += w.landed
	a.w.refused += w.refused
	a.w.failed += w.failed
	a.mu.Unlock()
	if a.also != nil {
		a.also(w)
	}
}

// Run keeps the attempt's lease (a heartbeat every Lease/4: PROCESSING,
// lease_until = due_at moved on), runs work under a context cancelled when
// the lease is lost, writes "<job_id> <attempt>" to log (when not nil)
// once the work finished with the lease held, and ends the job (End). An
// error wrapping fence.ErrFenced or fence.ErrExpired says the lease was
// lost and nothing was ended: the job's next holder ends it. Any other
// error is an end with no answer (it may have landed).
func (a *Attempt) Run(ctx context.Context, work WorkFunc, log io.Writer) (queuekit.Status, error) {
	keeper, wctx := fence.Keep(ctx, a.sent, a.f.opts.Lease, func(ctx context.Context, until time.Time) error {
		var w writes
		err := a.f.heartbeat(&w, a.Job, a.hold)(ctx, until)
		a.merge(w)
		return err
	})
	werr := work(wctx, a.Job)
	if log != nil && wctx.Err() == nil {
		_, _ = io.WriteString(log, attemptText(a.Job))
	}
	if err := keeper.Stop(); err != nil {
		return "", fmt.Errorf("job %s attempt %d: lease lost before its end: %w", a.Job.JobID, a.Job.Attempt, err)
	}
	return a.End(ctx, werr)
}

// End ends the attempt with the fenced UpdateItem of the package doc
// (SUCCESS, the next run of a recurring job, RETRIABLE_FAILURE with a
// backoff, or FATAL_FAILURE and its dead letter for queuekit.Fatal errors
// and the last retry), conditioned on the attempt's token: refused, with an
// error wrapping fence.ErrFenced, once somebody else took the job over.
func (a *Attempt) End(ctx context.Context, workErr error) (queuekit.Status, error) {
	var w writes
	status, err := a.f.end(ctx, &w, a.Job, a.hold, workErr)
	a.merge(w)
	if err != nil && !errors.Is(err, fence.ErrFenced) {
		return status, fmt.Errorf("end job %s: %w", a.Job.JobID, err)
	}
	return status, err
}
