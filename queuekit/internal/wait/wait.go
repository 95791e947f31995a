// Package wait holds the module's one cancellable sleep, shared by the
// executors (lease, fleet) and the AWS layer's retries.
package wait

import (
	"context"
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
