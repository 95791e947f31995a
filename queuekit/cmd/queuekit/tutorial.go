package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/report"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// nightSource loads one night; local reads the embedded sample data,
// dynamodb reads the job catalog with Query (see tutorial_dynamodb.go).
type nightSource func(ctx context.Context, batchDate, window string) (queuekit.Night, string, error)

// sources maps --source values to loaders.
var sources = map[string]func(df *dynamoFlags) nightSource{
	"local":    localSource,
	"dynamodb": dynamoSource,
}

// localSource reads the embedded sample nights.
func localSource(*dynamoFlags) nightSource {
	return func(_ context.Context, date, window string) (queuekit.Night, string, error) {
		n, err := queuekit.SampleNight(date)
		if err != nil {
			return queuekit.Night{}, "", badInput(err)
		}
		return n.Only(window), "", nil
	}
}

func runTutorial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tutorial")
	source := fs.String("source", "local", "where the nights come from: local (embedded sample data) or dynamodb (Query the job catalog)")
	date := fs.String("batch-date", "", "one night (YYYY-MM-DD) instead of the two reference scenarios")
	window := fs.String("window", "", "only the jobs of one requested window (HH:MM)")
	workers := fs.Int("workers", 0, "workers (default: 3 for 2026-05-13, 2 for 2026-05-14, else 3)")
	policy := fs.String("policy", "barrier", "dispatch policy: barrier, easy (EASY backfilling; alias backfill) or conservative (conservative backfilling)")
	asJSON := fs.Bool("json", false, "print a JSON list, one object per scenario")
	df := addDynamoFlags(fs) // for --source dynamodb
	if err := parse(fs, args); err != nil {
		return err
	}
	pol, err := sim.ParsePolicy(*policy)
	if err != nil {
		return usagef("--policy: %w", err)
	}
	if *workers < 0 || (*workers == 0 && isSet(fs, "workers")) || *workers > maxPoolWorkers {
		return usagef("--workers %d: want 1 to %d workers", *workers, maxPoolWorkers)
	}
	if err := checkWindow(*window); err != nil {
		return err
	}
	if err := checkDate(*date); err != nil {
		return err
	}
	mk, ok := sources[*source]
	if !ok {
		return usagef("--source %q: use local or dynamodb", *source)
	}
	load := mk(df)

	type scenario struct {
		date    string
		workers int
	}
	var scenarios []scenario
	if *date != "" {
		c := 3
		for _, r := range report.ReferenceScenarios {
			if r.BatchDate == *date {
				c = r.Workers
			}
		}
		scenarios = append(scenarios, scenario{*date, c})
	} else {
		for _, r := range report.ReferenceScenarios {
			scenarios = append(scenarios, scenario{r.BatchDate, r.Workers})
		}
	}
	var out []report.JSON
	for i, sc := range scenarios {
		if *workers > 0 {
			sc.workers = *workers
		}
		n, note, err := load(ctx, sc.date, *window)
		if err != nil {
			return err
		}
		if len(n.Jobs) == 0 {
			return usagef("night %s has no jobs in window %q", sc.date, *window)
		}
		s, err := report.Build(n, sc.workers, pol)
		if err != nil {
			return err
		}
		if *asJSON {
			out = append(out, s.JSON())
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := s.WriteText(stdout); err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintln(stdout, note)
		}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
