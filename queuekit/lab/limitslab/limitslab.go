package limitslab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// StartLimits starts a limits layer in-process, on a free loopback port, in
// front of the DynamoDB Local the workshop set in AWS_ENDPOINT_URL_DYNAMODB,
// with every limit divided by scale. Close it when the cell is done.
func StartLimits(ctx context.Context, scale float64) (*limits.Server, error) {
	target := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	if target == "" {
		return nil, errors.New("AWS_ENDPOINT_URL_DYNAMODB is not set: start the workshop with make workshop (or make dynamodb and export it)")
	}
	return limits.Start(ctx, target, "", limits.WithScale(scale))
}

// ShardRun is one HotLoad at one shard count: what the client saw and what
// the layer counted (throttled requests by reason, retries included).
type ShardRun struct {
	Shards    int
	Table     string
	Result    HotLoadResult
	Throttled map[string]int // requests the layer throttled, by reason
	// Partitions is how many of the table's partitions took writes: the
	// shards' keys hash onto partitions, and two keys may share one.
	Partitions int
}

// RunShardSweep runs h once per shard count, each on a fresh table (named
// h.Table + "_k" + shards + "_" + the time of day, hhmmss) so that no run inherits another's
// traffic, and reads the layer's counters after each run. progress (may be
// nil) is called after every run.
func RunShardSweep(ctx context.Context, s *limits.Server, h HotLoad, shards []int, progress func(queuekit.Progress)) ([]ShardRun, error) {
	if s == nil {
		return nil, errors.New("shard sweep: no limits layer (start one with limitslab.StartLimits)")
	}
	base := h.Table
	if base == "" {
		base = "hot"
	}
	h.Endpoint = s.URL
	var out []ShardRun
	for i, k := range shards {
		h.Shards = k
		h.Table = fmt.Sprintf("%s_k%d_%s", base, k, time.Now().Format("150405"))
		res, err := RunHotLoad(ctx, h)
		if err != nil {
			return out, fmt.Errorf("shard sweep, %d shards: %w", k, err)
		}
		stats := s.Stats()
		tot := limits.Totals(stats, h.Table, "")
		out = append(out, ShardRun{Shards: k, Table: h.Table, Result: res, Throttled: tot.Throttled, Partitions: partitionsWritten(stats, h.Table)})
		if progress != nil {
			progress(queuekit.Progress{Done: i + 1, Total: len(shards), Note: fmt.Sprintf("%d shards", k)})
		}
	}
	return out, nil
}

// partitionsWritten counts the table's partitions that took writes.
func partitionsWritten(samples []limits.Sample, table string) int {
	seen := map[int]bool{}
	for _, x := range samples {
		if x.Table == table && x.Index == "" && x.Partition >= 0 && x.WriteUnits > 0 {
			seen[x.Partition] = true
		}
	}
	return len(seen)
}

// ThrottledTotal is the number of requests the layer throttled in a run.
func (r ShardRun) ThrottledTotal() int {
	n := 0
	for _, v := range r.Throttled {
		n += v
	}
	return n
}

// ShardSweepTable is a sweep as a Markdown table: one row a shard count,
// with the writes landed a second, the requests the layer throttled (by
// reason), the writes that failed after the SDK's retries and the latency
// percentiles; the header names S, since every throttled figure depends on it.
func ShardSweepTable(runs []ShardRun, scale float64) string {
	reasons := map[string]bool{}
	for _, r := range runs {
		for k := range r.Throttled {
			reasons[k] = true
		}
	}
	names := slices.Sorted(maps.Keys(reasons))
	head := []string{"shards", "partitions written", "writes landed/s (S = " + format.Num(scale) + ")", "failed after retries"}
	for _, n := range names {
		head = append(head, "throttled: "+n)
	}
	head = append(head, "p50 ms", "p99 ms")
	var rows [][]string
	for _, r := range runs {
		row := []string{format.Num(float64(r.Shards)), format.Num(float64(r.Partitions)), format.Num(r.Result.Throughput), format.Num(float64(r.Result.Failed))}
		for _, n := range names {
			row = append(row, format.Num(float64(r.Throttled[n])))
		}
		row = append(row, format.Num(ms(r.Result.P50)), format.Num(ms(r.Result.P99)))
		rows = append(rows, row)
	}
	return lab.Table(head, rows)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// retryQuota names the SDK's own refusal to retry: the standard retryer's
// token bucket ran dry, so it gave up without sending the retry.
const retryQuota = "SDK retry quota exhausted"

// failureName names a write that failed after its retries, for a table.
func failureName(err error) string {
	var q ratelimit.QuotaExceededError
	if errors.As(err, &q) {
		return retryQuota
	}
	r := reasonOf(err)
	if strings.HasPrefix(r, "error: ") {
		return "other error"
	}
	return r
}

// ReasonList names throttled requests by reason for a sentence, e.g.
// "TableWriteKeyRangeThroughputExceeded: 1,234", reasons in order; "none"
// when nothing was throttled.
func ReasonList(by map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, "`"+k+"`: "+format.Num(float64(by[k])))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// ShardSweepSummary is notebook 08's paragraph under a shard sweep that
// offered offered writes a second to a table at scale S (every limit divided
// by S): what one key landed and what the most keys landed, the shards the
// offer needs (offered ÷ the partition's 1,000 / S write units, rounded up,
// the same whatever S is), and how many partitions the first shard count
// that covers it reached.
func ShardSweepSummary(runs []ShardRun, offered, S float64) string {
	if len(runs) == 0 {
		return "The sweep ran no shard count."
	}
	need := math.Ceil(offered / (1000 / S))
	first, last := runs[0], runs[len(runs)-1]
	cover := last
	for _, r := range runs {
		if float64(r.Shards) >= need {
			cover = r
			break
		}
	}
	return fmt.Sprintf("One key landed %s writes a second, %s keys %s (offered %s, S = %s). The shards needed are offered ÷ limit rounded up = **%s**, "+
		"whatever S is; K = %s reached %s partitions.", format.Num(first.Result.Throughput), format.Num(float64(last.Shards)),
		format.Num(last.Result.Throughput), format.Num(offered), format.Num(S), format.Num(need), format.Num(float64(cover.Shards)), format.Num(float64(cover.Partitions)))
}
