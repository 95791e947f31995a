// Package access measures the two ways to read one night from the job
// catalog, Query on the partition key and Scan with a filter, as the table
// grows: items returned and scanned, read capacity, latency, pages and cost.
// It is the logic behind the Query versus Scan notebook, kept here so a test
// can reach it.
//
// A Study seeds one table per size (7, 30, 90, 365 nights, ...) with the
// same synthetic nights from the workload package (table n holds the first n
// nights of one generated year), then reads the first night of each table
// with catalog.QueryNight and catalog.ScanNight in interleaved rounds
// (Query, Scan, Query, Scan, ...), keeping every wall time: read units and
// pages are the same on every round, latency is not. Tables that already
// hold the right items are reused, so a study runs again in seconds.
//
// What it shows, and what the tests assert: Query reads only the night
// (scanned == returned) and its read capacity does not depend on the table
// size; Scan reads, and is charged for, every item of the table, so its
// capacity grows with the table. On-demand reads cost the price table's
// dollars per million read request units (package prices):
//
//	cost = RCU × OnDemandPerMillionReads / 1,000,000 dollars
//
// The poor key of the schema notebook (job_id alone as the partition key) is
// just another catalog: PoorKey opens it with catalog.KeyByJobID, and the
// catalog's CreateTable, Seed, GetJob and ScanNight do the rest.
//
// access returns data; chart draws it and turns it into tables (chart.QueryVsScan,
// chart.AccessTable, chart.ReadsTable).
package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/measure"
	"github.com/nightqueue/workshop/queuekit/prices"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// PricePerMillionReads is the on-demand price of one million read request
// units, in dollars, from the module's one price table.
//
// Deprecated: use prices.Table2026.OnDemandPerMillionReads (or Cost); this
// name is kept for code written against it.
var PricePerMillionReads = prices.Table2026.OnDemandPerMillionReads

// Cost is the on-demand price in dollars of rcu read capacity units
// (prices.Table2026).
func Cost(rcu float64) float64 { return measure.ReadCost(rcu) }

// DefaultSizes are the table sizes of the study, in nights: a week, a month,
// a quarter and a year.
var DefaultSizes = []int{7, 30, 90, 365}

// TableName is the study's table holding the given number of nights, e.g.
// "qvs_365days". The study never touches the catalog table itself.
func TableName(nights int) string { return "qvs_" + strconv.Itoa(nights) + "days" }

// PoorKeyTable is the table of the poor key design in the schema notebook.
const PoorKeyTable = "schema_by_job_id"

// PoorKey returns the job catalog keyed the naive way, in PoorKeyTable:
// job_id alone is the partition key (catalog.KeyByJobID). It answers "get
// job X" with one GetItem (GetJob) but reading a night takes a Scan of the
// whole table (ScanNight). opts come first, so they may name the endpoint
// but not another table or key.
func PoorKey(ctx context.Context, opts ...catalog.Option) (*catalog.Catalog, error) {
	return catalog.New(ctx, append(slices.Clone(opts), catalog.WithTable(PoorKeyTable), catalog.WithKeySchema(catalog.KeyByJobID))...)
}

// Opener returns the catalog of the table that holds the given number of
// nights. The table need not exist yet.
type Opener func(ctx context.Context, nights int) (*catalog.Catalog, error)

// Tables returns an Opener for the tables TableName(n) at the endpoint the
// options (or AWS_ENDPOINT_URL_DYNAMODB) name.
func Tables(opts ...catalog.Option) Opener {
	return func(ctx context.Context, nights int) (*catalog.Catalog, error) {
		return catalog.New(ctx, append(slices.Clone(opts), catalog.WithTable(TableName(nights)))...)
	}
}

// status is what a Study is doing: seeding a table (Done of Total items
// written) or reading it (Done of Total reads). It reaches Study.Progress
// as a queuekit.Progress whose Note is its String.
type status struct {
	Phase       string // "seed", "reuse" or "read"
	Table       string
	Nights      int // nights in the table
	Done, Total int
	Step, Steps int // which table, 1-based, of how many
}

func (p status) String() string {
	switch p.Phase {
	case "seed":
		return fmt.Sprintf("table %d/%d %s: seeding %d nights, %d/%d items", p.Step, p.Steps, p.Table, p.Nights, p.Done, p.Total)
	case "reuse":
		return fmt.Sprintf("table %d/%d %s: %d nights already there, reused", p.Step, p.Steps, p.Table, p.Nights)
	}
	return fmt.Sprintf("table %d/%d %s: Query and Scan, read %d/%d", p.Step, p.Steps, p.Table, p.Done, p.Total)
}

