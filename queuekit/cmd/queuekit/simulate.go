package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
	"github.com/nightqueue/workshop/queuekit/report"
	"github.com/nightqueue/workshop/queuekit/sim"
)

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("simulate")
	date := fs.String("batch-date", "", "the night (YYYY-MM-DD): a sample night, or the night to pick from --file")
	file := fs.String("file", "", "a JSON Lines file of job items (see data/sample_nights.jsonl)")
	workers := fs.Int("workers", 0, fmt.Sprintf("workers in the pool, 1 to %d (required)", maxPoolWorkers))
	policy := fs.String("policy", "barrier", "dispatch policy: barrier, easy (EASY backfilling; alias backfill) or conservative (conservative backfilling)")
	reps := fs.Int("replications", 0, "Monte Carlo replications (default 0: one deterministic run; 1000 with --runtime-cv)")
	cv := fs.Float64("runtime-cv", 0, "coefficient of variation of lognormal runtimes around the estimates (0: exact estimates)")
	jitter := fs.Float64("arrival-jitter", 0, "delay each arrival by up to this many minutes (uniform)")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same results)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *date == "" && *file == "":
		return usagef("give --batch-date D (a sample night) or --file F")
	case *workers < 1 || *workers > maxPoolWorkers:
		return usagef("--workers %d: want 1 to %d workers", *workers, maxPoolWorkers)
	case checkFinite("runtime-cv", *cv) != nil:
		return checkFinite("runtime-cv", *cv)
	case *cv > montecarlo.MaxCV:
		return usagef("--runtime-cv %v: above %v no runtime distribution is meaningful", *cv, montecarlo.MaxCV)
	case checkFinite("arrival-jitter", *jitter) != nil:
		return checkFinite("arrival-jitter", *jitter)
	case *jitter > maxJitter:
		return usagef("--arrival-jitter %v: want 0 to %d minutes (a day)", *jitter, maxJitter)
	case *reps < 0 || *reps == 1:
		return usagef("--replications %d: use 0 for one run, or at least 2", *reps)
	case *reps > montecarlo.MaxReplications:
		return usagef("--replications %d: at most %d", *reps, montecarlo.MaxReplications)
	}
	pol, err := sim.ParsePolicy(*policy)
	if err != nil {
		return usagef("--policy: %w", err)
	}
	n, err := pickNight(*file, *date)
	if err != nil {
		return err
	}
	p, err := n.Params(*workers)
	if err != nil {
		return badInput(err)
	}
	random := *cv > 0 || *jitter > 0
	if *reps == 0 && random {
		*reps = 1000
	}
	if *reps == 0 {
		s, err := report.Build(n, *workers, pol)
		if err != nil {
			return err
		}
		if *asJSON {
			j := s.JSON()
			j.Analytic = nil
			return writeJSON(stdout, j)
		}
		return s.WriteText(stdout)
	}
	model := montecarlo.Model{ArrivalJitter: *jitter}
	if *cv > 0 {
		model = montecarlo.LogNormalCV(*cv)
		model.ArrivalJitter = *jitter
	}
	bar := newProgress(stderr, "replications")
	bar.update(0, *reps)
	sum, err := montecarlo.Run(ctx, n, montecarlo.Config{Workers: *workers, Policy: pol, Model: model,
		Replications: *reps, Seed: *seed, Progress: bar.report})
	bar.done()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, mcJSON{BatchDate: n.BatchDate, Policy: string(pol), Jobs: len(n.Jobs), Workers: *workers,
			Lambda: p.Lambda, Mu: p.Mu, Rho: p.Rho, Replications: *reps, RuntimeCV: *cv, Seed: *seed,
			AverageWait: sum.AverageWait, P95Wait: sum.P95Wait, AverageQueueLength: sum.AverageQueueLength,
			MaxQueueLength: sum.MaxQueueLength, Utilization: sum.Utilization, OverflowJobs: sum.OverflowJobs,
			OverflowFraction: sum.OverflowFraction, DrainedMinute: sum.DrainedMinute, OverflowProbability: sum.OverflowProbability})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Night %s, %d jobs, %d workers, policy %s, %d replications, %s, seed %d\n",
		n.BatchDate, len(n.Jobs), *workers, pol, *reps, describeModel(*cv, *jitter), *seed)
	fmt.Fprintf(tw, "metric\tmean\t95%% CI\n")
	row := func(name string, iv montecarlo.Interval, f string) {
		fmt.Fprintf(tw, "%s\t"+f+"\t["+f+", "+f+"]\n", name, iv.Mean, iv.Low, iv.High)
	}
	row("average wait (min)", sum.AverageWait, "%.2f")
	row("p95 wait (min)", sum.P95Wait, "%.2f")
	row("average queue length", sum.AverageQueueLength, "%.3f")
	row("max queue length", sum.MaxQueueLength, "%.2f")
	row("worker utilization", sum.Utilization, "%.3f")
	row("overflow jobs", sum.OverflowJobs, "%.2f")
	row("queue drained (minute)", sum.DrainedMinute, "%.1f")
	op := sum.OverflowProbability
	fmt.Fprintf(tw, "P(night ends after cutoff)\t%.4f\t[%.4f, %.4f] Wilson, %d of %d\n", op.Estimate, op.Low, op.High, op.Successes, op.Trials)
	return tw.Flush()
}

