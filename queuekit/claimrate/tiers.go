package claimrate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// The fleets CompareTiers measures.
const (
	OneTier = "one tier (fleet workers own shards)"
	TwoTier = "two tiers (dispatchers + SQS + executors)"
)

// TiersConfig is one comparison of the one-tier fleet (package fleet:
// every worker owns shards and claims from them) with the two-tier fleet
// (package dispatch: D dispatchers own the shards and send due jobs to an
// SQS queue; W executors receive and claim), at the same worker counts:
// W fleet workers against W executors, S slots each, the same K shards and
// the same jobs. Both run in this process (goroutines, one client each
// tier), so neither pays for processes the other does not.
type TiersConfig struct {
	// Workers are the counts W compared (e.g. 2 and 8).
	Workers []int
	// Dispatchers D of the two tiers (default 2).
	Dispatchers int
	// Slots per worker S (default 4), Shards K (default 16), Jobs per run
	// (default 2,000), Rounds (default 3).
	Slots, Shards, Jobs, Rounds int
	// Queue names the SQS queue each two-tier run creates afresh (a
	// suffix is added) and deletes after it.
	Queue string
	// Progress, when set, is called after every run.
	Progress func(queuekit.Progress)
}

func (c TiersConfig) withDefaults() TiersConfig {
	c.Dispatchers = cmp.Or(c.Dispatchers, 2)
	c.Slots = cmp.Or(c.Slots, 4)
	c.Shards = cmp.Or(c.Shards, 16)
	c.Jobs = cmp.Or(c.Jobs, 2000)
	c.Rounds = cmp.Or(c.Rounds, 3)
	c.Queue = cmp.Or(c.Queue, "queuekit-tiers")
	return c
}

// TierRow is one configuration's rounds.
type TierRow struct {
	Fleet   string
	Workers int
	Slots   int
	// JobsPerSecond of each round (all jobs submitted, then the fleet
	// started; timed from the start to the last job's end, as the workers
	// count their ends); Median, Min, Max of them.
	JobsPerSecond    []float64
	Median, Min, Max float64
	// WritesPerJob is every DynamoDB write request (claims, heartbeats,
	// ends, refused ones, shard and membership leases) per job, submit
	// excluded; TableWUPerJob, IndexWUPerJob the write units DynamoDB
	// reported for them; averages over the rounds.
	WritesPerJob, TableWUPerJob, IndexWUPerJob float64
	// LostPerWon is refused claims per claim won, over all rounds.
	LostPerWon float64
	// Dispatched is, for the two tiers, messages sent per job (above 1:
	// resends).
	Dispatched float64
}

// tierRun is what one run measured.
type tierRun struct {
	rate                  float64
	writes, table, index  float64
	won, lost, dispatched int
}

// CompareTiers runs the comparison on the catalog's endpoint (the fleet on
// <catalog>_fleet, made afresh every run) and the SQS client's.
func CompareTiers(ctx context.Context, cat *catalog.Catalog, queues *sqsqueue.Client, cfg TiersConfig) ([]TierRow, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Workers) == 0 || queues == nil {
		return nil, fmt.Errorf("claimrate: want worker counts and an SQS client (got %v)", cfg.Workers)
	}
	type key struct {
		fleet   string
		workers int
	}
	rows := map[key]*TierRow{}
	won, lost := map[key]int{}, map[key]int{}
	var order []key
	runs, total := 0, cfg.Rounds*len(cfg.Workers)*2
	for round := 1; round <= cfg.Rounds; round++ {
		for _, w := range cfg.Workers {
			for _, kind := range []string{OneTier, TwoTier} {
				k := key{kind, w}
				if rows[k] == nil {
					rows[k] = &TierRow{Fleet: kind, Workers: w, Slots: cfg.Slots}
					order = append(order, k)
				}
				var run tierRun
				var err error
				if kind == OneTier {
					run, err = oneTier(ctx, cat, w, cfg)
				} else {
					run, err = twoTier(ctx, cat, queues, w, cfg, fmt.Sprintf("%s-%d-%d-%d", cfg.Queue, round, w, time.Now().UnixNano()%1e6))
				}
				if err != nil {
					return nil, fmt.Errorf("round %d, %s, %d workers: %w", round, kind, w, err)
				}
				r, n := rows[k], float64(cfg.Jobs)*float64(cfg.Rounds)
				r.JobsPerSecond = append(r.JobsPerSecond, run.rate)
				r.WritesPerJob += run.writes / n
				r.TableWUPerJob += run.table / n
				r.IndexWUPerJob += run.index / n
				r.Dispatched += float64(run.dispatched) / n
				won[k], lost[k] = won[k]+run.won, lost[k]+run.lost
				runs++
				if cfg.Progress != nil {
					cfg.Progress(queuekit.Progress{Done: runs, Total: total,
						Note: fmt.Sprintf("round %d: %s, %d workers x %d slots: %.0f jobs/s", round, kind, w, cfg.Slots, run.rate)})
				}
			}
		}
	}
	out := make([]TierRow, 0, len(order))
	for _, k := range order {
		r := rows[k]
		r.Median, r.Min, r.Max = Median(r.JobsPerSecond), slices.Min(r.JobsPerSecond), slices.Max(r.JobsPerSecond)
		if won[k] > 0 {
			r.LostPerWon = float64(lost[k]) / float64(won[k])
		}
		out = append(out, *r)
	}
	return out, nil
}

