// Package partitions measures on DynamoDB Local what the capacity model of
// queuekit/capacity assumes about DynamoDB: the request units of a job's life,
// hot partitions and the cost of write sharding. Local never throttles, so
// the 1,000 write units per second a partition serves on AWS cannot be hit
// there; what can be measured is what each request consumes, where the
// writes go, and what reading them back costs.
//
// Four measurements, each a function the capacity notebook calls:
//
//   - Lifecycle runs one job's life (submit, poll, claim, start, finish,
//     view) on a table with a sparse due-time index and returns the capacity
//     DynamoDB reports for each request (ReturnConsumedCapacity INDEXES).
//   - DayLoad computes, for a day of seed 003's traffic, the writes per second
//     the hottest partition key receives: with batch_date as the key every
//     write of the day lands on one key; with a due-time key sharded N ways
//     (key = due minute # shard) the minute's writes spread over N keys, each
//     taking 1/N. The hottest key's rate over 1,000 WCU/s is how many times
//     over the partition limit it runs.
//   - Sample writes one second of that traffic into a real table, keyed both
//     ways, and counts the items under each partition key with Query: the
//     measured distribution (a hash of the job id picks the shard, so the N
//     keys are close to, not exactly, equal).
//   - ScatterGather pays the price of sharding: reading the jobs due in one
//     minute takes one Query per shard, run in parallel (errgroup with a
//     limit), timed on DynamoDB Local against the shard count, with the
//     requests and read units it consumed. Each Query is charged on the size
//     it read rounded up to 4 KB, so N small Queries cost more read units
//     than one big one.
//
// The table has keys pk and sk (strings) and is a catalog opened
// WithItemKeys: catalog owns the client, timeouts, batch writes and Query
// paging; this package only decides the keys.
package partitions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// DefaultTable is the table the measurements write to.
const DefaultTable = "capacity_partitions"

// Key attributes of the table.
const (
	AttrPK = "pk"
	AttrSK = "sk"
)

// Open returns a catalog of the measurement table (keys pk and sk), creating
// the table if needed. opts may set the endpoint; the table defaults to
// DefaultTable.
func Open(ctx context.Context, opts ...catalog.Option) (*catalog.Catalog, error) {
	all := append([]catalog.Option{catalog.WithTable(DefaultTable)}, opts...)
	all = append(all, catalog.WithItemKeys(AttrPK, AttrSK))
	c, err := catalog.New(ctx, all...)
	if err != nil {
		return nil, err
	}
	if err := c.CreateTable(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Shard returns the shard of a job among n: FNV-1a of the job id, mod n.
func Shard(jobID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(jobID))
	return int(h.Sum32() % uint32(n))
}

// Load is one key design's write load over a day.
type Load struct {
	Design              string  // "batch_date" or "due minute # N shards"
	Shards              int     // 0 for batch_date
	KeysPerDay          int     // distinct partition keys written in a day
	HottestKeyWCU       float64 // write units per second on the hottest key, at the peak rate
	TimesOverLimit      float64 // HottestKeyWCU / 1,000
	ShareOfHottestKey   float64 // share of the day's writes the hottest key takes while hot
	WriteUnitsPerDay    float64 // all keys together
	WriteUnitsPerKeyDay float64 // mean per key over the day
}

// DayLoad computes the write load of a day of jobsPerDay jobs, each costing
// wcuPerJob write units on the keyed table or index, at the given peak
// factor, for batch_date (shards = 0) or a due-minute key sharded shards ways.
func DayLoad(jobsPerDay, peakFactor, wcuPerJob float64, shards int) (Load, error) {
	if !(jobsPerDay > 0) || !(peakFactor >= 1) || !(wcuPerJob > 0) || shards < 0 {
		return Load{}, fmt.Errorf("day load: jobs %v, peak factor %v, WCU per job %v, shards %d: want positive jobs and WCU, peak >= 1, shards >= 0",
			jobsPerDay, peakFactor, wcuPerJob, shards)
	}
	peak := jobsPerDay / capacity.SecondsPerDay * peakFactor * wcuPerJob
	l := Load{Shards: shards, WriteUnitsPerDay: jobsPerDay * wcuPerJob}
	if shards == 0 {
		l.Design, l.KeysPerDay, l.HottestKeyWCU, l.ShareOfHottestKey = "batch_date", 1, peak, 1
	} else {
		l.Design = fmt.Sprintf("due minute # %d shards", shards)
		l.KeysPerDay = 24 * 60 * shards
		l.HottestKeyWCU = peak / float64(shards)
		l.ShareOfHottestKey = 1 / float64(shards)
	}
	l.TimesOverLimit = l.HottestKeyWCU / capacity.PartitionWriteUnits
	l.WriteUnitsPerKeyDay = l.WriteUnitsPerDay / float64(l.KeysPerDay)
	return l, nil
}

// DueMinute is the due minute every sampled job shares.
const DueMinute = "2026-05-13T01:00"

// KeyCount is the items measured under one partition key.
type KeyCount struct {
	Key   string
	Items int
}

// SampleResult is one key design measured on a real table.
type SampleResult struct {
	Design        string
	Shards        int // 0 for batch_date
	Jobs          int
	PerKey        []KeyCount // by key
	MaxItems      int
	MeanItems     float64
	HottestKeyWCU float64 // scaled to the real rate: max share × jobs/s × WCU per job
	ReadRCU       float64 // read units the per-key Queries consumed
}

// Imbalance is the hottest key's items over the mean: 1 when perfectly even.
func (r SampleResult) Imbalance() float64 {
	if r.MeanItems == 0 {
		return 0
	}
	return float64(r.MaxItems) / r.MeanItems
}

func jobID(i int) string { return fmt.Sprintf("JOB-%08d", i+1) }

func item(pk, sk string, pad string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: pk},
		AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
	if pad != "" {
		it["payload"] = &types.AttributeValueMemberS{Value: pad}
	}
	return it
}

