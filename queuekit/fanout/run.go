package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// Config describes one fan-out run for Execute.
type Config struct {
	Queues  *sqsqueue.Client
	Results *Results
	Run     string   // run id; the queues are "queuekit-fanout-<Run>" and "...-dlq"
	Keys    []string // slice i is Keys[i]
	Source  Source
	// Combine collates the done slices into the run's result (required:
	// nights.Combine for the nights workload of package fanout/nights).
	Combine func(done []SliceResult, dead []string) (json.RawMessage, error)
	// Processing is the settings of the Processor that Execute runs
	// (Workers, Visibility, Wait, RetryAfter, Fail, AfterWrite).
	Processing
	// MaxReceives is the RedrivePolicy's maxReceiveCount (default 3).
	MaxReceives int
	// Resume continues run Run (its queues exist) without triggering again;
	// Redrive, with Resume, first moves its dead-lettered slices back.
	Resume, Redrive bool
	// Keep keeps the queues when the run completes without dead letters
	// (they are always kept while dead letters remain, for a redrive).
	Keep bool
	// Logf, if set, gets one line per step (queues created, pointers sent,
	// slices done, dead letters left for a redrive).
	Logf func(format string, a ...any)
	// Progress, if set, is called when the count of slices done or
	// dead-lettered (Done) of all (Total) grows, e.g. lab.Progress.Report
	// in a notebook.
	Progress func(queuekit.Progress)
}

// Outcome is what Execute did.
type Outcome struct {
	Final
	Stats   Stats
	Queues  sqsqueue.Pair
	Elapsed time.Duration
}

// QueueName is the work queue of a run.
func QueueName(run string) string { return "queuekit-fanout-" + run }

// Execute runs a fan-out end to end in this process: create the queues and
// trigger (or, with Resume, open them), process with a bounded pool until
// the collator finds every slice done or dead-lettered, write the final
// result, and delete the queues unless dead letters remain or Keep is set.
// Several processes may run the same run with Resume at once.
func Execute(ctx context.Context, cfg Config) (Outcome, error) {
	began := time.Now()
	step := cfg.Logf
	if step == nil {
		step = func(string, ...any) {}
	}
	if cfg.Combine == nil {
		return Outcome{}, errors.New("fan-out: Config.Combine is nil: give the run's collation (nights.Combine for a fan-out over nights)")
	}
	if cfg.MaxReceives == 0 {
		cfg.MaxReceives = 3
	}
	if cfg.Visibility == 0 {
		cfg.Visibility = 30 * time.Second
	}
	q, name := cfg.Queues, QueueName(cfg.Run)
	var pair sqsqueue.Pair
	var err error
	if cfg.Resume {
		if pair.Work, err = q.Open(ctx, name); err != nil {
			return Outcome{}, err
		}
		if pair.Dead, err = q.Open(ctx, name+"-dlq"); err != nil {
			return Outcome{}, err
		}
	} else {
		if pair, err = q.CreateWithDLQ(ctx, name, cfg.MaxReceives, cfg.Visibility); err != nil {
			return Outcome{}, err
		}
		step("created queues %s and %s (maxReceiveCount %d)", pair.Work.Name, pair.Dead.Name, cfg.MaxReceives)
		if err := Trigger(ctx, q, pair.Work, cfg.Run, cfg.Keys); err != nil {
			return Outcome{}, err
		}
		step("run %s: sent %d slice pointers (%s to %s)", cfg.Run, len(cfg.Keys), cfg.Keys[0], cfg.Keys[len(cfg.Keys)-1])
	}
	col := &Collator{Queues: q, Dead: pair.Dead, Results: cfg.Results, Run: cfg.Run, Slices: len(cfg.Keys), Combine: cfg.Combine}
	if cfg.Redrive {
		n, err := col.Redrive(ctx, pair.Work)
		if err != nil {
			return Outcome{}, err
		}
		step("redrove %d dead-lettered slices to %s", n, pair.Work.Name)
	}
	proc := &Processor{Queues: q, Work: pair.Work, Results: cfg.Results, Source: cfg.Source, Processing: cfg.Processing}
	var final Final
	reported := 0
	err = proc.Run(ctx, func(ctx context.Context) (bool, error) {
		f, ok, err := col.Collate(ctx)
		if err != nil {
			return false, err
		}
		if n := f.Processed + len(f.DeadLettered); n > reported {
			reported = n
			step("%d of %d slices done or dead-lettered", n, len(cfg.Keys))
			if cfg.Progress != nil {
				cfg.Progress(queuekit.Progress{Done: n, Total: len(cfg.Keys)})
			}
		}
		final = f
		return ok, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if ctx.Err() != nil {
		return Outcome{}, fmt.Errorf("run %s interrupted: %w", cfg.Run, ctx.Err())
	}
	out := Outcome{Final: final, Stats: proc.Stats(), Queues: pair, Elapsed: time.Since(began)}
	switch {
	case len(final.DeadLettered) > 0:
		step("dead-lettered slices %v stay in %s for a redrive", final.DeadLettered, pair.Dead.Name)
	case !cfg.Keep:
		for _, qq := range []sqsqueue.Queue{pair.Work, pair.Dead} {
			if err := q.Delete(ctx, qq); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
