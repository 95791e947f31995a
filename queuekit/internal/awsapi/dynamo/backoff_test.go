package dynamo

import (
	"testing"
	"time"
)

// Full jitter: a wait drawn uniformly from [0, min(max, base*2^(attempt-1))].
func TestBackoffStaysWithinTheFullJitterBound(t *testing.T) {
	base, maxWait := 25*time.Millisecond, 2*time.Second
	for attempt, bound := range map[int]time.Duration{1: 25 * time.Millisecond, 2: 50 * time.Millisecond, 4: 200 * time.Millisecond, 8: 2 * time.Second, 70: 2 * time.Second} {
		var top time.Duration
		for range 2000 {
			d := Backoff(attempt, base, maxWait)
			if d < 0 || d > bound {
				t.Fatalf("Backoff(%d) = %s; want within [0, %s]", attempt, d, bound)
			}
			top = max(top, d)
		}
		if top < bound/2 { // 2000 uniform draws all in the lower half: probability 2^-2000
			t.Errorf("Backoff(%d): largest of 2000 draws %s; want draws spread up to %s", attempt, top, bound)
		}
	}
}
