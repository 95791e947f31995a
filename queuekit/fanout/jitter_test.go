package fanout

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The ceilings follow the blog's formula min(cap, base × 2^attempt) with
// attempt = receives − 1 and SQS's 12-hour cap; a draw of the largest value
// gives the ceiling, a draw of 0 no pause.
func TestFullJitterCeilings(t *testing.T) {
	top := func(n int) int { return n - 1 }
	for _, c := range []struct {
		base     time.Duration
		receives int
		want     time.Duration
	}{
		{time.Second, 1, time.Second},
		{time.Second, 2, 2 * time.Second},
		{time.Second, 3, 4 * time.Second},
		{2 * time.Second, 3, 8 * time.Second},
		{1500 * time.Millisecond, 1, time.Second}, // whole seconds, rounded down
		{300 * time.Millisecond, 1, time.Second},  // at least one second
		{time.Second, 20, 12 * time.Hour},         // 2^19 s is past the cap
		{time.Hour, 5, 12 * time.Hour},
	} {
		if got := FullJitter(c.base, c.receives, top); got != c.want {
			t.Errorf("FullJitter(%v, %d) at the top draw = %v, want %v", c.base, c.receives, got, c.want)
		}
		if got := FullJitter(c.base, c.receives, func(int) int { return 0 }); got != 0 {
			t.Errorf("FullJitter(%v, %d) at draw 0 = %v, want 0", c.base, c.receives, got)
		}
	}
}

// Full jitter is uniform from 0 to the ceiling: with base 1 s on the third
// receive (ceiling 4 s) each of 0..4 s comes about a fifth of the time and
// the mean is 2 s (a seeded source, 5,000 draws: the standard error of the
// mean is √2 / √5000 ≈ 0.02 s, the bounds below are 5 of them).
func TestFullJitterIsUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	count := map[time.Duration]int{}
	var sum time.Duration
	const n = 5000
	for range n {
		d := FullJitter(time.Second, 3, r.IntN)
		count[d]++
		sum += d
	}
	for s := time.Duration(0); s <= 4*time.Second; s += time.Second {
		if f := float64(count[s]) / n; f < 0.17 || f > 0.23 {
			t.Errorf("pause %v drawn %.3f of the time, want about 0.2", s, f)
		}
	}
	if len(count) != 5 {
		t.Errorf("pauses drawn: %v, want exactly 0, 1, 2, 3 and 4 s", count)
	}
	if mean := sum.Seconds() / n; mean < 1.9 || mean > 2.1 {
		t.Errorf("mean pause %.3f s, want 2 s", mean)
	}
}

// The option: without RetryJitter a failed slice comes back after exactly
// RetryAfter on every receive (the lockstep of notebook 07's stampede);
// with it, the pause stays within the full-jitter ceiling and varies.
func TestRetryJitterOption(t *testing.T) {
	p := &Processor{Processing: Processing{RetryAfter: time.Second}}
	for receives := 1; receives <= 3; receives++ {
		if got := p.retryDelay(receives); got != time.Second {
			t.Errorf("no jitter, receive %d: pause %v, want exactly 1s", receives, got)
		}
	}
	p.RetryJitter = true
	seen := map[time.Duration]bool{}
	for range 200 {
		d := p.retryDelay(2) // ceiling 2 s
		if d < 0 || d > 2*time.Second || d%time.Second != 0 {
			t.Fatalf("jitter, receive 2: pause %v, want a whole number of seconds in [0, 2s]", d)
		}
		seen[d] = true
	}
	if len(seen) != 3 { // each of 3 values missed in 200 draws: (2/3)^200, never
		t.Errorf("jitter, receive 2: pauses %v, want 0, 1 and 2 s all drawn", seen)
	}
	p.RetryAfter = 0
	if got := p.retryDelay(3); got != 0 {
		t.Errorf("jitter with RetryAfter 0: pause %v, want 0 (retry at once)", got)
	}
}
