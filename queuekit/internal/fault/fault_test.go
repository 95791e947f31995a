package fault

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// Only the listed jobs fail, on every attempt, after their work ran; the
// others return what their work returned.
func TestFailJobsFailsOnlyTheListedJobs(t *testing.T) {
	ran := 0
	work := FailJobs([]string{"B"}, func(context.Context, lease.Job, time.Duration) error { ran++; return nil })
	if err := work(context.Background(), lease.Job{ID: "A", Attempt: 1}, 0); err != nil {
		t.Errorf("A: %v, want nil", err)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		err := work(context.Background(), lease.Job{ID: "B", Attempt: attempt}, 0)
		if err == nil || !strings.Contains(err.Error(), "job B attempt") || !strings.Contains(err.Error(), "injected failure") {
			t.Errorf("B attempt %d: %v, want an injected failure naming it", attempt, err)
		}
		if queuekit.IsFatal(err) {
			t.Errorf("B attempt %d: fatal, want retriable", attempt)
		}
	}
	if ran != 4 {
		t.Errorf("work ran %d times, want 4 (the failure comes after the work)", ran)
	}
}
