package fleetlab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// FleetSweep is the real fleet (`queuekit fleet-worker` processes) run
// through a limits layer once per shard count, each on a fresh table, the
// runs side by side: each table has its own partitions in the layer, so
// the runs share the machine but no limit.
type FleetSweep struct {
	Bin   string // the queuekit command (default: QueuekitBinary)
	Table string // base name; each run's table is Table + "_k" + K + "_" + hhmmss (default "fleet_sweep")
	// JobsPerShard is the work a run offers per shard (default 20): a run
	// of K shards runs K × JobsPerShard jobs, so that while a shard count
	// lifts the throughput every run lasts about as long, and a flat
	// throughput shows as a longer run.
	JobsPerShard int
	Workers      int   // worker processes (default 1: it owns every shard, so K changes only how the writes spread)
	Slots        int   // slots a worker (default 8)
	Shards       []int // shard counts (default 1, 2, 4, 8)
}

// FleetShardRun is one run of a FleetSweep: what the fleet reported and
// what the layer counted on its table and its due index.
type FleetShardRun struct {
	Shards int
	Table  string
	Report fleetrun.Report
	// IndexWritesPerSecond is the due index's write units consumed a
	// second, the median over the seconds in which the workers ran (the
	// first and last second of the run left out, as partial).
	IndexWritesPerSecond float64
	// IndexLimit is what the due index's partitions serve a second
	// (partitions × 1,000 / S) and IndexPartitions their number.
	IndexLimit      float64
	IndexPartitions int
	// PartitionsWritten is how many of the index's partitions took writes:
	// the K shard keys hash onto them, and two keys may share one.
	PartitionsWritten int
	// Throttled counts the requests the layer throttled, by reason (table
	// and index together; a throttled index write throttles the table's
	// request: back-pressure).
	Throttled map[string]int
}

