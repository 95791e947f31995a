package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A sleep returns nil after its duration, ctx.Err() once ctx is cancelled
// (not the cause it was cancelled with: the callers that want the cause ask
// context.Cause), and at once for a context already done.
func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep of 1 ms: %v, want nil", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("stopped by the test")
	cancel(why)
	err := Sleep(ctx, time.Hour)
	if !errors.Is(err, context.Canceled) || errors.Is(err, why) {
		t.Fatalf("Sleep on a cancelled context: %v, want context.Canceled", err)
	}
	if !errors.Is(context.Cause(ctx), why) {
		t.Fatalf("cause %v, want %v", context.Cause(ctx), why)
	}
}
