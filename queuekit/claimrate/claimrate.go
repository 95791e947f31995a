// Package claimrate measures how fast the two executors of the workshop
// claim and finish jobs on the same DynamoDB, side by side, at the same
// worker counts: the night executor (package lease: every claim is a
// transaction on one pool item, so claims are serialised) and the fleet
// (package fleet: one conditional UpdateItem per claim, shards owned by
// workers), and the fleet again with every worker polling every shard.
//
// Runs are interleaved (round 1 of every configuration, then round 2, ...)
// so that a machine that gets busier or quieter during the measurement
// shifts every configuration alike; each row reports the median and the
// range of its rounds. Every fleet run measures the write ceiling of the
// server first (W×S clients making conditional UpdateItems on distinct
// items), so each figure can be read against what the server accepted at
// that moment.
package claimrate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// The executors compared.
const (
	Night      = "night executor (one pool item)"
	FleetOwned = "fleet, owned shards"
	FleetAll   = "fleet, every worker polls every shard"
)

// Config is one comparison.
type Config struct {
	// Bin is the queuekit executable the fleet's worker processes run.
	Bin string
	// Workers are the worker counts W compared (e.g. 2 and 8).
	Workers []int
	// Slots per worker S (default 4).
	Slots int
	// Shards K of the fleet (default 16).
	Shards int
	// FleetJobs per fleet run (default 2,000); NightJobs per night run
	// (default 400, at most 9,999: the night executor's job ids have four
	// digits, and it is slow by design).
	FleetJobs, NightJobs int
	// Rounds of every configuration (default 3).
	Rounds int
	// PollAll adds the fleet with every worker polling every shard.
	PollAll bool
	// Ceiling is how long each fleet run measures the write ceiling
	// (default: the fleet's own, 3 s).
	Ceiling time.Duration
	// Progress, when set, is called after every run: runs done (Done) of
	// all (Total), and a Note with the run's figure ("round 1: fleet, 4
	// workers x 4 slots: 350 jobs/s").
	Progress func(queuekit.Progress)
}

func (c Config) withDefaults() Config {
	c.Slots = cmp.Or(c.Slots, 4)
	c.Shards = cmp.Or(c.Shards, 16)
	c.FleetJobs = cmp.Or(c.FleetJobs, 2000)
	c.NightJobs = cmp.Or(c.NightJobs, 400)
	c.Rounds = cmp.Or(c.Rounds, 3)
	return c
}

// Row is one configuration's rounds.
type Row struct {
	Executor string
	Workers  int
	Slots    int
	// JobsPerSecond of each round, in the order run.
	JobsPerSecond []float64
	// Median, Min and Max of JobsPerSecond.
	Median, Min, Max float64
	// LostPerWon is lost claims (or lost claim transactions) per claim won,
	// over all rounds.
	LostPerWon float64
	// Write units per job as ReturnConsumedCapacity reported them (table,
	// index), for both executors: the fleet's workers' writes, the night
	// executor's claim, start, heartbeat and end writes (lease.WorkerStats).
	TableWUPerJob, IndexWUPerJob float64
	// Fleet rows only: writes per job (requests) and the median write
	// ceiling measured before each round.
	WritesPerJob, Ceiling float64
}

// Compare runs the comparison on the catalog's endpoint: the night executor
// on <catalog>_exec and the fleet on <catalog>_fleet (both made afresh).
func Compare(ctx context.Context, cat *catalog.Catalog, cfg Config) ([]Row, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Workers) == 0 || cfg.NightJobs > 9999 || cfg.Bin == "" {
		return nil, fmt.Errorf("claimrate: want worker counts, at most 9,999 night jobs and the queuekit executable (got %v, %d, %q)", cfg.Workers, cfg.NightJobs, cfg.Bin)
	}
	type key struct {
		exec    string
		workers int
	}
	rows := map[key]*Row{}
	var order []key
	won, lost := map[key]int{}, map[key]int{}
	ceilings := map[key][]float64{}
	add := func(k key) *Row {
		if rows[k] == nil {
			rows[k] = &Row{Executor: k.exec, Workers: k.workers, Slots: cfg.Slots}
			order = append(order, k)
		}
		return rows[k]
	}
	execs := []string{Night, FleetOwned}
	if cfg.PollAll {
		execs = append(execs, FleetAll)
	}
	runs, total := 0, cfg.Rounds*len(cfg.Workers)*len(execs)
	say := func(format string, a ...any) { // once per run
		runs++
		if cfg.Progress != nil {
			cfg.Progress(queuekit.Progress{Done: runs, Total: total, Note: fmt.Sprintf(format, a...)})
		}
	}
	for round := 1; round <= cfg.Rounds; round++ {
		for _, w := range cfg.Workers {
			for _, ex := range execs {
				k := key{ex, w}
				r := add(k)
				switch ex {
				case Night:
					rate, wn, ls, tab, idx, err := night(ctx, cat, w, cfg.Slots, cfg.NightJobs)
					if err != nil {
						return nil, err
					}
					r.JobsPerSecond = append(r.JobsPerSecond, rate)
					r.TableWUPerJob += tab / float64(cfg.NightJobs) / float64(cfg.Rounds)
					r.IndexWUPerJob += idx / float64(cfg.NightJobs) / float64(cfg.Rounds)
					won[k], lost[k] = won[k]+wn, lost[k]+ls
					say("round %d: %s, %d workers x %d slots: %.0f jobs/s", round, ex, w, cfg.Slots, rate)
				default:
					f, err := fleet.New(cat, fleet.WithPollAll(ex == FleetAll))
					if err != nil {
						return nil, err
					}
					rep, err := fleetrun.Run(ctx, f, fleetrun.Config{Bin: cfg.Bin, Jobs: cfg.FleetJobs, Workers: w, Slots: cfg.Slots, Shards: cfg.Shards, Ceiling: cfg.Ceiling})
					if err != nil {
						return nil, err
					}
					r.JobsPerSecond = append(r.JobsPerSecond, rep.JobsPerSecond)
					won[k], lost[k] = won[k]+rep.Claims.Won, lost[k]+rep.Claims.Lost
					ceilings[k] = append(ceilings[k], rep.WriteCeiling)
					r.WritesPerJob += rep.WritesPerJob / float64(cfg.Rounds)
					r.TableWUPerJob += rep.TableWUPerJob / float64(cfg.Rounds)
					r.IndexWUPerJob += rep.IndexWUPerJob / float64(cfg.Rounds)
					say("round %d: %s, %d workers x %d slots: %.0f jobs/s (write ceiling %.0f/s)", round, ex, w, cfg.Slots, rep.JobsPerSecond, rep.WriteCeiling)
				}
			}
		}
	}
	out := make([]Row, 0, len(order))
	for _, k := range order {
		r := rows[k]
		r.Median, r.Min, r.Max = Median(r.JobsPerSecond), slices.Min(r.JobsPerSecond), slices.Max(r.JobsPerSecond)
		if won[k] > 0 {
			r.LostPerWon = float64(lost[k]) / float64(won[k])
		}
		if len(ceilings[k]) > 0 {
			r.Ceiling = Median(ceilings[k])
		}
		out = append(out, *r)
	}
	return out, nil
}

