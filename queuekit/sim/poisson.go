package sim

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// PoissonTasks is an M/M/c workload for the night engine: n jobs with
// Poisson arrivals (exponential gaps at rate lambda per minute) and
// exponential runtimes at rate mu, one priority and no exclusive lock, so
// that the barrier policy is first come first served on c workers, exactly
// the M/M/c queue of Erlang C. Runtimes equal their estimates. The same
// seed gives the same tasks.
func PoissonTasks(lambda, mu float64, n int, seed uint64) []Task {
	src := rand.NewPCG(seed, 0x5eed)
	gap := distuv.Exponential{Rate: lambda, Src: src}
	service := distuv.Exponential{Rate: mu, Src: src}
	ts := make([]Task, n)
	t := 0.0
	for i := range ts {
		t += gap.Rand()
		rt := service.Rand()
		ts[i] = Task{ID: fmt.Sprintf("J%07d", i), Arrival: t, Estimate: rt, Runtime: rt, Priority: 1}
	}
	return ts
}
