package leaselab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/limits"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// PoolCeiling is one run of the night executor through a limits layer: Jobs
// one-minute jobs all due at once (a job-minute of 1 ms, so the work is
// negligible and the pool's writes are the bottleneck), Workers in-process
// workers of Slots slots each, on a fresh catalog table, bounded by Timeout.
type PoolCeiling struct {
	Table   string        // catalog table prefix (default "pool_ceiling"); a unique number is appended
	Jobs    int           // default 600, at most 9,999
	Workers int           // default 4
	Slots   int           // default 4
	Timeout time.Duration // default 60 s: the run stops there and reports what it did
}

// PoolCeilingResult is what the run did and what the layer counted.
type PoolCeilingResult struct {
	Scale        float64
	Table        string // the executor's table (<catalog>_exec)
	Jobs, Ended  int    // jobs of the night, jobs ended when the run stopped
	Seconds      float64
	JobsPerSec   float64
	WriteUnits   float64        // write units the layer forwarded on the executor's table during the run
	UnitsPerJob  float64        // WriteUnits / Ended
	Throttled    map[string]int // requests the layer throttled, by reason
	LimitPerKey  float64        // write units a second one partition key may take: 1,000 / S
	PredictedJPS float64        // LimitPerKey / UnitsPerJob
	TimedOut     bool           // the run reached Timeout before every job ended
	Stats        lease.WorkerStats
}

// RunPoolCeiling runs the night executor through the limits layer s: every
// item of a night (pool, jobs, attempts, workers) shares the partition key
// batch_date, so the whole night is bounded by one partition's write
// limit, 1,000 write units a second divided by the layer's scale.
// progress (may be nil) gets the jobs ended about ten times a second.
func RunPoolCeiling(ctx context.Context, s *limits.Server, p PoolCeiling, progress func(queuekit.Progress)) (PoolCeilingResult, error) {
	if s == nil {
		return PoolCeilingResult{}, errors.New("pool ceiling: no limits layer (start one with limitslab.StartLimits)")
	}
	if p.Table == "" {
		p.Table = "pool_ceiling"
	}
	if p.Jobs == 0 {
		p.Jobs = 600
	}
	if p.Workers == 0 {
		p.Workers = 4
	}
	if p.Slots == 0 {
		p.Slots = 4
	}
	if p.Timeout == 0 {
		p.Timeout = 60 * time.Second
	}
	if p.Jobs < 1 || p.Jobs > 9999 || p.Workers < 1 || p.Slots < 1 || p.Timeout < 0 {
		return PoolCeilingResult{}, fmt.Errorf("pool ceiling: want 1 to 9,999 jobs, workers and slots >= 1, got %d jobs, %d workers, %d slots", p.Jobs, p.Workers, p.Slots)
	}
	table := fmt.Sprintf("%s_%d", p.Table, time.Now().UnixNano())
	// The night is loaded on DynamoDB Local directly (loading is not what
	// is measured, and its one transaction would be throttled); the run's
	// workers go through the layer.
	direct, err := executorAt(ctx, s.Target, table)
	if err != nil {
		return PoolCeilingResult{}, err
	}
	ex, err := executorAt(ctx, s.URL, table)
	if err != nil {
		return PoolCeilingResult{}, err
	}
	res := PoolCeilingResult{Scale: s.Scale(), Table: ex.Table(), Jobs: p.Jobs, LimitPerKey: 1000 / s.Scale()}
	const date = "2027-07-01"
	nt := queuekit.Night{BatchDate: date, Window: queuekit.DefaultWindow}
	for i := range p.Jobs {
		id := fmt.Sprintf("JOB-20270701-%04d", i+1)
		nt.Jobs = append(nt.Jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: "01:00#" + id, RequestedWindow: "01:00",
			WorkloadClass: queuekit.ClassETL, RuntimeMinutes: 1, Priority: i % 4, Status: "queued"})
	}
	cfg := lease.Config{Workers: p.Workers * p.Slots, Policy: sim.Barrier, Minute: time.Millisecond, Poll: 100 * time.Millisecond,
		Lease: 30 * time.Second, MaxRetry: lease.DefaultMaxRetry}
	runID, err := direct.Prepare(ctx, nt, cfg)
	if err != nil {
		return res, fmt.Errorf("pool ceiling: prepare: %w", err)
	}
	before := limits.Totals(s.Stats(), res.Table, "")
	rctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	g, gctx := errgroup.WithContext(rctx)
	stats := make([]lease.WorkerStats, p.Workers)
	for i := range p.Workers {
		g.Go(func() error {
			var err error
			stats[i], err = ex.Join(gctx, date, lease.WorkerConfig{Slots: p.Slots, Name: fmt.Sprintf("night%d", i+1), Wait: 10 * time.Second})
			return err
		})
	}
	began := time.Now()
	ended := 0
	runErr := ex.Start(gctx, date, runID) // returns once the pool has left WAITING, conflicts retried
	if runErr == nil {
		runErr = ex.WaitDone(gctx, date, runID, func(pr queuekit.Progress) {
			ended = pr.Done
			if progress != nil {
				progress(pr)
			}
		})
	}
	if runErr == nil {
		ended = p.Jobs
	}
	res.Seconds = time.Since(began).Seconds()
	if runErr != nil {
		cancel() // workers leave
	}
	werr := g.Wait()
	if errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && time.Since(began) >= p.Timeout {
		res.TimedOut, runErr, werr = true, nil, nil
	}
	if werr != nil && !errors.Is(werr, context.Canceled) {
		return res, fmt.Errorf("pool ceiling: worker: %w", werr)
	}
	if runErr != nil {
		return res, fmt.Errorf("pool ceiling: %w", runErr)
	}
	after := limits.Totals(s.Stats(), res.Table, "")
	res.Ended = ended
	res.WriteUnits = after.WriteUnits - before.WriteUnits
	res.Throttled = map[string]int{}
	for k, v := range after.Throttled {
		if d := v - before.Throttled[k]; d > 0 {
			res.Throttled[k] = d
		}
	}
	for _, st := range stats {
		res.Stats.Won += st.Won
		res.Stats.Batches += st.Batches
		res.Stats.Lost += st.Lost
		res.Stats.Finished += st.Finished
		res.Stats.TableWU += st.TableWU
		res.Stats.IndexWU += st.IndexWU
	}
	if res.Seconds > 0 {
		res.JobsPerSec = float64(ended) / res.Seconds
	}
	if ended > 0 {
		res.UnitsPerJob = res.WriteUnits / float64(ended)
		res.PredictedJPS = res.LimitPerKey / res.UnitsPerJob
	}
	return res, nil
}