// Median is the middle value (the mean of the two middle ones for an even
// count); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// night runs the night executor over n one-minute jobs all due at once (a
// job-minute of 1 ms, so the work is negligible) with w in-process workers
// of s slots each (a pool of c = w·s), as lease's BenchmarkClaims does. It
// returns jobs per second, claim transactions won and lost, and the write
// units the workers' writes consumed (table, index).
func night(ctx context.Context, cat *catalog.Catalog, w, s, n int) (rate float64, won, lost int, tableWU, indexWU float64, err error) {
	ex, err := lease.New(cat)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	const date = "2027-07-01"
	nt := queuekit.Night{BatchDate: date, Window: queuekit.DefaultWindow}
	for i := range n {
		id := fmt.Sprintf("JOB-20270701-%04d", i+1)
		nt.Jobs = append(nt.Jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: "01:00#" + id, RequestedWindow: "01:00",
			WorkloadClass: queuekit.ClassETL, RuntimeMinutes: 1, Priority: i % 4, Status: "queued"})
	}
	cfg := lease.Config{Workers: w * s, Policy: sim.Barrier, Minute: time.Millisecond, Poll: 5 * time.Millisecond, Lease: 30 * time.Second,
		MaxRetry: lease.DefaultMaxRetry}
	runID, err := ex.Prepare(ctx, nt, cfg)
	if err != nil {
		return 0, 0, 0, 0, 0, fmt.Errorf("night executor: prepare: %w", err)
	}
	var g errgroup.Group
	stats := make([]lease.WorkerStats, w)
	for i := range w {
		g.Go(func() error {
			var err error
			stats[i], err = ex.Join(ctx, date, lease.WorkerConfig{Slots: s, Name: fmt.Sprintf("night%d", i+1)})
			return err
		})
	}
	began := time.Now()
	if err := ex.Start(ctx, date, runID); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if err := ex.WaitDone(ctx, date, runID, nil); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	elapsed := time.Since(began)
	if err := g.Wait(); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	for _, st := range stats {
		won, lost = won+st.Batches, lost+st.Lost
		tableWU, indexWU = tableWU+st.TableWU, indexWU+st.IndexWU
	}
	return float64(n) / elapsed.Seconds(), won, lost, tableWU, indexWU, nil
}

// PoolBound predicts the night executor's ceiling from one measurement: one
// client makes conditional UpdateItems back to back on the fleet table for
// d, which gives the server's round trip r for one conditional write. Every
// write on the pool item waits for the one before it (each is conditioned on
// the version the previous one left), so the pool takes at most 1/r writes a
// second whatever the number of workers. A job costs the pool its release
// (one write) and its share of a claim (one write for up to jobsPerClaim
// jobs: a worker with k free slots claims up to k in one transaction), so
//
//	jobs/s <= (1/r) / (1 + 1/jobsPerClaim),
//
// 1/(2r) when every claim takes one job. The pool's writes are transactions,
// slower than one UpdateItem, and lost races add more, so the real figure is
// lower.
func PoolBound(ctx context.Context, cat *catalog.Catalog, d time.Duration, jobsPerClaim int) (roundTrip time.Duration, jobsPerSecond float64, err error) {
	if jobsPerClaim < 1 {
		return 0, 0, fmt.Errorf("pool bound: %d jobs per claim, want at least 1", jobsPerClaim)
	}
	f, err := fleet.New(cat)
	if err != nil {
		return 0, 0, err
	}
	if err := f.Reset(ctx, 1); err != nil {
		return 0, 0, err
	}
	rate, err := fleetrun.WriteCeiling(ctx, f, 1, d)
	if err != nil {
		return 0, 0, err
	}
	if !(rate > 0) {
		return 0, 0, fmt.Errorf("pool bound: no write completed in %s", d)
	}
	return time.Duration(float64(time.Second) / rate), rate / (1 + 1/float64(jobsPerClaim)), nil
}