// freshFleet resets the fleet table to K shards and submits the jobs, all
// due now, each on its own user (so listAllJobs stays one partition each).
func freshFleet(ctx context.Context, cat *catalog.Catalog, cfg TiersConfig) (*fleet.Fleet, error) {
	f, err := fleet.New(cat)
	if err != nil {
		return nil, err
	}
	if err := f.Reset(ctx, cfg.Shards); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	jobs := make([]fleet.Job, cfg.Jobs)
	for i := range jobs {
		jobs[i] = fleet.Job{UserID: fmt.Sprintf("user-%03d", i%100), JobID: fmt.Sprintf("job-%06d", i), JobType: "report", ScheduledAt: now, MaxRetry: 3}
	}
	if _, err := f.SubmitJobs(ctx, jobs); err != nil {
		return nil, err
	}
	return f, nil
}

// ends counts the ends reported by a tier's workers until it reaches n.
type ends struct {
	mu   sync.Mutex
	by   map[string]int
	sum  int
	n    int
	done chan struct{}
}

func newEnds(n int) *ends { return &ends{by: map[string]int{}, n: n, done: make(chan struct{})} }

func (e *ends) report(name string, count int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sum += count - e.by[name]
	e.by[name] = count
	if e.sum >= e.n && e.done != nil {
		close(e.done)
		e.done = nil
	}
}

func (e *ends) wait(ctx context.Context) error {
	e.mu.Lock()
	d := e.done
	e.mu.Unlock()
	if d == nil {
		return nil
	}
	select {
	case <-d:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// finish waits until every job has ended, stops the run's processes
// (stop) and waits for them (g); the run's rate is the jobs over the time
// from began until the last end. A process's error comes first, then the
// wait's.
func (e *ends) finish(ctx context.Context, began time.Time, stop context.CancelFunc, g *errgroup.Group) (tierRun, error) {
	werr := e.wait(ctx)
	elapsed := time.Since(began)
	stop()
	if err := g.Wait(); err != nil {
		return tierRun{}, err
	}
	if werr != nil {
		return tierRun{}, werr
	}
	return tierRun{rate: float64(e.n) / elapsed.Seconds()}, nil
}

func oneTier(ctx context.Context, cat *catalog.Catalog, w int, cfg TiersConfig) (tierRun, error) {
	f, err := freshFleet(ctx, cat, cfg)
	if err != nil {
		return tierRun{}, err
	}
	e := newEnds(cfg.Jobs)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	stats := make([]fleet.Stats, w)
	var g errgroup.Group
	began := time.Now()
	for i := range w {
		name := fmt.Sprintf("worker-%d", i+1)
		g.Go(func() error {
			var err error
			stats[i], err = f.Join(runCtx, fleet.WorkerConfig{Name: name, Slots: cfg.Slots, Shards: cfg.Shards, Work: fleet.Sleep(0), StatsEvery: 50 * time.Millisecond,
				OnStats: func(s fleet.Stats) { e.report(name, s.Succeeded) }})
			return err
		})
	}
	run, err := e.finish(ctx, began, stop, &g)
	if err != nil {
		return tierRun{}, err
	}
	for _, s := range stats {
		run.writes += float64(s.Writes)
		run.table += s.TableWU
		run.index += s.IndexWU
		run.won += s.Won
		run.lost += s.Lost
	}
	return run, nil
}

func twoTier(ctx context.Context, cat *catalog.Catalog, queues *sqsqueue.Client, w int, cfg TiersConfig, queue string) (tierRun, error) {
	f, err := freshFleet(ctx, cat, cfg)
	if err != nil {
		return tierRun{}, err
	}
	q, err := dispatch.CreateQueue(ctx, queues, queue, 10*time.Second)
	if err != nil {
		return tierRun{}, err
	}
	defer func() { _ = queues.Delete(context.WithoutCancel(ctx), q) }()
	// No jittered first look: the one tier's workers join at once, and the
	// rate is timed from the start of both.
	tier, err := dispatch.New(f, queues, q, dispatch.WithWait(time.Second), dispatch.WithFirstLook(0))
	if err != nil {
		return tierRun{}, err
	}
	e := newEnds(cfg.Jobs)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	disp := make([]fleet.Stats, cfg.Dispatchers)
	execs := make([]dispatch.ExecutorStats, w)
	var g errgroup.Group
	began := time.Now()
	for i := range cfg.Dispatchers {
		g.Go(func() error {
			var err error
			disp[i], err = tier.Dispatch(runCtx, dispatch.DispatcherConfig{Name: fmt.Sprintf("dispatcher-%d", i+1), Shards: cfg.Shards})
			return err
		})
	}
	for i := range w {
		name := fmt.Sprintf("executor-%d", i+1)
		g.Go(func() error {
			var err error
			execs[i], err = tier.Execute(runCtx, dispatch.ExecutorConfig{Name: name, Slots: cfg.Slots, Work: fleet.Sleep(0), StatsEvery: 50 * time.Millisecond,
				OnStats: func(s dispatch.ExecutorStats) { e.report(name, s.Succeeded) }})
			return err
		})
	}
	run, err := e.finish(ctx, began, stop, &g)
	if err != nil {
		return tierRun{}, err
	}
	for _, s := range disp {
		run.writes += float64(s.Writes)
		run.table += s.TableWU
		run.index += s.IndexWU
		run.dispatched += s.Dispatched
	}
	for _, s := range execs {
		run.writes += float64(s.Writes)
		run.table += s.TableWU
		run.index += s.IndexWU
		run.won += s.Won
		run.lost += s.Refused
	}
	return run, nil
}