// sampleKey is the partition key of job i in a design: the batch date, or
// the design's shard of the due minute. The design prefix keeps designs apart
// in one table.
func sampleKey(prefix string, shards int, id string) string {
	if shards == 0 {
		return prefix + "2026-05-13"
	}
	return fmt.Sprintf("%s%s#%02d", prefix, DueMinute, Shard(id, shards))
}

// Sample writes jobs items (one second of traffic at jobsPerSecond, say) for
// batch_date and for each shard count into the table, then counts the items
// under every key the design uses with Query, and scales the hottest key's
// share to the real rate: share × jobsPerSecond × wcuPerJob write units per
// second. Writing the same sample again leaves the same table.
func Sample(ctx context.Context, c *catalog.Catalog, jobs int, shardCounts []int, jobsPerSecond, wcuPerJob float64) ([]SampleResult, error) {
	if jobs < 1 || jobs > 100_000 {
		return nil, fmt.Errorf("sample: %d jobs: want 1 to 100000", jobs)
	}
	designs := append([]int{0}, shardCounts...)
	for _, n := range shardCounts {
		if n < 1 || n > 1000 {
			return nil, fmt.Errorf("sample: %d shards: want 1 to 1000", n)
		}
	}
	var items []map[string]types.AttributeValue
	for _, n := range designs {
		prefix := fmt.Sprintf("sample/%d/", n)
		for i := range jobs {
			id := jobID(i)
			items = append(items, item(sampleKey(prefix, n, id), id, ""))
		}
	}
	if _, err := c.PutItems(ctx, items); err != nil {
		return nil, fmt.Errorf("sample: write %d items: %w", len(items), err)
	}
	var out []SampleResult
	for _, n := range designs {
		prefix := fmt.Sprintf("sample/%d/", n)
		keys := []string{sampleKey(prefix, 0, "")}
		design := "batch_date"
		if n > 0 {
			design = fmt.Sprintf("due minute # %d shards", n)
			keys = keys[:0]
			for s := range n {
				keys = append(keys, fmt.Sprintf("%s%s#%02d", prefix, DueMinute, s))
			}
		}
		r := SampleResult{Design: design, Shards: n, Jobs: jobs}
		for _, k := range keys {
			got, rep, err := c.QueryPartition(ctx, k)
			if err != nil {
				return nil, fmt.Errorf("sample %s: %w", design, err)
			}
			r.PerKey = append(r.PerKey, KeyCount{Key: strings.TrimPrefix(k, prefix), Items: len(got)})
			r.MaxItems = max(r.MaxItems, len(got))
			r.ReadRCU += rep.ConsumedRCU
		}
		r.MeanItems = float64(jobs) / float64(len(keys))
		r.HottestKeyWCU = float64(r.MaxItems) / float64(jobs) * jobsPerSecond * wcuPerJob
		out = append(out, r)
	}
	return out, nil
}

// GatherPoint is the scatter-gather read of one due minute at one shard count.
type GatherPoint struct {
	Shards   int
	Items    int           // items read (all the minute's jobs)
	Requests int           // Query requests (pages), at least one per shard
	RCU      float64       // read units consumed
	Elapsed  time.Duration // median wall time over the runs
	Min, Max time.Duration // fastest and slowest run
}