// mcJSON is simulate --json with --replications: each metric an interval.
type mcJSON struct {
	BatchDate           string                `json:"batch_date"`
	Policy              string                `json:"policy"`
	Jobs                int                   `json:"jobs"`
	Workers             int                   `json:"workers"`
	Lambda              float64               `json:"lambda_per_hour"`
	Mu                  float64               `json:"mu_per_hour"`
	Rho                 float64               `json:"rho"`
	Replications        int                   `json:"replications"`
	RuntimeCV           float64               `json:"runtime_cv"`
	Seed                uint64                `json:"seed"`
	AverageWait         montecarlo.Interval   `json:"average_wait_minutes"`
	P95Wait             montecarlo.Interval   `json:"p95_wait_minutes"`
	AverageQueueLength  montecarlo.Interval   `json:"average_queue_length"`
	MaxQueueLength      montecarlo.Interval   `json:"max_queue_length"`
	Utilization         montecarlo.Interval   `json:"worker_utilization"`
	OverflowJobs        montecarlo.Interval   `json:"overflow_jobs"`
	OverflowFraction    montecarlo.Interval   `json:"overflow_fraction"`
	DrainedMinute       montecarlo.Interval   `json:"queue_drained_minute"`
	OverflowProbability montecarlo.Proportion `json:"overflow_probability"`
}

// pickNight loads the night from a file (choosing by date if it holds
// several) or from the embedded samples.
func pickNight(file, date string) (queuekit.Night, error) {
	if err := checkDate(date); err != nil {
		return queuekit.Night{}, err
	}
	if file == "" {
		n, err := queuekit.SampleNight(date)
		if err != nil {
			return queuekit.Night{}, badInput(err)
		}
		return n, nil
	}
	jobs, err := queuekit.LoadFile(file, queuekit.DefaultWindow)
	if err != nil {
		return queuekit.Night{}, badInput(err)
	}
	nights := queuekit.GroupNights(jobs, queuekit.DefaultWindow)
	var dates []string
	for _, n := range nights {
		if n.BatchDate == date || (date == "" && len(nights) == 1) {
			return n, nil
		}
		dates = append(dates, n.BatchDate)
	}
	if len(nights) == 0 {
		return queuekit.Night{}, usagef("%s: no jobs in the file", file)
	}
	if date == "" {
		return queuekit.Night{}, usagef("%s holds %d nights (%s): choose one with --batch-date", file, len(nights), strings.Join(dates, ", "))
	}
	return queuekit.Night{}, usagef("%s has no night %s; it holds %s", file, date, strings.Join(dates, ", "))
}

// describeModel says in words which randomness a Monte Carlo run used.
func describeModel(cv, jitter float64) string {
	rt := "runtimes exactly as estimated"
	if cv > 0 {
		rt = fmt.Sprintf("lognormal runtimes with CV %.2f", cv)
	}
	if jitter > 0 {
		return rt + fmt.Sprintf(", arrivals delayed up to %.1f min", jitter)
	}
	return rt
}
