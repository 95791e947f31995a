package leaselab

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
)

// TestRunPoolCeiling runs the night executor through a limits layer at a
// scale where the night's one partition key (batch_date) is the limit:
// 1,000 write units a second per partition (AWS, "Best practices for
// designing and using partition keys effectively"), divided by S = 50,
// is 20 units a second. The layer must throttle that key, and the jobs
// a second cannot exceed that limit over the run's own units per job
// (with a margin for the layer's burst of one second and the run's
// start-up, which only makes the measured rate lower).
func TestRunPoolCeiling(t *testing.T) {
	// Not parallel: it counts units and throttles through the limits layer,
	// which a busier DynamoDB Local would change.
	ctx := context.Background()
	s, err := limitslab.StartLimits(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := RunPoolCeiling(ctx, s, PoolCeiling{Jobs: 24, Workers: 2, Slots: 2, Timeout: 25 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.LimitPerKey != 20 {
		t.Errorf("limit per key = %v, want 1,000/50 = 20", r.LimitPerKey)
	}
	if r.Ended == 0 || r.UnitsPerJob <= 0 {
		t.Fatalf("no job ended or no units counted: %+v", r)
	}
	if r.Throttled["TableWriteKeyRangeThroughputExceeded"] == 0 {
		t.Errorf("the night's key was never throttled: %v", r.Throttled)
	}
	if r.JobsPerSec > 1.5*r.PredictedJPS {
		t.Errorf("measured %.2f jobs/s above the key's limit %.2f units/s over %.2f units per job", r.JobsPerSec, r.LimitPerKey, r.UnitsPerJob)
	}
}
