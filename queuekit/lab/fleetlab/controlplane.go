package fleetlab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// ControlPlaneKeys are the partition keys of a fleet's control plane that a
// ControlPlane run reads the layer's counts for: the shard items, the
// membership items, and the configuration item every worker reads once.
var ControlPlaneKeys = []string{"SHARD", "MEMBER", "META"}

// ControlPlane is package fleet's shard protocol and nothing else, run
// through a limits layer: Workers in-process workers (fleet.Join, no jobs,
// so every request is the control plane's) on Shards shards of a table of
// its own. It is the one-tier fleet when Workers is the machine count and
// the two-tier fleet's dispatcher tier when Workers is its D (executors
// send no control-plane request to DynamoDB).
type ControlPlane struct {
	Name       string        // a label for the tables ("one tier, N = 64")
	Workers    int           // at least 1
	Shards     int           // 1 to fleet.MaxShards
	ShardLease time.Duration // default 2 s: a look and a renewal every quarter
	Run        time.Duration // how long the workers run, from the first start; default 10 s
	// Stagger starts worker i at i·Stagger, as a fleet rolled out one
	// process at a time (0: all at once).
	Stagger time.Duration
	// Settle is how long after the last worker's start the run counts as
	// settled (Settled in the result); default 3 shard leases.
	Settle time.Duration
	// Aged gives the shard items, before the run, the history a running
	// fleet has (fleet.HistoryMax entries, items near fleetplan.ShardItemBytes),
	// written at DynamoDB Local directly: a worker takes every shard and
	// leaves, again, until every history is full.
	Aged bool
}

// KeyLoad is what the layer counted on one control-plane key's partition
// over a run: units a second and throttled requests by reason, in all and
// once settled. Keys that share a partition (SharedWith) share its counts.
type KeyLoad struct {
	Key        string
	Partition  int
	SharedWith []string
	ReadUnits  float64        // a second, over the run
	WriteUnits float64        // a second, over the run
	Throttled  map[string]int // by reason, the whole run
	Settled    int            // throttled once settled
}

// ControlPlaneResult is one ControlPlane run as the layer and the workers
// counted it.
type ControlPlaneResult struct {
	ControlPlane
	Table       string
	Scale       float64
	Began       time.Time // the first worker's start
	Elapsed     time.Duration
	Totals      limits.Sample // the table's units, requests and throttles by reason
	Keys        []KeyLoad     // one per ControlPlaneKeys, in that order
	Settled     int           // the table's throttled requests once settled
	SettledFor  time.Duration // how long the settled window lasted
	Looks       int           // the workers' reads of the shard items
	Joins       int           // fleet.Join calls (a worker whose join failed is started again)
	FailedJoins int
	FirstError  string        // the first failed join's error, "" when none failed
	Stats       []fleet.Stats // one per Join, in the order they ended
}

// LooksPerSecond is the workers' looks at the shard items a second.
func (r ControlPlaneResult) LooksPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Looks) / r.Elapsed.Seconds()
}

// Key is the load of key ("SHARD", "MEMBER", "META"); the zero KeyLoad when
// the run did not count it.
func (r ControlPlaneResult) Key(key string) KeyLoad {
	for _, k := range r.Keys {
		if k.Key == key {
			return k
		}
	}
	return KeyLoad{Key: key}
}

func (c ControlPlane) withDefaults() ControlPlane {
	if c.ShardLease == 0 {
		c.ShardLease = 2 * time.Second
	}
	if c.Run == 0 {
		c.Run = 10 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = 3 * c.ShardLease
	}
	return c
}

