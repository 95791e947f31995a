package dynamo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// RideOut is the retry policy of a client that must keep going through a
// network outage (lost replies, resets, refused connections, a silent
// server) instead of failing at the first call that gets no answer: the
// executors' workers and coordinators. It has two parts, one backoff:
//
//   - the client's retryer (Options.RideOut): the SDK's standard retryer
//     (its retryable errors, plus transaction conflicts as for every
//     Table), Attempts tries a call, a full-jitter backoff of
//     [0, min(Max, Base·2^(n-1))] before the n-th resend (a throttle, which
//     is an answer, backs off as the standard retryer does: up to 20 s),
//     and no client-side retry quota: the standard one (500 tokens, 5 or 10
//     a retry) is spent within seconds of an outage by a process's
//     heartbeats and polls, after which every call fails at its first
//     error;
//   - an Outage, for a caller that calls again once a call's tries are
//     spent: it waits the same backoff between calls and gives up only
//     once no call has been answered for its bound.
//
// A call resent this way is the same request (the SDK resends the same
// input, ClientRequestToken included; Outage.Do calls the same function),
// so the callers' idempotent writes (conditions, nonces read back) stay
// safe; what the bound is for each caller is the caller's to state.
type RideOut struct {
	Attempts  int           // tries of one call by the SDK's retryer (default 4)
	Base, Max time.Duration // full-jitter backoff bounds (defaults 50 ms and 1 s)
}

// Defaults of RideOut.
const (
	DefaultRideAttempts = 4
	DefaultRideBase     = 50 * time.Millisecond
	DefaultRideMax      = time.Second
)

// WithDefaults returns the policy with every zero field at its default.
func (r RideOut) WithDefaults() RideOut {
	if r.Attempts <= 0 {
		r.Attempts = DefaultRideAttempts
	}
	if r.Base <= 0 {
		r.Base = DefaultRideBase
	}
	if r.Max <= 0 {
		r.Max = DefaultRideMax
	}
	return r
}

// Retryer is the SDK retryer of the policy (see RideOut).
func (r RideOut) Retryer() aws.Retryer {
	r = r.WithDefaults()
	// A throttle is an answer, not an outage: it is backed off as the SDK's
	// standard retryer backs it off (exponential, full jitter, up to 20 s),
	// so that a throttled table is not sent its refused writes again within
	// a second. Only calls that got no answer take the short backoff.
	throttled := retry.IsErrorThrottles(retry.DefaultThrottles)
	slow := retry.NewExponentialJitterBackoff(20 * time.Second)
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = r.Attempts
		o.RateLimiter = ratelimit.None
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, err error) (time.Duration, error) {
			if throttled.IsErrorThrottle(err) == aws.TrueTernary {
				return slow.BackoffDelay(attempt, err)
			}
			return wait.Backoff(attempt, r.Base, r.Max), nil
		})
	})
}

// NoAnswer reports whether err says that DynamoDB gave no answer to a call:
// nothing answered at the endpoint or the call timed out
// (*awsapi.UnreachableError), the request could not be sent or its reply
// was lost or cut (a send error, a reset or closed connection, an
// unexpected end of the reply, a network timeout: also once the retryer's
// tries or its quota were spent), or the server answered that it is
// unavailable (HTTP 5xx). A refusal (a failed condition, a cancelled
// transaction) or a missing table is an answer, as is a cancelled context.
func NoAnswer(err error) bool {
	var gaveUp *OutageError
	if err == nil || errors.Is(err, context.Canceled) || errors.As(err, &gaveUp) {
		return false // an outage already ridden out to its bound is not ridden again
	}
	var un *awsapi.UnreachableError
	var send *smithyhttp.RequestSendError
	var resp *awshttp.ResponseError
	var ne net.Error
	switch {
	case errors.As(err, &un), errors.As(err, &send):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	case errors.As(err, &resp) && resp.HTTPStatusCode() >= 500:
		return true
	}
	return false
}

// OutageError says that a caller gave up after DynamoDB had not answered it
// for longer than the outage it rides out. Its message is one line: who
// gave up, for how long nothing answered, and what to do.
type OutageError struct {
	Who      string        // "worker w1 of night 2026-05-13"
	Endpoint string        // where DynamoDB was expected
	Lasted   time.Duration // since the first call that got no answer
	Bound    time.Duration // the outage the caller rides out
	Fix      string        // what to do now
	Err      error         // the last call's error
}