// executorAt opens an executor on endpoint whose SDK client retries
// throttles as a client that expects them should: the standard retryer
// with more attempts (ThrottleAttempts) and, besides the throttling
// exceptions it retries already, a TransactionCanceledException whose
// only reasons are ThrottlingError or TransactionConflict (the SDK does not
// retry them by itself, and the executor treats the first as a failed
// write, so without this a worker stops at its first one).
func executorAt(ctx context.Context, endpoint, table string) (*lease.Executor, error) {
	cat, err := catalog.New(ctx, catalog.WithEndpoint(endpoint), catalog.WithTable(table),
		catalog.WithClientOptions(func(o *dynamodb.Options) { o.Retryer = ThrottleRetryer() }))
	if err != nil {
		return nil, err
	}
	return lease.New(cat)
}

// ThrottleAttempts is how many times ThrottleRetryer sends a request.
const ThrottleAttempts = 20

// ThrottleRetryer is the SDK's standard retryer with ThrottleAttempts
// attempts, backoff up to 2 s, no retry quota (a throttled run would
// drain it) and transactions cancelled only for throttling retried.
func ThrottleRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = ThrottleAttempts
		o.MaxBackoff = 2 * time.Second
		o.RateLimiter = ratelimit.None
		o.Retryables = append(slices.Clone(o.Retryables), dynamo.RetryThrottledTransactions)
	})
}

// PoolCeilingRows is a result as table rows (metric, value), every
// throttled figure labelled with S.
func PoolCeilingRows(r PoolCeilingResult) [][]string {
	sc := " (S = " + format.Num(r.Scale) + ")"
	rows := [][]string{
		{"jobs ended / jobs", format.Num(float64(r.Ended)) + " / " + format.Num(float64(r.Jobs))},
		{"seconds", format.Num(r.Seconds)},
		{"write units on the table", format.Num(r.WriteUnits)},
		{"write units per job (measured)", format.Num(r.UnitsPerJob)},
		{"one key's write limit, units/s" + sc, format.Num(r.LimitPerKey)},
		{"predicted jobs/s" + sc, format.Num(r.PredictedJPS)},
		{"measured jobs/s" + sc, format.Num(r.JobsPerSec)},
	}
	for k, v := range r.Throttled {
		rows = append(rows, []string{"throttled: " + k + sc, format.Num(float64(v))})
	}
	return rows
}

// PoolCeilingSummary is notebook 05's paragraph under a pool-ceiling run:
// the write limit of the night's one key at the run's scale, the units a
// job cost, the jobs a second that predicts (limit ÷ units a job), what the
// run measured and its share of the prediction, the same on AWS (S times
// it), and what the layer throttled.
func PoolCeilingSummary(r PoolCeilingResult) string {
	S := r.Scale
	return fmt.Sprintf("At S = %s the night's one key takes %s write units a second. The run's writes cost **%s units a job** "+
		"(the layer's count: claims, starts, heartbeats, ends, the pool's and the workers' items), so the prediction is %s ÷ %s = "+
		"**%s jobs a second**; the run measured **%s** (%s of it), %s times that on AWS (S = 1): %s. The layer throttled %s.",
		format.Num(S), format.Num(r.LimitPerKey), format.Num(r.UnitsPerJob), format.Num(r.LimitPerKey), format.Num(r.UnitsPerJob),
		format.Num(r.PredictedJPS), format.Num(r.JobsPerSec), format.Percent(r.JobsPerSec/r.PredictedJPS), format.Num(S),
		format.Num(r.JobsPerSec*S), limitslab.ReasonList(r.Throttled))
}
