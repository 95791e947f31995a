package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// barThreshold is the seed size from which progress is shown.
const barThreshold = 1000

// maxWriters bounds --writers: more parallel BatchWriteItem writers than
// this only queue up behind one DynamoDB Local.
const maxWriters = 64

func runSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("seed")
	sample := fs.Bool("sample", false, "write the four sample nights (the default when nothing else is chosen)")
	file := fs.String("file", "", "write the jobs of this JSON Lines file")
	nights := fs.Int("generate-nights", 0, fmt.Sprintf("write this many generated nights, 0 to %d (e.g. 365 for the Query vs Scan study)", workload.MaxNights))
	seed := fs.Uint64("seed", 1, "seed of the generated nights")
	start := fs.String("start", workload.DefaultStart, "first generated night (YYYY-MM-DD)")
	heavy := fs.Int("heavy-nights", 0, "how many generated nights are heavy (twice the jobs, longer runtimes)")
	pad := fs.Int("pad-bytes", 0, "add a padding attribute of this many bytes to every item (bigger items, more pages)")
	writers := fs.Int("writers", 4, fmt.Sprintf("parallel BatchWriteItem writers, 1 to %d", maxWriters))
	jsonl := fs.String("jsonl", "", "write the jobs to this JSON Lines file instead of DynamoDB")
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *nights < 0 || *nights > workload.MaxNights {
		return usagef("--generate-nights %d: want 0 to %d nights", *nights, workload.MaxNights)
	}
	if *heavy < 0 || *heavy > *nights {
		return usagef("--generate-nights %d, --heavy-nights %d: want 0 <= heavy <= nights", *nights, *heavy)
	}
	if _, err := queuekit.ParseBatchDate(*start); err != nil { // checked even when unused: a typo is never ignored
		return usagef("--start: %w", err)
	}
	if *pad < 0 || *pad > catalog.MaxPadding {
		return usagef("--pad-bytes %d: want 0 to %d", *pad, catalog.MaxPadding)
	}
	if *writers < 1 || *writers > maxWriters {
		return usagef("--writers %d: want 1 to %d parallel writers", *writers, maxWriters)
	}
	if !*sample && *file == "" && *nights == 0 {
		*sample = true
	}

	var jobs []queuekit.Job
	var parts []string
	if *sample {
		s, err := queuekit.SampleJobs()
		if err != nil {
			return err
		}
		jobs = append(jobs, s...)
		parts = append(parts, fmt.Sprintf("%d sample", len(s)))
	}
	if *file != "" {
		f, err := queuekit.LoadFile(*file, queuekit.DefaultWindow)
		if err != nil {
			return badInput(err)
		}
		jobs = append(jobs, f...)
		parts = append(parts, fmt.Sprintf("%d from %s", len(f), *file))
	}
	if *nights > 0 {
		g, err := workload.Generate(workload.Config{Start: *start, Nights: *nights, Seed: *seed, HeavyNights: *heavy})
		if err != nil {
			return err
		}
		jobs = append(jobs, g...)
		parts = append(parts, fmt.Sprintf("%d generated in %d nights from %s, seed %d", len(g), *nights, *start, *seed))
	}

	if *jsonl != "" {
		f, err := os.Create(*jsonl)
		if err != nil {
			return fmt.Errorf("write jobs: %w", err)
		}
		if err := workload.WriteJSONLines(f, jobs, *pad); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write jobs: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %d jobs (%s) to %s\n", len(jobs), strings.Join(parts, " + "), *jsonl)
		return nil
	}

	c, err := df.open(ctx, catalog.WithWriters(*writers))
	if err != nil {
		return err
	}
	// Every item is checked (fields, duplicates, DynamoDB's size limits)
	// before the table is created: bad input creates and writes nothing.
	if err := c.CheckSeed(jobs, catalog.WithPadding(*pad)); err != nil {
		return badInput(err)
	}
	rep, err := seedCatalog(ctx, stderr, c, jobs, *pad)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d items (%s) into %s in %s: %.0f items/s, %d requests, %d items retried\n",
		rep.Items, strings.Join(parts, " + "), describeTarget(c), rep.Elapsed.Round(1e6), rep.ItemsPerSecond(), rep.Requests, rep.Retried)
	return nil
}

// seedCatalog creates the table if needed and writes jobs, with progress on
// stderr for large seeds.
func seedCatalog(ctx context.Context, stderr io.Writer, c *catalog.Catalog, jobs []queuekit.Job, pad int) (catalog.SeedReport, error) {
	if err := c.CreateTable(ctx); err != nil {
		return catalog.SeedReport{}, err
	}
	opts := []catalog.SeedOption{catalog.WithPadding(pad)}
	var b *progress
	if len(jobs) >= barThreshold {
		b = newProgress(stderr, "seeding "+c.Table())
		b.update(0, len(jobs))
		opts = append(opts, catalog.WithProgress(b.report))
	}
	rep, err := c.Seed(ctx, jobs, opts...)
	if b != nil {
		b.done()
	}
	return rep, err
}