// RunControlPlanes runs every ControlPlane at once through the layer s, each
// on a table of its own (its own partitions and quota in the layer),
// and deletes the tables before it returns. progress, if not nil, is told
// when each run ends.
func RunControlPlanes(ctx context.Context, s *limits.Server, runs []ControlPlane, progress func(queuekit.Progress)) ([]ControlPlaneResult, error) {
	out := make([]ControlPlaneResult, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, c := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = c.Execute(ctx, s)
			mu.Lock()
			done++
			if progress != nil {
				progress(queuekit.Progress{Done: done, Total: len(runs), Note: c.Name})
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Execute runs the control plane through the layer s on a fresh table
// (created and aged at s.Target, DynamoDB Local, directly) and deletes the
// table before it returns: DynamoDB Local sweeps TTL on at most 7 tables.
func (c ControlPlane) Execute(ctx context.Context, s *limits.Server) (ControlPlaneResult, error) {
	c = c.withDefaults()
	if c.Workers < 1 || c.Shards < 1 || c.Shards > fleet.MaxShards || c.ShardLease < 100*time.Millisecond || c.Run < c.ShardLease {
		return ControlPlaneResult{}, fmt.Errorf("control plane %q: %d workers on %d shards, shard lease %s, run %s: want at least 1 worker, 1 to %d shards, a lease of at least 100 ms and a run of at least one lease",
			c.Name, c.Workers, c.Shards, c.ShardLease, c.Run, fleet.MaxShards)
	}
	name := fmt.Sprintf("cp_%d", time.Now().UnixNano()) // the fleet's table is name + "_fleet"
	direct, err := catalog.New(ctx, catalog.WithEndpoint(s.Target), catalog.WithTable(name))
	if err != nil {
		return ControlPlaneResult{}, err
	}
	fd, err := fleet.New(direct, fleet.WithLease(c.ShardLease), fleet.WithShardLease(c.ShardLease))
	if err != nil {
		return ControlPlaneResult{}, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = fd.DeleteTable(dctx) // the fleet's table (fd.Table()), not the catalog's
	}()
	if err := fd.Reset(ctx, c.Shards); err != nil {
		return ControlPlaneResult{}, fmt.Errorf("control plane %q: %w", c.Name, err)
	}
	if c.Aged {
		if err := ageShards(ctx, fd, c.Shards, c.ShardLease); err != nil {
			return ControlPlaneResult{}, fmt.Errorf("control plane %q: ageing the shard items: %w", c.Name, err)
		}
	}
	cat, err := catalog.New(ctx, catalog.WithEndpoint(s.URL), catalog.WithTable(name))
	if err != nil {
		return ControlPlaneResult{}, err
	}
	f, err := fleet.New(cat, fleet.WithLease(c.ShardLease), fleet.WithShardLease(c.ShardLease))
	if err != nil {
		return ControlPlaneResult{}, err
	}
	r := ControlPlaneResult{ControlPlane: c, Table: f.Table(), Scale: s.Scale()}
	c.join(ctx, f, &r)
	if err := ctx.Err(); err != nil {
		return r, err
	}
	return r, r.count(s)
}

// join runs the workers for c.Run and records in r when they began, how
// long they ran, their looks, stats, the joins and the failed ones.
func (c ControlPlane) join(ctx context.Context, f *fleet.Fleet, r *ControlPlaneResult) {
	rctx, cancel := context.WithTimeout(ctx, c.Run)
	defer cancel()
	r.Began = time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range c.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-rctx.Done():
				return
			case <-time.After(time.Duration(i) * c.Stagger):
			}
			// A worker whose Join fails (its join write throttled past the
			// SDK's attempts) is started again, as a supervisor would.
			for rctx.Err() == nil {
				st, err := f.Join(rctx, fleet.WorkerConfig{Name: fmt.Sprintf("w%04d", i), Slots: 1, Shards: c.Shards, Work: fleet.Sleep(0)})
				mu.Lock()
				r.Looks += st.Rebalances
				r.Joins++
				r.Stats = append(r.Stats, st)
				if err != nil && rctx.Err() == nil {
					r.FailedJoins++
					if r.FirstError == "" {
						r.FirstError = err.Error()
					}
				}
				mu.Unlock()
				select {
				case <-rctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	r.Elapsed = time.Since(r.Began)
}

// count reads the layer's samples of the run's table: its totals, each
// control-plane key's partition (limits.Layer.PartitionOf), and the
// throttles once settled.
func (r *ControlPlaneResult) count(s *limits.Server) error {
	samples := s.Stats()
	r.Totals = limits.Totals(samples, r.Table, "")
	settled := r.Began.Add(time.Duration(max(r.Workers-1, 0))*r.Stagger + r.Settle)
	r.SettledFor = max(0, r.Elapsed-settled.Sub(r.Began))
	for _, x := range samples {
		if x.Table == r.Table && x.Index == "" && x.Partition == -1 && !x.Second.Before(settled.Truncate(time.Second).Add(time.Second)) {
			r.Settled += x.ThrottledTotal()
		}
	}
	parts := map[string]int{}
	for _, pk := range ControlPlaneKeys {
		p, err := s.PartitionOf(r.Table, "", &types.AttributeValueMemberS{Value: pk})
		if err != nil {
			return fmt.Errorf("control plane %q (%d joins, %d failed: %s): %w", r.Name, r.Joins, r.FailedJoins, r.FirstError, err)
		}
		parts[pk] = p
	}
	secs := r.Elapsed.Seconds()
	for _, pk := range ControlPlaneKeys {
		k := KeyLoad{Key: pk, Partition: parts[pk], Throttled: map[string]int{}}
		for _, other := range ControlPlaneKeys {
			if other != pk && parts[other] == parts[pk] {
				k.SharedWith = append(k.SharedWith, other)
			}
		}
		for _, x := range samples {
			if x.Table != r.Table || x.Index != "" || x.Partition != k.Partition {
				continue
			}
			k.ReadUnits += x.ReadUnits / secs
			k.WriteUnits += x.WriteUnits / secs
			for reason, n := range x.Throttled {
				k.Throttled[reason] += n
			}
			if !x.Second.Before(settled.Truncate(time.Second).Add(time.Second)) {
				k.Settled += x.ThrottledTotal()
			}
		}
		r.Keys = append(r.Keys, k)
	}
	return nil
}

// ageShards gives the k shard items the history a fleet that has run a
// while has (fleet.HistoryMax entries or more): one worker joins, takes
// every shard, leaves (releasing them), and again, each round adding an
// acquire and a release to every shard's history.
func ageShards(ctx context.Context, f *fleet.Fleet, k int, lease time.Duration) error {
	deadline := time.Now().Add(90 * time.Second)
	for round := 0; ; round++ {
		st, err := f.ShardStates(ctx)
		if err != nil {
			return err
		}
		shortest := fleet.HistoryMax + 1
		for _, x := range st {
			shortest = min(shortest, len(x.History))
		}
		if len(st) == k && shortest >= fleet.HistoryMax {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %d rounds the shortest history has %d entries, want %d", round, shortest, fleet.HistoryMax)
		}
		jctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := f.Join(jctx, fleet.WorkerConfig{Name: "ager", Slots: 1, Shards: k, Work: fleet.Sleep(0)})
			done <- err
		}()
		for all := false; !all; {
			time.Sleep(lease / 8)
			st, err := f.ShardStates(ctx)
			if err != nil {
				cancel()
				return err
			}
			all = len(st) == k
			for _, x := range st {
				all = all && x.Holder == "ager"
			}
			if !all && time.Now().After(deadline) {
				cancel()
				return fmt.Errorf("the ageing worker took %d of %d shards in time", len(st), k)
			}
		}
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
}

// ControlPlaneRows is a row per run and control-plane key: the run, the
// key and the keys sharing its partition, read and write units a second
// against a scaled partition's limits, and throttled requests by reason.
func ControlPlaneRows(results []ControlPlaneResult) [][]string {
	var rows [][]string
	for _, r := range results {
		for _, k := range r.Keys {
			key := "pk = " + k.Key
			if len(k.SharedWith) > 0 {
				key += " (shares its partition with " + strings.Join(k.SharedWith, ", ") + ")"
			}
			rows = append(rows, []string{r.Name, key, format.Int(k.Partition), format.Num(k.ReadUnits), format.Num(k.WriteUnits),
				format.Int(throttledSum(k.Throttled)), reasonsPlain(k.Throttled)})
		}
	}
	return rows
}

// ControlPlaneHeaders are ControlPlaneRows' headers for a layer at scale.
func ControlPlaneHeaders(scale float64) []string {
	return []string{"run", "key", "partition", fmt.Sprintf("read units/s (a partition: %s)", format.Num(3000/scale)),
		fmt.Sprintf("write units/s (a partition: %s)", format.Num(1000/scale)), "throttled", "by reason"}
}

// ShowControlPlanes shows each run's key rows and a line per run: requests,
// throttled by reason, looks a second against the schedule, failed joins.
func ShowControlPlanes(results []ControlPlaneResult) {
	if len(results) == 0 {
		return
	}
	lab.ShowTable(ControlPlaneHeaders(results[0].Scale), ControlPlaneRows(results))
	var lines []string
	for _, r := range results {
		lines = append(lines, fmt.Sprintf("- **%s** (%s workers on %s shards, %s s): %s requests, **%s throttled** (%s); %s looks a second (schedule %s); %s of %s joins failed and were started again",
			format.EscapeMarkdown(r.Name), format.Int(r.Workers), format.Int(r.Shards), format.Num(r.Elapsed.Seconds()), format.Int(r.Totals.Requests),
			format.Int(r.Totals.ThrottledTotal()), limitslab.ReasonList(r.Totals.Throttled), format.Num(r.LooksPerSecond()),
			format.Num(float64(r.Workers)*4/r.ShardLease.Seconds()), format.Int(r.FailedJoins), format.Int(r.Joins)))
	}
	lab.Markdown(strings.Join(lines, "\n"))
}

func throttledSum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// reasonsPlain is "none" or "Reason n, Reason n" in order, for a table
// cell (ShowTable escapes it).
func reasonsPlain(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+format.Int(m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// ControlPlaneVerdict is the Markdown under a side-by-side run: for each
// run, the throttles on pk = SHARD's and pk = MEMBER's partitions by
// reason, and the table's in all.
func ControlPlaneVerdict(results []ControlPlaneResult) string {
	var lines []string
	for _, r := range results {
		sh, mb := r.Key("SHARD"), r.Key("MEMBER")
		lines = append(lines, fmt.Sprintf("- **%s**: pk = SHARD's partition throttled **%s** requests (%s), pk = MEMBER's **%s** (%s); the table **%s** in all. %s",
			format.EscapeMarkdown(r.Name), format.Int(throttledSum(sh.Throttled)), limitslab.ReasonList(sh.Throttled),
			format.Int(throttledSum(mb.Throttled)), limitslab.ReasonList(mb.Throttled), format.Int(r.Totals.ThrottledTotal()), reached(r)))
	}
	return strings.Join(lines, "\n")
}

// WallShare is the share of a control plane's requests throttled from
// which its verdict says it hit the wall (1 %); below it, some throttles
// are a brush with the limit, not a wall.
const WallShare = 0.01

// reached says what run r reached, from its own counts: the wall (at
// least WallShare of its requests throttled), a brush with it, or nothing.
func reached(r ControlPlaneResult) string {
	n, req := r.Totals.ThrottledTotal(), r.Totals.Requests
	switch {
	case req > 0 && float64(n) >= WallShare*float64(req):
		return fmt.Sprintf("It hit the wall: %s of its %s requests were refused.", format.Percent(float64(n)/float64(req)), format.Int(req))
	case n > 0:
		return fmt.Sprintf("It only brushed the limit: %s of %s requests refused, at %s looks a second; on a busy machine the workers send fewer looks than the layer needs, and it throttles only what arrives: run the cell again on a quieter one.",
			format.Int(n), format.Int(req), format.Num(r.LooksPerSecond()))
	default:
		return fmt.Sprintf("It throttled nothing in %s requests.", format.Int(req))
	}
}