// GatherConfig sets up ScatterGather.
type GatherConfig struct {
	Shards      []int                   // shard counts to measure, e.g. 1, 2, 4, ..., 64
	Items       int                     // jobs due in the minute (default 1,000)
	PayloadSize int                     // bytes of payload per item (default 200)
	Runs        int                     // timed reads per shard count (default 5); the median is reported
	Parallel    int                     // concurrent Queries at most (default 16)
	Progress    func(queuekit.Progress) // called after each timed read, if set: reads done of all
}

func (g GatherConfig) withDefaults() GatherConfig {
	g.Items = cmp.Or(g.Items, 1000)
	g.PayloadSize = cmp.Or(g.PayloadSize, 200)
	g.Runs = cmp.Or(g.Runs, 5)
	g.Parallel = cmp.Or(g.Parallel, 16)
	return g
}

// ScatterGather writes cfg.Items jobs due in one minute for each shard count
// (key g/N/<minute>#<shard>), then reads the minute back cfg.Runs times with
// one Query per shard, at most cfg.Parallel at once (errgroup: the first
// failure cancels the rest), and reports the median time, requests and read
// units per shard count.
func ScatterGather(ctx context.Context, c *catalog.Catalog, cfg GatherConfig) ([]GatherPoint, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Shards) == 0 || cfg.Items < 1 || cfg.Runs < 1 || cfg.Parallel < 1 || cfg.PayloadSize < 0 || cfg.PayloadSize > 10_000 {
		return nil, fmt.Errorf("scatter-gather: shards %v, items %d, runs %d, parallel %d, payload %d: want shard counts, positive items, runs and parallelism, payload 0 to 10000 bytes",
			cfg.Shards, cfg.Items, cfg.Runs, cfg.Parallel, cfg.PayloadSize)
	}
	pad := strings.Repeat("x", cfg.PayloadSize)
	var items []map[string]types.AttributeValue
	for _, n := range cfg.Shards {
		if n < 1 || n > 1000 {
			return nil, fmt.Errorf("scatter-gather: %d shards: want 1 to 1000", n)
		}
		for i := range cfg.Items {
			id := jobID(i)
			items = append(items, item(gatherKey(n, Shard(id, n)), id, pad))
		}
	}
	if _, err := c.PutItems(ctx, items); err != nil {
		return nil, fmt.Errorf("scatter-gather: write %d items: %w", len(items), err)
	}
	total, done := len(cfg.Shards)*cfg.Runs, 0
	var out []GatherPoint
	for _, n := range cfg.Shards {
		p := GatherPoint{Shards: n}
		times := make([]time.Duration, 0, cfg.Runs)
		for run := range cfg.Runs {
			got, err := gather(ctx, c, n, cfg.Parallel)
			if err != nil {
				return nil, fmt.Errorf("scatter-gather over %d shards, run %d: %w", n, run+1, err)
			}
			if got.Items != cfg.Items {
				return nil, fmt.Errorf("scatter-gather over %d shards: read %d items, wrote %d", n, got.Items, cfg.Items)
			}
			p.Items, p.Requests, p.RCU = got.Items, got.Requests, got.RCU
			times = append(times, got.Elapsed)
			done++
			if cfg.Progress != nil {
				cfg.Progress(queuekit.Progress{Done: done, Total: total})
			}
		}
		slices.Sort(times)
		p.Elapsed, p.Min, p.Max = times[len(times)/2], times[0], times[len(times)-1]
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Shards < out[b].Shards })
	return out, nil
}

func gatherKey(n, shard int) string { return fmt.Sprintf("g/%d/%s#%02d", n, DueMinute, shard) }

// gather reads the minute once: one Query per shard, in parallel.
func gather(ctx context.Context, c *catalog.Catalog, n, parallel int) (GatherPoint, error) {
	reps := make([]catalog.AccessReport, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	began := time.Now()
	for s := range n {
		g.Go(func() error {
			_, rep, err := c.QueryPartition(gctx, gatherKey(n, s))
			reps[s] = rep
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return GatherPoint{}, err
	}
	p := GatherPoint{Shards: n, Elapsed: time.Since(began)}
	for _, r := range reps {
		p.Items += r.Count
		p.Requests += r.Pages
		p.RCU += r.ConsumedRCU
	}
	if p.Requests < n {
		return p, errors.New("fewer requests than shards")
	}
	return p, nil
}
