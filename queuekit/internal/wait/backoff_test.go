package wait

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

// The ceiling doubles from base and stops at the limit, without
// overflowing however many attempts; a base of 0 backs off not at all.
func TestCeilingDoublesUpToTheLimit(t *testing.T) {
	for _, c := range []struct {
		attempt     int
		base, limit time.Duration
		want        time.Duration
	}{
		{0, time.Second, time.Hour, time.Second}, {1, time.Second, time.Hour, time.Second},
		{3, time.Second, time.Hour, 4 * time.Second}, {13, time.Second, time.Hour, time.Hour},
		{200, time.Hour, 12 * time.Hour, 12 * time.Hour}, {5, 0, time.Hour, 0},
	} {
		if got := Ceiling(c.attempt, c.base, c.limit); got != c.want {
			t.Errorf("Ceiling(%d, %s, %s) = %s, want %s", c.attempt, c.base, c.limit, got, c.want)
		}
	}
}
