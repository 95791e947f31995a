// Package wait holds the module's one cancellable sleep and its one
// backoff rule, shared by the executors (lease, fleet, timers, fanout) and
// the AWS layer's retries.
package wait

import (
	"context"
	"math/rand/v2"
	"time"
)

// Sleep waits d, or until ctx ends. It returns nil after d, or ctx.Err()
// if ctx ended first. A caller that reports why ctx ended returns
// context.Cause(ctx) instead of the error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Ceiling is the bound of exponential backoff before attempt (1 for the
// first retry): base·2^(attempt−1), at most limit; 0 for a base of 0 or
// less. It never overflows: a doubling past limit is limit.
func Ceiling(attempt int, base, limit time.Duration) time.Duration {
	if base <= 0 {
		return 0
	}
	n := max(attempt-1, 0)
	if n >= 62 || base > limit>>n {
		return limit
	}
	return base << n
}

// Backoff is "full jitter" exponential backoff (AWS Architecture Blog,
// "Exponential Backoff And Jitter": sleep = random_between(0, min(cap,
// base·2^attempt))): a wait drawn uniformly from [0, Ceiling(attempt, base,
// limit)]. Jitter only, so the global source serves.
func Backoff(attempt int, base, limit time.Duration) time.Duration {
	return rand.N(Ceiling(attempt, base, limit) + 1)
}