// Study measures Query against Scan on tables of growing size. The zero
// value plus nothing else measures DefaultSizes with workload seed 1 at the
// endpoint of AWS_ENDPOINT_URL_DYNAMODB.
type Study struct {
	Sizes    []int  // nights per table (default DefaultSizes)
	Seed     uint64 // workload seed (default 1)
	PadBytes int    // extra bytes per item, to make pages (catalog.WithPadding)
	Segments int    // Scan segments (default 1: a plain Scan)
	// Repeats is the number of timed rounds per table (default 3), after one
	// warm-up round; a round is one Query and one Scan. Every wall time is
	// kept (AccessReport.Samples).
	Repeats int
	Window  string // optional requested window to read (HH:MM); "" reads the whole night
	Open    Opener // the table of each size (default Tables())
	// Progress, if set, is called from the calling goroutine: Done of Total
	// items written or reads made in the present phase, and a Note saying
	// which table and phase ("table 2/4 qvs_30: seeding 30 nights,
	// 120/300 items").
	Progress func(queuekit.Progress)
	Reseed   bool // drop and seed every table even when it looks right
}

// Point is one measurement of a Study: measure.Point, under the name this
// package always had.
type Point = measure.Point

// Run seeds (or reuses) one table per size and reads the first night of
// each with Query and with Scan. Points come in the order of Sizes.
func (s Study) Run(ctx context.Context) ([]Point, error) {
	s = s.withDefaults()
	for _, n := range s.Sizes {
		if n < 1 {
			return nil, fmt.Errorf("query vs scan study: size %d nights: want at least 1", n)
		}
	}
	if s.Window != "" {
		if _, err := queuekit.ParseClock(s.Window); err != nil {
			return nil, fmt.Errorf("query vs scan study: window: %w", err)
		}
	}
	if s.PadBytes < 0 || s.PadBytes > catalog.MaxPadding {
		return nil, fmt.Errorf("query vs scan study: pad bytes %d: want 0 to %d", s.PadBytes, catalog.MaxPadding)
	}
	// One generated year (or more): table n holds its first n nights, so the
	// night read is the same in every table.
	nights, err := workload.Nights(workload.Config{Nights: slices.Max(s.Sizes), Seed: s.Seed})
	if err != nil {
		return nil, fmt.Errorf("query vs scan study: %w", err)
	}
	date := nights[0].BatchDate
	points := make([]Point, 0, len(s.Sizes))
	for i, n := range s.Sizes {
		cat, err := s.Open(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("query vs scan study: open the table of %d nights: %w", n, err)
		}
		var jobs []queuekit.Job
		for _, night := range nights[:n] {
			jobs = append(jobs, night.Jobs...)
		}
		prog := status{Table: cat.Table(), Nights: n, Step: i + 1, Steps: len(s.Sizes)}
		if err := s.fill(ctx, cat, jobs, prog); err != nil {
			return nil, fmt.Errorf("query vs scan study: table %s (%d nights): %w", cat.Table(), n, err)
		}
		p := Point{Nights: n, Items: len(jobs), Table: cat.Table(), Date: date}
		prog.Phase, prog.Total = "read", 2*(s.Repeats+1)
		reps, err := s.rounds(ctx, &prog, []func() (catalog.AccessReport, error){
			func() (catalog.AccessReport, error) {
				_, r, err := cat.QueryNight(ctx, date, s.Window)
				return r, err
			},
			func() (catalog.AccessReport, error) {
				_, r, err := cat.ScanNight(ctx, date, s.Window, s.Segments)
				return r, err
			},
		})
		if err != nil {
			return nil, fmt.Errorf("query vs scan study: table %s: %w", cat.Table(), err)
		}
		p.Query, p.Scan = reps[0], reps[1]
		if p.Query.Count != p.Scan.Count {
			return nil, fmt.Errorf("query vs scan study: table %s night %s: Query returned %d items, Scan %d; the table changed while measuring?",
				cat.Table(), date, p.Query.Count, p.Scan.Count)
		}
		points = append(points, p)
	}
	return points, nil
}