func (e *OutageError) Error() string {
	fix := e.Fix
	var un *awsapi.UnreachableError
	if errors.As(e.Err, &un) && un.Reason == "connection refused" { // nothing listens there now: maybe stopped
		s := un.Service
		if s.Name == "" {
			s = awsapi.DynamoDB
		}
		if un.Local {
			fix += "; if nothing runs there any more: " + s.UnreachableLocalFix
		} else {
			fix += "; " + s.UnreachableFix
		}
	}
	return fmt.Sprintf("%s: no answer from DynamoDB at %s for %.1f s, longer than the %s it rides out (last: %s); %s",
		e.Who, e.Endpoint, e.Lasted.Seconds(), e.Bound, shortReason(e.Err), fix)
}

// Unwrap returns the last call's error.
func (e *OutageError) Unwrap() error { return e.Err }

// shortReason names why a call got no answer in a few words.
func shortReason(err error) string {
	var un *awsapi.UnreachableError
	var resp *awshttp.ResponseError
	switch {
	case errors.As(err, &un):
		return un.Reason
	case errors.As(err, &resp) && resp.HTTPStatusCode() >= 500:
		return fmt.Sprintf("HTTP %d", resp.HTTPStatusCode())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "reply lost (connection closed)"
	}
	if r := awsapi.UnreachableReason(err); r != "" {
		return r
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return "request not answered"
}

// Outage rides one caller through calls that get no answer: Ride is given
// each call's outcome; from the first unanswered call on it waits a
// full-jitter backoff (the table's RideOut bounds) before the caller calls
// again, until a call is answered or For has passed since that first
// unanswered call, when it gives up with an *OutageError. One Outage
// serves one caller (goroutine); it is not safe for concurrent use.
type Outage struct {
	For time.Duration // the longest outage ridden out
	Who string        // the caller, for the message
	Fix string        // what to do once it gives up
	// Answered, when set, says when another call of the same caller's
	// process was last answered (a heartbeat of a lease it holds, sent by
	// another goroutine): an outage is then timed from the later of its
	// first unanswered call and that answer. A caller whose leases are
	// still being renewed is not cut off, however slowly its own calls
	// fail on a busy machine.
	Answered func() time.Time
	t        *Table
	p        RideOut
	// since is when the first unanswered call of the current outage
	// returned (Ride) or was sent (Do); the outage is timed from there on
	// this process's monotonic clock.
	since time.Time
	n     int
}

// Outage returns an outage rider of the table's RideOut policy (its
// defaults when the table has none) for the caller who, bound d.
func (t *Table) Outage(d time.Duration, who, fix string) *Outage {
	var p RideOut
	if t.opts.RideOut != nil {
		p = *t.opts.RideOut
	}
	return &Outage{For: d, Who: who, Fix: fix, t: t, p: p.WithDefaults()}
}

// Ride takes one call's error. An answer (nil, or any error NoAnswer
// rejects) ends the outage and is returned unchanged, as is every error
// once ctx has ended. No answer within For of the outage's first one
// waits a backoff and returns nil: call again. Past For it returns an
// *OutageError.
func (o *Outage) Ride(ctx context.Context, err error) error {
	if !NoAnswer(err) || ctx.Err() != nil {
		o.since, o.n = time.Time{}, 0
		return err
	}
	now := time.Now()
	if o.since.IsZero() {
		o.since = now
	}
	if o.Answered != nil {
		if a := o.Answered(); a.After(o.since) && !a.After(now) {
			o.since = a
		}
	}
	if lasted := now.Sub(o.since); lasted > o.For {
		o.since, o.n = time.Time{}, 0
		return &OutageError{Who: o.Who, Endpoint: o.t.Where(), Lasted: lasted, Bound: o.For, Fix: o.Fix, Err: err}
	}
	o.n++
	d := wait.Backoff(o.n, o.p.Base, o.p.Max)
	if left := o.For - now.Sub(o.since); d > left { // the last try comes at the bound, not after it
		d = max(left, 0)
	}
	if wait.Sleep(ctx, d) != nil {
		return err
	}
	return nil
}

// Outage reports how long the current outage has lasted (0: none).
func (o *Outage) Lasted() time.Duration {
	if o.since.IsZero() {
		return 0
	}
	return time.Since(o.since)
}

// Do calls fn until it is answered, riding out (Ride) the calls that are
// not: the same call each time, so fn must be safe to send again (an
// idempotent or self-recognising write, or a read).
//
// The outage is timed from the start of the first call that got no
// answer: a call that hung until its timeout (a silent endpoint) counts
// whole.
func (o *Outage) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	for {
		began := time.Now()
		err := fn(ctx)
		if o.since.IsZero() && NoAnswer(err) && ctx.Err() == nil {
			o.since = began
		}
		if err = o.Ride(ctx, err); err != nil || !o.inOutage() {
			return err
		}
	}
}

func (o *Outage) inOutage() bool { return !o.since.IsZero() }
