package sim

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nightqueue/workshop/queuekit/mmc"
)

// The night engine, driven as an M/M/c queue, must agree with Erlang C: the
// mean wait in queue Wq of the jobs after a warm-up, with a 95% batch-means
// interval (30 batches of consecutive arrivals, Student t with 29 degrees of
// freedom), must contain mmc's Wq = C(c, a) / (cμ − λ). For c = 3, λ = 2,
// μ = 1: a = 2, C = (a³/3!·c/(c−a)) / (1 + a + a²/2 + a³/3!·c/(c−a)) =
// 4 / 9, so Wq = 4/9 minutes. A 95% interval misses 1 time in 20 by design;
// the seed is fixed, so the test is reproducible, and its width is asserted
// so that it checks something.
func TestNightEngineMatchesErlangC(t *testing.T) {
	for _, q := range []mmc.Queue{{Lambda: 2, Mu: 1, C: 3}, {Lambda: 1.5, Mu: 1, C: 2}} {
		t.Run(fmt.Sprintf("c=%d,lambda=%g,mu=%g", q.C, q.Lambda, q.Mu), func(t *testing.T) {
			want, err := q.Solve()
			if err != nil {
				t.Fatal(err)
			}
			const jobs, warmUp, batches = 330_000, 30_000, 30
			tasks := PoissonTasks(q.Lambda, q.Mu, jobs, 1)
			var e Engine
			// The cutoff only clips the time averages; put it past the last arrival.
			r, err := e.Run(tasks, Config{Workers: q.C, Cutoff: tasks[jobs-1].Arrival + 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Schedule) != jobs {
				t.Fatalf("%d jobs scheduled, want %d", len(r.Schedule), jobs)
			}
			// Waits in arrival order (the schedule is in start order).
			slots := slices.Clone(r.Schedule)
			slices.SortFunc(slots, func(a, b Slot) int { return cmpFloat(a.Arrival, b.Arrival) })
			per := (jobs - warmUp) / batches
			means := make([]float64, batches)
			for b := range means {
				sum := 0.0
				for _, s := range slots[warmUp+b*per : warmUp+(b+1)*per] {
					sum += s.Wait
				}
				means[b] = sum / float64(per)
			}
			m, sd := stat.MeanStdDev(means, nil)
			half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: batches - 1}.Quantile(0.975) * sd / math.Sqrt(batches)
			if m-half > want.Wq || m+half < want.Wq {
				t.Errorf("night engine Wq %.5f, 95%% CI [%.5f, %.5f], does not contain Erlang C Wq = %.5f", m, m-half, m+half, want.Wq)
			}
			if w := 2 * half / want.Wq; w > 0.15 {
				t.Errorf("CI width %.3f of Wq: too wide to check anything", w)
			}
		})
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkNightEngine runs the night engine (barrier policy, no trace, as
// Monte Carlo runs it) on an M/M/3 workload of 100,000 jobs at ρ = 2/3 and
// reports events per second: each job is an arrival and a finish.
func BenchmarkNightEngine(b *testing.B) {
	const jobs = 100_000
	tasks := PoissonTasks(2, 1, jobs, 1)
	cfg := Config{Workers: 3, Cutoff: tasks[jobs-1].Arrival + 1, NoTrace: true}
	var e Engine
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Run(tasks, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*jobs*b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}
