package fanout

import (
	"math/rand/v2"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// maxVisibility is SQS's largest visibility timeout, 12 hours.
const maxVisibility = 12 * time.Hour

// FullJitter is the pause before the next receive of a slice that failed on
// its receives-th receive, as "full jitter" exponential backoff (AWS
// Architecture Blog, "Exponential Backoff And Jitter": sleep =
// random_between(0, min(cap, base × 2^attempt))): the ceiling is base ×
// 2^(receives−1), capped at 12 hours, and the pause a uniformly random whole
// number of seconds from 0 to the ceiling (SQS counts a visibility timeout
// in whole seconds, so the ceiling is rounded down to them, and at least one
// second). intN draws the random number (rand.IntN of math/rand/v2 if nil;
// a seeded one in tests).
func FullJitter(base time.Duration, receives int, intN func(n int) int) time.Duration {
	if intN == nil {
		intN = rand.IntN
	}
	// The module's one backoff ceiling (wait.Ceiling), in whole seconds.
	secs := max(int(wait.Ceiling(receives, base, maxVisibility)/time.Second), 1)
	return time.Duration(intN(secs+1)) * time.Second
}

// retryDelay is the visibility timeout given to a message whose slice failed
// on its receives-th receive.
func (p *Processor) retryDelay(receives int) time.Duration {
	if !p.RetryJitter || p.RetryAfter <= 0 {
		return p.RetryAfter
	}
	return FullJitter(p.RetryAfter, receives, nil)
}