func (s Study) withDefaults() Study {
	if len(s.Sizes) == 0 {
		s.Sizes = DefaultSizes
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Segments < 1 {
		s.Segments = 1
	}
	if s.Repeats < 1 {
		s.Repeats = 3
	}
	if s.Open == nil {
		s.Open = Tables()
	}
	return s
}

func (s Study) report(p status) {
	if s.Progress != nil {
		s.Progress(queuekit.Progress{Done: p.Done, Total: p.Total, Note: p.String()})
	}
}

// fill makes the table hold exactly jobs: it reuses a table that has the
// right number of items and padding, and otherwise drops, creates and seeds it.
func (s Study) fill(ctx context.Context, cat *catalog.Catalog, jobs []queuekit.Job, prog status) error {
	if !s.Reseed && s.holds(ctx, cat, jobs) {
		prog.Phase, prog.Done, prog.Total = "reuse", len(jobs), len(jobs)
		s.report(prog)
		return nil
	}
	if err := cat.DeleteTable(ctx); err != nil {
		return err
	}
	if err := cat.CreateTable(ctx); err != nil {
		return err
	}
	prog.Phase, prog.Total = "seed", len(jobs)
	s.report(prog)
	done := make(chan struct{})
	updates := make(chan int, 1)
	// Seed calls progress from its writers; report from this goroutine only.
	go func() {
		defer close(done)
		for d := range updates {
			prog.Done = d
			s.report(prog)
		}
	}()
	opts := []catalog.SeedOption{catalog.WithProgress(func(p queuekit.Progress) {
		select {
		case updates <- p.Done:
		default: // the reporter is busy; a later update follows
		}
	})}
	if s.PadBytes > 0 {
		opts = append(opts, catalog.WithPadding(s.PadBytes))
	}
	_, err := cat.Seed(ctx, jobs, opts...)
	close(updates)
	<-done
	if err == nil {
		prog.Done = len(jobs)
		s.report(prog)
	}
	return err
}

// holds reports whether the table exists with len(jobs) items and the first
// job carries the study's padding. Any error means "no": the table is rebuilt.
func (s Study) holds(ctx context.Context, cat *catalog.Catalog, jobs []queuekit.Job) bool {
	if ok, err := cat.Exists(ctx); err != nil || !ok {
		return false
	}
	if n, err := cat.CountItems(ctx); err != nil || n != len(jobs) {
		return false
	}
	first := jobs[0]
	if j, err := cat.GetJob(ctx, first.JobID); err != nil || j != first {
		return false
	}
	pad, err := cat.PaddingBytes(ctx, first.JobID)
	return err == nil && pad == s.PadBytes
}

// rounds makes one untimed warm-up round, then Repeats timed rounds, each
// round one call of every read in turn (Query, Scan, Query, Scan, ...), so
// that a burst of load on the machine slows all of them rather than one. It
// returns one report per read, with every timed wall time in Samples and
// their median in Elapsed; read units, counts and pages are those of the
// first timed read (they are the same every time).
func (s Study) rounds(ctx context.Context, prog *status, reads []func() (catalog.AccessReport, error)) ([]catalog.AccessReport, error) {
	out := make([]catalog.AccessReport, len(reads))
	for round := range s.Repeats + 1 {
		for i, read := range reads {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := read()
			if err != nil {
				return nil, err
			}
			prog.Done++
			s.report(*prog)
			if round == 0 {
				continue
			}
			if round == 1 {
				out[i] = r
				out[i].Samples = make([]time.Duration, 0, s.Repeats)
			}
			out[i].Samples = append(out[i].Samples, r.Elapsed)
		}
	}
	for i := range out {
		out[i].Elapsed = out[i].Spread().Median
	}
	return out, nil
}

// ParallelScan reads one night of the table with a Scan of each number of
// segments, in repeats interleaved rounds after a warm-up round (1, 2, 4,
// 8, 1, 2, 4, 8, ... segments), keeping every wall time in the reports'
// Samples and the median in Elapsed: the capacity stays the same (every
// item is still read once); only the wall time changes.
func ParallelScan(ctx context.Context, cat *catalog.Catalog, date string, segments []int, repeats int) ([]catalog.AccessReport, error) {
	if len(segments) == 0 {
		return nil, errors.New("parallel scan: no segment counts; try []int{1, 2, 4, 8}")
	}
	s := Study{Repeats: repeats}.withDefaults()
	reads := make([]func() (catalog.AccessReport, error), len(segments))
	for i, n := range segments {
		if n < 1 {
			return nil, fmt.Errorf("parallel scan: %d segments: want at least 1", n)
		}
		reads[i] = func() (catalog.AccessReport, error) {
			_, r, err := cat.ScanNight(ctx, date, "", n)
			if err != nil {
				return r, fmt.Errorf("%d segments: %w", n, err)
			}
			return r, nil
		}
	}
	var prog status
	out, err := s.rounds(ctx, &prog, reads)
	if err != nil {
		return nil, fmt.Errorf("parallel scan of %s: %w", cat.Table(), err)
	}
	return out, nil
}
