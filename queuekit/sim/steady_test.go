package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/nightqueue/workshop/queuekit/mmc"
)

// With fixed seeds, the batch-means interval must contain the Erlang C value
// for SPEC.md's vectors. A 95% interval misses 1 time in 20 by design; the
// seeds are fixed so the test is reproducible, and the long runs keep the
// interval narrow enough to be a real check (its width is asserted too).
func TestSteadyStateIntervalContainsErlangC(t *testing.T) {
	for _, q := range []mmc.Queue{{Lambda: 2, Mu: 1, C: 3}, {Lambda: 5, Mu: 10, C: 2}, {Lambda: 9, Mu: 1, C: 10}} {
		t.Run(fmt.Sprintf("c=%d,lambda=%g,mu=%g", q.C, q.Lambda, q.Mu), func(t *testing.T) {
			want, err := q.Solve()
			if err != nil {
				t.Fatal(err)
			}
			r, err := SteadyState(context.Background(), SteadyConfig{Lambda: q.Lambda, Mu: q.Mu, Workers: q.C,
				Customers: 2_000_000, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Wq95Low > want.Wq || r.Wq95High < want.Wq {
				t.Errorf("Wq 95%% CI [%.5f, %.5f] does not contain Erlang C Wq = %.5f", r.Wq95Low, r.Wq95High, want.Wq)
			}
			if w := (r.Wq95High - r.Wq95Low) / want.Wq; w > 0.1 {
				t.Errorf("CI width %.3f of Wq: too wide to check anything", w)
			}
		})
	}
}

// M/D/c must land within 2% of Cosmetatos' approximation.
func TestSteadyStateMDcNearCosmetatos(t *testing.T) {
	for _, q := range []mmc.Queue{{Lambda: 2, Mu: 1, C: 3}, {Lambda: 9, Mu: 1, C: 10}} {
		want, err := q.CosmetatosWq()
		if err != nil {
			t.Fatal(err)
		}
		r, err := SteadyState(context.Background(), SteadyConfig{Lambda: q.Lambda, Mu: q.Mu, Workers: q.C,
			Service: Deterministic, Customers: 2_000_000, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if d := (r.Wq - want) / want; d > 0.02 || d < -0.02 {
			t.Errorf("c=%d: M/D/c Wq = %.5f, Cosmetatos %.5f: off by %.1f%%", q.C, r.Wq, want, 100*d)
		}
	}
}

func TestSteadyStateRejectsBadParameters(t *testing.T) {
	for _, cfg := range []SteadyConfig{
		{Lambda: 3, Mu: 1, Workers: 3, Customers: 100},
		{Lambda: 0, Mu: 1, Workers: 3, Customers: 100},
		{Lambda: 1, Mu: 1, Workers: 0, Customers: 100},
		{Lambda: 1, Mu: 1, Workers: 2, Customers: 1},
		{Lambda: 1, Mu: 1, Workers: 2, Customers: 100, Service: "uniform"},
	} {
		if _, err := SteadyState(context.Background(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestSteadyStateIsReproducible(t *testing.T) {
	cfg := SteadyConfig{Lambda: 2, Mu: 1, Workers: 3, Customers: 10000, Seed: 7}
	run := func() SteadyResult {
		t.Helper()
		r, err := SteadyState(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	// 30 batches of ⌊10000/30⌋ = 333 customers are measured.
	if a.Customers != 9990 || !(a.Wq > 0) {
		t.Fatalf("run measured %d customers, Wq %v: want 9990 and a positive wait", a.Customers, a.Wq)
	}
	if a.Wq != b.Wq || a.Wq95Low != b.Wq95Low || a.Wq95High != b.Wq95High {
		t.Errorf("same seed, different results: %v vs %v", a.Wq, b.Wq)
	}
	cfg.Seed = 8
	if c := run(); c.Wq == a.Wq {
		t.Errorf("seeds 7 and 8 gave the same Wq %v: the seed is ignored", a.Wq)
	}
}

// BenchmarkSteadyState reports events per second; -benchmem shows 0 allocs
// per event (the few allocations are per run).
func BenchmarkSteadyState(b *testing.B) {
	const customers = 1_000_000
	b.ReportAllocs()
	for b.Loop() {
		r, err := SteadyState(context.Background(), SteadyConfig{Lambda: 2, Mu: 1, Workers: 3, Customers: customers, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.EventsPerSecond/1e6, "Mevents/s")
	}
}

// The hot loop allocates nothing per event: a run of 100 times more
// customers makes exactly as many allocations (the per-run buffers only).
func TestSteadyStateAllocatesNothingPerEvent(t *testing.T) {
	allocs := func(customers int) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := SteadyState(context.Background(), SteadyConfig{Lambda: 2, Mu: 1, Workers: 3, Customers: customers, Seed: 1}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(3_000), allocs(300_000)
	if large != small {
		t.Errorf("%v allocations for 3,000 customers but %v for 300,000: something allocates per event", small, large)
	}
}
