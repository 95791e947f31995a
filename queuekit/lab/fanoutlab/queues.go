package fanoutlab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
	"github.com/nightqueue/workshop/queuekit/timers"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// Queues opens the workshop's SQS (AWS_ENDPOINT_URL_SQS, ElasticMQ in the
// workshop) and checks that it answers, so a cell stops with one line naming
// the endpoint and how to start it.
func Queues(ctx context.Context) (*sqsqueue.Client, error) {
	q, err := sqsqueue.New(ctx)
	if err != nil {
		return nil, err
	}
	if err := q.Ping(ctx); err != nil {
		return nil, err
	}
	return q, nil
}

// The tables of notebooks 06 and 07: cells name them through these, not a
// constant of the notebook's first cell, so each cell runs after a kernel
// restart on its own.
const (
	// TimersTable holds notebook 06's timers (its state: + "-state").
	TimersTable = "workshop_timers_06"
	// FanOutTable holds notebook 07's nights (its results: + "_results").
	FanOutTable = "workshop_fanout_07"
)

// RunIDFile is where notebook 07's dead-letter cell leaves its run id for
// the redrive cell (every cell is a new process), in the temporary
// directory, never in $HOME.
func RunIDFile() string { return filepath.Join(os.TempDir(), "workshop-07-run") }

// FreshTimers returns the timers of table (and table-state), dropped and
// created again so the cell starts from empty tables. On DynamoDB Local it
// says in one line (TTLSweepNote) when more tables have TTL on than Local
// sweeps at a time, since this table's timers may then never fire.
func FreshTimers(ctx context.Context, table string) (*timers.Timers, error) {
	c, err := catalog.New(ctx, catalog.WithTable(table))
	if err != nil {
		return nil, err
	}
	t := timers.New(c)
	if err := t.DeleteTables(ctx); err != nil {
		return nil, err
	}
	if err := t.CreateTables(ctx); err != nil {
		return nil, err
	}
	if c.Local() {
		// A failed listing only loses the warning; the timers still work.
		if names, err := c.TTLTables(ctx); err == nil {
			if note := TTLSweepNote(names, table); note != "" {
				lab.Markdown(note)
			}
		}
	}
	return t, nil
}

// TTLSweepNote is the line FreshTimers shows when names (the tables with TTL
// on, table among them) are more than DynamoDB Local sweeps at a time
// (catalog.LocalTTLSweepers): the timers in table may not fire until one of
// the others is deleted. It is "" otherwise.
func TTLSweepNote(names []string, table string) string {
	if len(names) <= catalog.LocalTTLSweepers {
		return ""
	}
	var others []string
	for _, n := range names {
		if n != table {
			others = append(others, "`"+n+"`")
		}
	}
	const show = 8
	list := strings.Join(others[:min(show, len(others))], ", ")
	if len(others) > show {
		list += fmt.Sprintf(" and %d more", len(others)-show)
	}
	return fmt.Sprintf("⚠ DynamoDB Local deletes expired items in at most %d tables at a time, and %d other tables have TTL on (%s): "+
		"the timers in `%s` may not fire until some of those are deleted. Delete the tables you no longer need, "+
		"or restart DynamoDB Local (stop `make workshop` and start it again: Local keeps its tables in memory).",
		catalog.LocalTTLSweepers, len(others), list, table)
}

// OpenTimers returns the timers of table as an earlier cell left them.
func OpenTimers(ctx context.Context, table string) (*timers.Timers, error) {
	c, err := catalog.New(ctx, catalog.WithTable(table))
	if err != nil {
		return nil, err
	}
	return timers.New(c), nil
}

// NightsFanOut returns a fan-out over the first n generated nights (from
// workload.DefaultStart, seed 1): the nights live in table, seeded now if
// the last one is missing; results go to table + "_results"; each night is
// simulated with 3 workers under the barrier rules; the run id is new.
func NightsFanOut(ctx context.Context, table string, n int) (fanout.Config, error) {
	src, err := catalog.New(ctx, catalog.WithTable(table))
	if err != nil {
		return fanout.Config{}, err
	}
	keys, err := nights.Keys(workload.DefaultStart, n)
	if err != nil {
		return fanout.Config{}, err
	}
	if err := src.CreateTable(ctx); err != nil {
		return fanout.Config{}, err
	}
	last, _, err := src.QueryNight(ctx, keys[n-1], "")
	if err != nil {
		return fanout.Config{}, err
	}
	if len(last.Jobs) == 0 {
		// The nights come from one canonical year (or more, for a larger n),
		// not from a workload of n nights: the generator picks its heavy
		// nights from all of them, so n = 12 and n = 30 would give the same
		// night different jobs, and a table seeded by a 12-night cell and
		// then a 30-night one (cells run out of order) would hold both.
		all, err := workload.Generate(workload.Config{Nights: max(n, workload.DefaultNights), Seed: 1})
		if err != nil {
			return fanout.Config{}, err
		}
		want := make(map[string]bool, n)
		for _, k := range keys {
			want[k] = true
		}
		jobs := make([]queuekit.Job, 0, len(all))
		for _, j := range all {
			if want[j.BatchDate] {
				jobs = append(jobs, j)
			}
		}
		if _, err := src.Seed(ctx, jobs); err != nil {
			return fanout.Config{}, err
		}
	}
	resCat, err := catalog.New(ctx, catalog.WithTable(table+"_results"))
	if err != nil {
		return fanout.Config{}, err
	}
	results := fanout.NewResults(resCat)
	if err := results.Create(ctx); err != nil {
		return fanout.Config{}, err
	}
	q, err := Queues(ctx)
	if err != nil {
		return fanout.Config{}, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fanout.Config{}, fmt.Errorf("run id: %w", err)
	}
	return fanout.Config{Queues: q, Results: results, Run: "nb-" + hex.EncodeToString(b[:]), Keys: keys,
		Source: nights.Source(src, 3, sim.Barrier), Combine: nights.Combine}, nil
}
