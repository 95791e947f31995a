package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Service is the service-time distribution of the steady-state model.
type Service string

// Service-time distributions for SteadyState.
const (
	Exponential   Service = "exponential"   // M/M/c
	Deterministic Service = "deterministic" // M/D/c
)

// SteadyConfig sets up a steady-state run of a c-server FCFS queue with
// Poisson arrivals, used to validate the simulator against Erlang C (M/M/c)
// and Cosmetatos (M/D/c), and to benchmark it.
type SteadyConfig struct {
	Lambda    float64 // arrival rate
	Mu        float64 // service rate per server
	Workers   int     // c
	Service   Service // "" means Exponential
	Customers int     // customers measured after the warm-up
	WarmUp    int     // customers simulated first and discarded (0: Customers/10)
	Batches   int     // batch means for the confidence interval (0: 30)
	Seed      uint64
}

// SteadyResult is the estimated mean wait in queue with a 95% confidence
// interval from batch means (Student t with Batches−1 degrees of freedom).
type SteadyResult struct {
	Wq, Wq95Low, Wq95High float64
	Customers             int // customers measured
	Events                int // arrivals and departures simulated, warm-up included
	Elapsed               time.Duration
	EventsPerSecond       float64
}

// SteadyState simulates the queue. Customers are served first come first
// served by the earliest free server, so each arrival is one event and its
// departure another; the servers' next departure times are kept in a binary
// heap, which makes a run allocation-free per event. The context is checked
// every 64k customers.
func SteadyState(ctx context.Context, cfg SteadyConfig) (SteadyResult, error) {
	if cfg.Service == "" {
		cfg.Service = Exponential
	}
	if cfg.Batches == 0 {
		cfg.Batches = 30
	}
	if cfg.WarmUp == 0 {
		cfg.WarmUp = cfg.Customers / 10
	}
	switch {
	case !(cfg.Lambda > 0) || !(cfg.Mu > 0) || math.IsInf(cfg.Lambda, 0) || math.IsInf(cfg.Mu, 0):
		return SteadyResult{}, fmt.Errorf("steady state: lambda=%v mu=%v: rates must be positive numbers", cfg.Lambda, cfg.Mu)
	case cfg.Workers < 1:
		return SteadyResult{}, fmt.Errorf("steady state: workers = %d: need at least 1", cfg.Workers)
	case cfg.Lambda >= float64(cfg.Workers)*cfg.Mu:
		return SteadyResult{}, fmt.Errorf("steady state: ρ = %.4f >= 1: the queue never settles; add workers or lower lambda",
			cfg.Lambda/(float64(cfg.Workers)*cfg.Mu))
	case cfg.Service != Exponential && cfg.Service != Deterministic:
		return SteadyResult{}, fmt.Errorf("steady state: unknown service %q: use exponential or deterministic", cfg.Service)
	case cfg.Batches < 2 || cfg.Customers < cfg.Batches:
		return SteadyResult{}, fmt.Errorf("steady state: %d customers in %d batches: need at least 2 batches of 1", cfg.Customers, cfg.Batches)
	case cfg.WarmUp < 0:
		return SteadyResult{}, fmt.Errorf("steady state: warm-up %d: must be >= 0", cfg.WarmUp)
	}

	src := rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)
	arrivals := distuv.Exponential{Rate: cfg.Lambda, Src: src}
	service := distuv.Exponential{Rate: cfg.Mu, Src: src}
	fixed := 1 / cfg.Mu
	deterministic := cfg.Service == Deterministic

	free := make(serverHeap, cfg.Workers) // every server free at time 0
	perBatch := cfg.Customers / cfg.Batches
	means := make([]float64, cfg.Batches)
	total := cfg.WarmUp + perBatch*cfg.Batches

	began := time.Now()
	var t, batchSum float64
	for i := range total {
		if i&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return SteadyResult{}, fmt.Errorf("steady state: stopped after %d customers: %w", i, err)
			}
		}
		t += arrivals.Rand()
		s := fixed
		if !deterministic {
			s = service.Rand()
		}
		begin := math.Max(t, free[0])
		free.replaceMin(begin + s)
		if k := i - cfg.WarmUp; k >= 0 {
			batchSum += begin - t
			if (k+1)%perBatch == 0 {
				means[k/perBatch] = batchSum / float64(perBatch)
				batchSum = 0
			}
		}
	}
	elapsed := time.Since(began)

	mean, sd := stat.MeanStdDev(means, nil)
	half := studentT95(cfg.Batches-1) * sd / math.Sqrt(float64(cfg.Batches))
	r := SteadyResult{
		Wq: mean, Wq95Low: mean - half, Wq95High: mean + half,
		Customers: perBatch * cfg.Batches, Events: 2 * total, Elapsed: elapsed,
	}
	if s := elapsed.Seconds(); s > 0 {
		r.EventsPerSecond = float64(r.Events) / s
	}
	return r, nil
}

// studentT95 is the two-sided 95% quantile of Student's t with df degrees of freedom.
func studentT95(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// serverHeap holds each server's next free time as a binary min-heap of
// plain floats: container/heap would box every value through an interface.
type serverHeap []float64

// replaceMin replaces the earliest free time with v and restores the heap.
func (h serverHeap) replaceMin(v float64) {
	n := len(h)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[m] >= v {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = v
}
