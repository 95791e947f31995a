package fanoutlab

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
	"github.com/nightqueue/workshop/queuekit/timers"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// NightsFanOut seeds the nights it needs into its table and gives a config
// that runs: three nights, three results, each counted once.
func TestNightsFanOutSeedsAndRuns(t *testing.T) {
	t.Setenv(catalog.EnvEndpoint, ddbtest.Endpoint(t))
	t.Setenv(sqsqueue.EnvEndpoint, sqstest.Endpoint(t))
	src := ddbtest.NewCatalog(t, catalog.WithTable(ddbtest.TableName(t)))
	ddbtest.NewCatalog(t, catalog.WithTable(src.Table()+"_results")) // deleted at the end
	ctx := context.Background()
	cfg, err := NightsFanOut(ctx, src.Table(), 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Wait = time.Second
	out, err := fanout.Execute(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Processed != 3 || len(out.DeadLettered) != 0 || out.Stats.Duplicates != 0 {
		t.Fatalf("outcome %+v, stats %+v; want 3 processed, none dead, no duplicates", out.Final, out.Stats)
	}
	n, err := src.CountItems(ctx)
	if err != nil || n == 0 {
		t.Fatalf("source table holds %d items (%v); NightsFanOut should have seeded 3 nights", n, err)
	}
}

// FreshTimers starts from empty tables even when a timer was left behind.
func TestFreshTimersEmptiesTheTables(t *testing.T) {
	t.Setenv(catalog.EnvEndpoint, ddbtest.Endpoint(t))
	name := ddbtest.TableName(t)
	ctx := context.Background()
	for range 2 {
		tm, err := FreshTimers(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tm.DeleteTables(context.Background()) })
		if n, err := tm.Pending(ctx); err != nil || n != 0 {
			t.Fatalf("pending = %d, %v; want an empty table", n, err)
		}
		if err := tm.Schedule(ctx, timersTimer("left-behind")); err != nil {
			t.Fatal(err)
		}
	}
}

func timersTimer(id string) timers.Timer { return timers.Timer{ID: id, Due: time.Now().Add(time.Hour)} }

// Cells run out of order: a 3-night cell, then a 6-night one, on the same
// table. Each night must hold its jobs once (no job_id under two window
// keys), and the first three nights must be what a 6-night cell alone seeds:
// the generated year's nights, whatever n asked for them.
func TestNightsFanOutGivesTheSameNightsWhateverItsOrder(t *testing.T) {
	t.Setenv(catalog.EnvEndpoint, ddbtest.Endpoint(t))
	t.Setenv(sqsqueue.EnvEndpoint, sqstest.Endpoint(t))
	ctx := context.Background()
	year, err := workload.Generate(workload.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := nights.Keys(workload.DefaultStart, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, j := range year {
		want[j.BatchDate]++
	}
	src := ddbtest.NewCatalog(t, catalog.WithTable(ddbtest.TableName(t)))
	ddbtest.NewCatalog(t, catalog.WithTable(src.Table()+"_results"))
	for _, n := range []int{3, 6} {
		if _, err := NightsFanOut(ctx, src.Table(), n); err != nil {
			t.Fatalf("NightsFanOut(%d): %v", n, err)
		}
	}
	for _, k := range keys {
		night, _, err := src.QueryNight(ctx, k, "")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, j := range night.Jobs {
			if seen[j.JobID] {
				t.Fatalf("night %s holds job %s twice", k, j.JobID)
			}
			seen[j.JobID] = true
		}
		if len(night.Jobs) != want[k] || want[k] == 0 {
			t.Fatalf("night %s holds %d jobs; the generated year has %d", k, len(night.Jobs), want[k])
		}
	}
}

// The note appears only past Local's limit of tables swept at a time, names
// the other tables (at most eight, then a count) and lists not the timers' own.
func TestTTLSweepNoteOnlyPastLocalsLimit(t *testing.T) {
	tables := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("t%02d", i))
		}
		return out
	}
	for _, tc := range []struct {
		names       []string
		want, avoid []string
	}{
		{names: tables(catalog.LocalTTLSweepers)},
		{names: tables(catalog.LocalTTLSweepers + 1), want: []string{"at most 7 tables", "7 other tables", "`t01`", "`t07`"}, avoid: []string{"(`t00`", "more"}},
		{names: tables(12), want: []string{"11 other tables", "`t08`", "and 3 more"}, avoid: []string{"(`t00`", "`t09`"}},
	} {
		note := TTLSweepNote(tc.names, "t00")
		if len(tc.want) == 0 && note != "" {
			t.Errorf("%d tables with TTL: note %q, want none", len(tc.names), note)
		}
		for _, w := range tc.want {
			if !strings.Contains(note, w) {
				t.Errorf("%d tables with TTL: note %q lacks %q", len(tc.names), note, w)
			}
		}
		for _, a := range tc.avoid {
			if strings.Contains(note, a) {
				t.Errorf("%d tables with TTL: note %q has %q", len(tc.names), note, a)
			}
		}
		if strings.Contains(note, "\n") {
			t.Errorf("note %q: want one line", note)
		}
	}
}
