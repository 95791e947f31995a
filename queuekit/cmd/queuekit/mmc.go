package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/sim"
)

func runMMC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mmc")
	lambda := fs.Float64("lambda", 0, "arrival rate (required)")
	mu := fs.Float64("mu", 0, "service rate per server (required)")
	c := fs.Int("workers", 0, "servers (required)")
	simulate := fs.Bool("simulate", false, "also simulate the queue and estimate Wq with a 95% batch-means interval")
	customers := fs.Int("customers", 1_000_000, fmt.Sprintf("customers to simulate after the warm-up, 30 to %d", maxCustomers))
	seed := fs.Uint64("seed", 1, "random seed for --simulate")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, req := range []struct {
		name string
		ok   bool
	}{{"lambda", isSet(fs, "lambda")}, {"mu", isSet(fs, "mu")}, {"workers", isSet(fs, "workers")}} {
		if !req.ok {
			return usagef("--%s is required (e.g. mmc --lambda 2 --mu 1 --workers 3)", req.name)
		}
	}
	q := mmc.Queue{Lambda: *lambda, Mu: *mu, C: *c}
	m, err := q.Solve()
	if err != nil {
		return badInput(err)
	}
	out := struct {
		Analytic  mmc.Metrics `json:"analytic"`
		Simulated *simulated  `json:"simulated,omitempty"`
	}{Analytic: m}
	if *simulate {
		if *customers < 30 || *customers > maxCustomers {
			return usagef("--customers %d: want 30 (30 batches) to %d", *customers, maxCustomers)
		}
		fmt.Fprintf(stderr, "simulating M/M/%d: %d customers after a warm-up...\n", *c, *customers)
		r, err := sim.SteadyState(ctx, sim.SteadyConfig{Lambda: *lambda, Mu: *mu, Workers: *c, Customers: *customers, Seed: *seed})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "simulated %d events in %.1f s\n", r.Events, r.Elapsed.Seconds())
		out.Simulated = &simulated{Wq: r.Wq, Low: r.Wq95Low, High: r.Wq95High, Customers: r.Customers, EventsPerSecond: r.EventsPerSecond}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "M/M/%d with lambda=%g, mu=%g: a=%.4f, rho=%.4f (times in the unit the rates are per)\n", *c, *lambda, *mu, q.A(), q.Rho())
	fmt.Fprintf(tw, "  P0\t%.6f\n  P(wait) (Erlang C)\t%.6f\n  Wq\t%.6f\n  Lq\t%.6f\n  W\t%.6f\n  L\t%.6f\n  p95 wait\t%.6f\n",
		m.P0, m.PWait, m.Wq, m.Lq, m.W, m.L, m.WaitP95)
	if s := out.Simulated; s != nil {
		inside := "inside"
		if m.Wq < s.Low || m.Wq > s.High {
			inside = "OUTSIDE"
		}
		fmt.Fprintf(tw, "Simulated (%d customers, %.1f M events/s)\n  Wq\t%.6f  95%% CI [%.6f, %.6f]: Erlang C is %s\n",
			s.Customers, s.EventsPerSecond/1e6, s.Wq, s.Low, s.High, inside)
	}
	return tw.Flush()
}

type simulated struct {
	Wq              float64 `json:"wq"`
	Low             float64 `json:"wq_ci95_low"`
	High            float64 `json:"wq_ci95_high"`
	Customers       int     `json:"customers"`
	EventsPerSecond float64 `json:"events_per_second"`
}
