// Package fault injects failures into the executor's work for the CLI's
// --fail-job flag, the workshop's notebooks (through lab/leaselab) and the
// tests: faults the workshop shows on purpose, kept out of lease's API.
package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/lease"
)

// FailJobs wraps work (nil: lease.Sleep) so that the listed jobs always
// fail with a retriable error after their runtime, on every attempt.
func FailJobs(ids []string, work lease.WorkFunc) lease.WorkFunc {
	if work == nil {
		work = lease.Sleep
	}
	fail := make(map[string]bool, len(ids))
	for _, id := range ids {
		fail[id] = true
	}
	return func(ctx context.Context, j lease.Job, d time.Duration) error {
		if err := work(ctx, j, d); err != nil || !fail[j.ID] {
			return err
		}
		return fmt.Errorf("job %s attempt %d: injected failure", j.ID, j.Attempt)
	}
}
