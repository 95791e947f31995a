package fence

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Beat is one heartbeat write of a holder: it sets the lease's end to until
// under the holder's fencing condition (typically an UpdateItem built from
// Fence.Renew, its error passed through Fence.Check). It returns nil when
// the lease was renewed, an error matching ErrFenced when the lease changed
// hands, or any other error, which counts as a failed try to be repeated
// while the lease lasts. ctx ends when, as far as the holder knows, the
// lease is about to run out.
type Beat func(ctx context.Context, until time.Time) error

// Options tune Keep.
type Options struct {
	// Every is the time between heartbeats (default Lease/4, at most
	// Lease/2). A failed heartbeat is tried again after Every/4.
	Every time.Duration
	// Margin is how long before the lease's end, as the holder knows it, the
	// work is stopped when no heartbeat got through (default Lease/4, at
	// most Lease/4): the work has stopped before anyone may take the lease
	// over, clocks permitting.
	Margin time.Duration
	// Hedge is how long a heartbeat waits for an answer before it sends a
	// copy on another request, and again after each further Hedge, up to
	// MaxCopies copies in flight (the same lease end, so whichever lands
	// sets what the first would have); the first answer is the
	// heartbeat's (default Every/2; negative: never). A reply held by a
	// slow connection then costs a request, not the lease: without copies,
	// one reply held past the margin lost the lease (and a shard or a
	// membership changed hands).
	Hedge time.Duration
	// OnCopy, when set, is called for each copy Hedge sends (a billed
	// write the holder's cost counters may want to count apart).
	OnCopy func()
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Keeper keeps one lease alive while its work runs. Make one with Keep.
type Keeper struct {
	lease, every, margin, hedge time.Duration
	onCopy                      func()
	now                         func() time.Time
	beat                        Beat
	parent                      context.Context
	cancel                      context.CancelCauseFunc
	stop, done                  chan struct{}
	stopOnce                    sync.Once

	mu      sync.Mutex
	valid   time.Time // the lease's end as the holder knows it: last renewal's send time + lease
	nextDue time.Time // when the next heartbeat is due
	beats   int       // heartbeats that renewed the lease
	copies  int       // copies sent by hedged heartbeats (Hedge)
	loss    error     // the loss, once lost
}

// Keep starts heartbeating a lease of length lease that the holder was
// granted (or last renewed) by a write it sent at since, and returns the
// keeper and the context the work must run under. The work's context is
// cancelled, with the loss as its cause (context.Cause), as soon as a
// heartbeat is refused by the fence (ErrFenced) or no heartbeat got
// through before the lease's end minus the margin (ErrExpired). A
// heartbeat that comes due after a pause (the process stopped, the machine
// asleep) is still sent: if nobody took the lease over, the token is
// unchanged and the renewal holds; if somebody did, it is fenced.
//
// Call Stop when the work returns, before the holder's last write: it sends
// a heartbeat that is due (never skipped because the work finished first)
// and says whether the lease is still held.
func Keep(ctx context.Context, since time.Time, lease time.Duration, beat Beat, opts ...func(*Options)) (*Keeper, context.Context) {
	o := Options{Every: lease / 4, Margin: lease / 4, Now: time.Now}
	for _, fn := range opts {
		fn(&o)
	}
	if o.Every <= 0 || o.Every > lease/2 {
		o.Every = max(lease/4, time.Millisecond)
	}
	if o.Margin < 0 || o.Margin > lease/4 {
		o.Margin = lease / 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hedge == 0 {
		o.Hedge = max(o.Every/2, time.Millisecond)
	}
	wctx, cancel := context.WithCancelCause(ctx)
	k := &Keeper{lease: lease, every: o.Every, margin: o.Margin, hedge: o.Hedge, onCopy: o.OnCopy, now: o.Now, beat: beat, parent: ctx, cancel: cancel,
		stop: make(chan struct{}), done: make(chan struct{}),
		valid: since.Add(lease), nextDue: since.Add(o.Every)}
	go k.loop(time.NewTimer(max(k.until(k.nextDue), 0)))
	return k, wctx
}

// loop sends the heartbeats until Stop, the loss of the lease, or the end
// of the parent context.
func (k *Keeper) loop(t *time.Timer) {
	defer close(k.done)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-k.parent.Done():
			return
		case <-t.C:
		}
		if err := k.try(); err != nil {
			if k.lost() {
				return
			}
			t.Reset(max(k.every/4, time.Millisecond)) // failed: try again soon
			continue
		}
		t.Reset(max(k.until(k.nextDueAt()), 0))
	}
}

func (k *Keeper) until(t time.Time) time.Duration { return t.Sub(k.now()) }

func (k *Keeper) nextDueAt() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nextDue
}

func (k *Keeper) lost() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.loss != nil
}

