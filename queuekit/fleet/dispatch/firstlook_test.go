package dispatch_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
)

// TestDispatchersFirstLooksSpreadOverTheLookInterval starts (on paper) a
// rollout of 200 dispatchers with one seeded random source: their first
// looks must fall inside the window and spread over all of it (every
// tenth of it holds some), not at one moment, which is what a tier rolled
// out at once did without the jitter (docs/design/fleet.md, the D·K
// acquires in one second). The default window is the look interval,
// ShardLease/4.
func TestDispatchersFirstLooksSpreadOverTheLookInterval(t *testing.T) {
	r := newRig(t, 4)
	src := rand.New(rand.NewPCG(33, 2))
	const window = 1500 * time.Millisecond
	tier, err := dispatch.New(r.f, r.sqs, r.tier.Queue(), dispatch.WithFirstLook(window), dispatch.WithRand(src.Float64))
	if err != nil {
		t.Fatal(err)
	}
	var tenths [10]int
	lo, hi := window, time.Duration(0)
	for range 200 {
		d := tier.FirstLook()
		if d < 0 || d >= window {
			t.Fatalf("a first look after %s: want it in [0, %s)", d, window)
		}
		tenths[int(d*10/window)]++
		lo, hi = min(lo, d), max(hi, d)
	}
	for i, n := range tenths {
		if n == 0 {
			t.Errorf("no first look of 200 in the %d-th tenth of the window: %v", i+1, tenths)
		}
		if n > 40 { // 20 expected a tenth; 40 is far outside a uniform draw's spread
			t.Errorf("%d first looks of 200 in the %d-th tenth: they bunch (%v)", n, i+1, tenths)
		}
	}
	t.Logf("200 first looks from %s to %s; per tenth of %s: %v", lo, hi, window, tenths)

	half, err := dispatch.New(r.f, r.sqs, r.tier.Queue(), dispatch.WithRand(func() float64 { return 0.5 }))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := half.FirstLook(), testShardLease/8; got != want {
		t.Errorf("default window: a fraction 0.5 waits %s, want %s (half of ShardLease/4)", got, want)
	}
	none, err := dispatch.New(r.f, r.sqs, r.tier.Queue(), dispatch.WithFirstLook(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := none.FirstLook(); got != 0 {
		t.Errorf("WithFirstLook(0): waits %s, want none", got)
	}
	if _, err := dispatch.New(r.f, r.sqs, r.tier.Queue(), dispatch.WithFirstLook(-time.Second)); err == nil {
		t.Error("a negative first-look window was accepted")
	}
}

// TestADispatcherJoinsOnlyAfterItsFirstLook runs a real dispatcher whose
// drawn fraction is 0.9 of a 2 s window: it must write no MEMBER item (and
// so acquire no shard) in its first second, and be a member after the
// wait. One whose ctx ends during the wait writes nothing and returns.
func TestADispatcherJoinsOnlyAfterItsFirstLook(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4)
	tier, err := dispatch.New(r.f, r.sqs, r.tier.Queue(), dispatch.WithFirstLook(2*time.Second),
		dispatch.WithRand(func() float64 { return 0.9 }))
	if err != nil {
		t.Fatal(err)
	}
	members := func() int {
		t.Helper()
		m, err := r.f.Members(r.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}

	early, cancelEarly := context.WithTimeout(r.ctx, 500*time.Millisecond)
	defer cancelEarly()
	began := time.Now()
	st, err := tier.Dispatch(early, dispatch.DispatcherConfig{Name: "d-cancelled"})
	if err != nil || st.Dispatched != 0 {
		t.Fatalf("a dispatcher stopped during its first-look wait: %+v, %v (want nothing, no error)", st, err)
	}
	if took := time.Since(began); took > 1500*time.Millisecond {
		t.Errorf("a dispatcher stopped during its wait returned after %s, want at its stop (500ms)", took)
	}
	if n := members(); n != 0 {
		t.Fatalf("%d members after a dispatcher stopped during its first-look wait, want 0", n)
	}

	ctx, stop := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	began = time.Now()
	go func() {
		_, err := tier.Dispatch(ctx, dispatch.DispatcherConfig{Name: "d1"})
		done <- err
	}()
	time.Sleep(time.Second)
	if n := members(); n != 0 {
		t.Errorf("%d members %s after the start, before the first look at 1.8s: the dispatcher did not wait", n, time.Since(began).Round(time.Millisecond))
	}
	deadline := time.Now().Add(10 * time.Second)
	for members() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	joined := time.Since(began)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if joined < 1800*time.Millisecond || joined > 10*time.Second {
		t.Errorf("the dispatcher joined %s after its start, want after its first look at 1.8s", joined)
	}
	t.Logf("joined %s after the start (first look drawn at 1.8s)", joined.Round(time.Millisecond))
}