func (c FleetSweep) withDefaults() FleetSweep {
	if c.Table == "" {
		c.Table = "fleet_sweep"
	}
	if c.JobsPerShard == 0 {
		c.JobsPerShard = 20
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Slots == 0 {
		c.Slots = 8
	}
	if len(c.Shards) == 0 {
		c.Shards = []int{1, 2, 4, 8}
	}
	return c
}

// RunFleetSweep runs the fleet (fleetrun.Run: jobs submitted, worker
// processes started, every job ended, the table read back) through the
// limits layer s once per shard count: the workers' endpoint is the
// layer's URL, so every request they send is metered and may be
// throttled. progress (may be nil) is called after every run. Each run's
// table is deleted when the run has been read.
func RunFleetSweep(ctx context.Context, s *limits.Server, cfg FleetSweep, progress func(queuekit.Progress)) ([]FleetShardRun, error) {
	if s == nil {
		return nil, errors.New("fleet sweep: no limits layer (start one with limitslab.StartLimits)")
	}
	cfg = cfg.withDefaults()
	if cfg.Bin == "" {
		bin, err := leaselab.QueuekitBinary(ctx)
		if err != nil {
			return nil, err
		}
		cfg.Bin = bin
	}
	stamp := time.Now().Format("150405")
	out := make([]FleetShardRun, len(cfg.Shards))
	var mu sync.Mutex
	done := 0
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range cfg.Shards {
		g.Go(func() error {
			table := fmt.Sprintf("%s_k%d_%s", cfg.Table, k, stamp)
			cat, err := catalog.New(gctx, catalog.WithEndpoint(s.URL), catalog.WithTable(table))
			if err != nil {
				return err
			}
			f, err := fleet.New(cat)
			if err != nil {
				return err
			}
			// The table has TTL on (fleet.Reset), and DynamoDB Local sweeps at
			// most catalog.LocalTTLSweepers such tables for as long as they
			// exist: a run's table left behind would take a sweeper from later
			// tables (notebook 06's timers) for good. Its counters are the
			// layer's, so the table goes when the run is read.
			defer func() { _ = f.DeleteTable(context.WithoutCancel(gctx)) }()
			rep, err := fleetrun.Run(gctx, f, fleetrun.Config{Bin: cfg.Bin, Jobs: k * cfg.JobsPerShard, Workers: cfg.Workers, Slots: cfg.Slots,
				Shards: k, Ceiling: -1, Fresh: true})
			if err != nil {
				return fmt.Errorf("fleet sweep, %d shards: %w", k, err)
			}
			r := fleetShardRun(s, k, f.Table(), rep)
			mu.Lock()
			defer mu.Unlock()
			out[i] = r
			done++
			if progress != nil {
				progress(queuekit.Progress{Done: done, Total: len(cfg.Shards), Note: fmt.Sprintf("%d shards", k)})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// fleetShardRun reads the layer's counters for one run's table.
func fleetShardRun(s *limits.Server, k int, table string, rep fleetrun.Report) FleetShardRun {
	stats := s.Stats()
	r := FleetShardRun{Shards: k, Table: table, Report: rep, Throttled: map[string]int{},
		PartitionsWritten: partitionsWrittenOf(stats, table, fleet.IndexDue)}
	for _, ix := range []string{"", fleet.IndexDue} {
		for reason, n := range limits.Totals(stats, table, ix).Throttled {
			r.Throttled[reason] += n
		}
	}
	if l, ok := s.Limits(table, fleet.IndexDue); ok {
		r.IndexPartitions = l.Partitions
		r.IndexLimit = float64(l.Partitions) * l.PartitionLimit.Write
	}
	r.IndexWritesPerSecond = workerSecondsMedian(stats, table, rep.Seconds)
	return r
}

// partitionsWrittenOf counts the partitions of a table's index that took writes.
func partitionsWrittenOf(samples []limits.Sample, table, index string) int {
	seen := map[int]bool{}
	for _, x := range samples {
		if x.Table == table && x.Index == index && x.Partition >= 0 && x.WriteUnits > 0 {
			seen[x.Partition] = true
		}
	}
	return len(seen)
}

// workerSecondsMedian is the median of the due index's write units a
// second over the last `seconds` seconds in which the index took writes
// (the workers' part of the run: the submission comes before it), without
// the first and the last of them, which are partial.
func workerSecondsMedian(samples []limits.Sample, table string, seconds float64) float64 {
	var rows []limits.Sample
	for _, x := range samples {
		if x.Table == table && x.Index == fleet.IndexDue && x.Partition == -1 && x.WriteUnits > 0 {
			rows = append(rows, x)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Second.Before(rows[j].Second) })
	if len(rows) == 0 {
		return 0
	}
	last := rows[len(rows)-1].Second
	from := last.Add(-time.Duration(seconds * float64(time.Second)))
	var ys []float64
	for _, x := range rows {
		if x.Second.After(from) && x.Second.Before(last) {
			ys = append(ys, x.WriteUnits)
		}
	}
	if len(ys) > 1 {
		ys = ys[1:]
	}
	if len(ys) == 0 {
		return rows[len(rows)-1].WriteUnits
	}
	slices.Sort(ys)
	return ys[len(ys)/2]
}

// FleetSweepTable is a fleet sweep as a Markdown table, one row a shard
// count; the header names S, since the throttled figures depend on it.
func FleetSweepTable(runs []FleetShardRun, scale float64) string {
	reasons := map[string]bool{}
	for _, r := range runs {
		for k := range r.Throttled {
			reasons[k] = true
		}
	}
	names := slices.Sorted(maps.Keys(reasons))
	sc := format.Num(scale)
	head := []string{"shards", "index partitions written", "jobs/s (S = " + sc + ")",
		"index write units/s, median (S = " + sc + ")", "index limit/s (S = " + sc + ")"}
	for _, n := range names {
		head = append(head, "throttled: "+n)
	}
	var rows [][]string
	for _, r := range runs {
		row := []string{format.Num(float64(r.Shards)), fmt.Sprintf("%d of %d", r.PartitionsWritten, r.IndexPartitions),
			format.Num(r.Report.JobsPerSecond), format.Num(r.IndexWritesPerSecond), format.Num(r.IndexLimit)}
		for _, n := range names {
			row = append(row, format.Num(float64(r.Throttled[n])))
		}
		rows = append(rows, row)
	}
	return lab.Table(head, rows)
}

// FleetSweepChart draws each run's due-index write units consumed a second
// (the layer's counters), against the seconds since the run's first index
// write, one line a shard count (0 after a run ended), with the index's
// limit (all its partitions) as a dashed line. The title says S.
func FleetSweepChart(s *limits.Server, runs []FleetShardRun, set ...chart.Setting) (*chart.Chart, error) {
	if s == nil || len(runs) == 0 {
		return nil, errors.New("fleet sweep chart: no layer or no runs")
	}
	stats := s.Stats()
	var ys [][]float64
	n := 0
	for _, r := range runs {
		per := indexSeconds(stats, r.Table)
		ys = append(ys, per)
		n = max(n, len(per))
	}
	if n == 0 {
		return nil, errors.New("fleet sweep chart: the layer counted no index writes")
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	series := make([]chart.Series, len(runs))
	for i, r := range runs {
		y := make([]float64, n)
		copy(y, ys[i])
		series[i] = chart.Series{Name: fmt.Sprintf("%d shards", r.Shards), X: xs, Y: y}
	}
	title := fmt.Sprintf("The fleet's due-index write units a second, by shard count (limits divided by S = %s)", format.Num(s.Scale()))
	set = append([]chart.Setting{chart.Target(runs[len(runs)-1].IndexLimit)}, set...)
	return chart.Lines(title, "second of the run", "index write units a second", series, set...)
}

// indexSeconds is a table's due-index write units a second, from its first
// second with index writes to its last.
func indexSeconds(samples []limits.Sample, table string) []float64 {
	return unitsSeconds(samples, table, fleet.IndexDue)
}

// unitsSeconds is a table's (or index's) write units a second, from its
// first second with writes to its last, 0 for a second without.
func unitsSeconds(samples []limits.Sample, table, index string) []float64 {
	at := map[int64]float64{}
	var first, last int64
	for _, x := range samples {
		if x.Table != table || x.Index != index || x.Partition != -1 || x.WriteUnits == 0 {
			continue
		}
		sec := x.Second.Unix()
		if len(at) == 0 || sec < first {
			first = sec
		}
		if len(at) == 0 || sec > last {
			last = sec
		}
		at[sec] += x.WriteUnits
	}
	if len(at) == 0 {
		return nil
	}
	out := make([]float64, 0, last-first+1)
	for sec := first; sec <= last; sec++ {
		out = append(out, at[sec])
	}
	return out
}

// FleetSweepSummary says in one paragraph what a sweep measured, from its
// values: the first and the last run against the index's partitions,
// whether the index's write units a second of the last two runs are level
// (within 15 %) or not, and the throttles of the first and last run by
// reason. The index's median write units a second are the layer's own
// measure; jobs a second include each run's start and its last job.
func FleetSweepSummary(runs []FleetShardRun, scale float64) string {
	if len(runs) < 2 {
		return "✗ a sweep needs two shard counts or more"
	}
	first, prev, last := runs[0], runs[len(runs)-2], runs[len(runs)-1]
	per := format.Num(first.IndexLimit / float64(max(first.IndexPartitions, 1)))
	s := fmt.Sprintf("At S = %s one index partition takes %s write units a second. %d shard: the index took a median %s write units a second "+
		"on %d partition (%s jobs a second); throttled: %s. %d shards: %s write units a second on %d of the %d partitions (%s jobs a second); throttled: %s. ",
		format.Num(scale), per, first.Shards, format.Num(first.IndexWritesPerSecond), first.PartitionsWritten, format.Num(first.Report.JobsPerSecond),
		limitslab.ReasonList(first.Throttled), last.Shards, format.Num(last.IndexWritesPerSecond), last.PartitionsWritten, last.IndexPartitions,
		format.Num(last.Report.JobsPerSecond), limitslab.ReasonList(last.Throttled))
	ratio := last.IndexWritesPerSecond / prev.IndexWritesPerSecond
	switch {
	case first.ThrottledTotal() == 0:
		s += "One shard was not throttled: the fleet on this machine did not reach one partition's limit, so this sweep measured the machine, not the layer (a busy machine: rerun it when it is quieter)."
	case ratio < 1.15 && ratio > 1/1.15:
		s += fmt.Sprintf("From %d to %d shards the index's write units a second stayed level (×%s): once every partition the index has takes writes, more shards add nothing.",
			prev.Shards, last.Shards, format.Sig(ratio, 2))
	default:
		s += fmt.Sprintf("From %d to %d shards the index's write units a second changed by ×%s: not level in this run.", prev.Shards, last.Shards, format.Sig(ratio, 2))
	}
	return s
}

// ThrottledTotal is the number of requests the layer throttled in a run.
func (r FleetShardRun) ThrottledTotal() int {
	n := 0
	for _, v := range r.Throttled {
		n += v
	}
	return n
}