// try sends one heartbeat. It returns nil when the lease was renewed; on a
// refusal by the fence, or a failure once the lease is about to run out,
// it records the loss and cancels the work.
func (k *Keeper) try() error {
	k.mu.Lock()
	valid := k.valid
	k.mu.Unlock()
	sent := k.now()
	deadline := valid.Add(-k.margin)
	inDoubt := !sent.Before(deadline)
	if inDoubt {
		// In doubt (we were paused past the margin): one try, briefly. It
		// succeeds only if the lease never changed hands.
		deadline = sent.Add(k.every)
	}
	// The deadline is on k.now's clock; a context deadline is on the real
	// one. A clock offset on purpose (Options.Now, e.g. a test's skewed
	// clock) is taken off, to the millisecond; the real clock's shift rounds
	// to 0, so its deadline stays exact.
	shift := time.Until(k.now()).Round(time.Millisecond)
	bctx, cancel := context.WithDeadline(k.parent, deadline.Add(-shift))
	err := k.hedged(bctx, sent.Add(k.lease))
	cancel()
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err == nil:
		k.valid, k.nextDue = sent.Add(k.lease), sent.Add(k.every)
		k.beats++
		return nil
	case k.parent.Err() != nil:
		return err
	case errors.Is(err, ErrFenced):
		k.loseLocked(err)
	case inDoubt || !k.now().Before(deadline):
		k.loseLocked(fmt.Errorf("%w: no heartbeat got through before the lease's end (%s) less the margin %s: %w",
			ErrExpired, valid.Format("15:04:05.000"), k.margin, err))
	}
	return err
}

// MaxCopies is the most copies a hedged heartbeat sends (Options.Hedge).
const MaxCopies = 3

// hedged sends one heartbeat and, while none has answered, a copy of it
// with the same lease end every Hedge, up to MaxCopies; it returns the
// first success or refusal by the fence, or, when all failed, the last
// error. Copies still pending are cancelled; one that lands anyway writes
// what the first did.
func (k *Keeper) hedged(ctx context.Context, until time.Time) error {
	if k.hedge < 0 {
		return k.beat(ctx, until)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := make(chan error, 1+MaxCopies)
	send := func() { go func() { res <- k.beat(ctx, until) }() }
	send()
	inFlight, copies := 1, 0
	t := time.NewTimer(k.hedge)
	defer t.Stop()
	var last error
	for inFlight > 0 {
		select {
		case err := <-res:
			inFlight--
			if err == nil || errors.Is(err, ErrFenced) {
				return err
			}
			last = err
		case <-t.C:
			if copies < MaxCopies && ctx.Err() == nil {
				copies++
				inFlight++
				k.mu.Lock()
				k.copies++
				k.mu.Unlock()
				if k.onCopy != nil {
					k.onCopy()
				}
				send()
				t.Reset(k.hedge)
			}
		}
	}
	return last
}

// Copies is how many heartbeat copies Hedge sent so far.
func (k *Keeper) Copies() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.copies
}

func (k *Keeper) loseLocked(err error) {
	if k.loss == nil {
		k.loss = err
		k.cancel(err)
	}
}

// Stop stops the heartbeats once the work has returned. A heartbeat that is
// due is sent first (tried again until it gets through or the lease is
// lost). It returns nil when the lease is still held, valid until Valid()
// and for at least the margin from now; the loss (errors.Is ErrFenced or
// ErrExpired) when it was lost; or the parent context's cause when that
// ended first. Only with nil may the holder make its last write (still
// under its fencing condition: the lease can be lost between Stop and that
// write). It cancels the work's context and may be called more than once.
func (k *Keeper) Stop() error {
	k.stopOnce.Do(func() { close(k.stop) })
	<-k.done
	defer k.cancel(context.Canceled)
	for {
		k.mu.Lock()
		loss, due := k.loss, !k.now().Before(k.nextDue) || !k.now().Before(k.valid.Add(-k.margin))
		k.mu.Unlock()
		switch {
		case loss != nil:
			return loss
		case k.parent.Err() != nil:
			return context.Cause(k.parent)
		case !due:
			return nil
		}
		err := k.try()
		if err == nil {
			// Renewed by a heartbeat sent just now: held for a lease from
			// it. (Not "due" again: a heartbeat that took Every or longer,
			// a slow or hedged one, leaves the next one due at once.)
			return nil
		}
		if !k.lost() && k.parent.Err() == nil {
			time.Sleep(max(k.every/4, time.Millisecond))
		}
	}
}

// Valid is the lease's end as the holder knows it: the send time of the
// last heartbeat that got through (or of the grant) plus the lease.
func (k *Keeper) Valid() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.valid
}

// Beats is the number of heartbeats that renewed the lease.
func (k *Keeper) Beats() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.beats
}

// Do runs work under Keep and Stop: it returns the loss of the lease (or
// the parent's cause) when Stop reports one, whatever the work returned,
// and otherwise the work's error.
func Do(ctx context.Context, since time.Time, lease time.Duration, beat Beat, work func(ctx context.Context) error, opts ...func(*Options)) error {
	k, wctx := Keep(ctx, since, lease, beat, opts...)
	werr := work(wctx)
	if err := k.Stop(); err != nil {
		return err
	}
	return werr
}
