package limitslab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// LimitsChart draws a table's (or, with index, a GSI's) counters from a
// limits layer, one point a second: write and read units consumed and
// throttled requests by reason. The title says S, since every throttled
// figure depends on it.
func LimitsChart(samples []limits.Sample, table, index string, scale float64, set ...chart.Setting) (*chart.Chart, error) {
	var rows []limits.Sample
	reasons := map[string]bool{}
	for _, s := range samples {
		if s.Table == table && s.Index == index && s.Partition == -1 {
			rows = append(rows, s)
			for r := range s.Throttled {
				reasons[r] = true
			}
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no counters for table %q index %q: run a load through the layer first", table, index)
	}
	t0 := rows[0].Second
	xs := make([]float64, 0, len(rows))
	for s := t0; !s.After(rows[len(rows)-1].Second); s = s.Add(time.Second) {
		xs = append(xs, s.Sub(t0).Seconds())
	}
	at := map[float64]limits.Sample{}
	for _, r := range rows {
		at[r.Second.Sub(t0).Seconds()] = r
	}
	series := []chart.Series{{Name: "write units consumed"}, {Name: "read units consumed"}}
	names := slices.Sorted(maps.Keys(reasons))
	for _, r := range names {
		series = append(series, chart.Series{Name: "throttled: " + r})
	}
	for _, x := range xs {
		r := at[x]
		series[0].Y = append(series[0].Y, r.WriteUnits)
		series[1].Y = append(series[1].Y, r.ReadUnits)
		for i, name := range names {
			series[2+i].Y = append(series[2+i].Y, float64(r.Throttled[name]))
		}
	}
	for i := range series {
		series[i].X = xs
	}
	name := table
	if index != "" {
		name += " / " + index
	}
	title := fmt.Sprintf("%s per second (limits divided by S = %s)", name, strconv.FormatFloat(scale, 'f', -1, 64))
	return chart.Lines(title, "second", "units or requests per second", series, set...)
}

// HotLoad is a write load for a limits layer: Rate writes a second for
// Seconds, each on one of Shards partition keys (Key + "#" + shard,
// shard = write number mod Shards), from Workers goroutines, with the
// SDK's standard retryer (MaxAttempts tries a write, default 3 as the
// SDK's; 1 means no retry).
type HotLoad struct {
	Endpoint    string // the layer's URL
	Table       string // created on demand (pk, sk strings) when missing
	Key         string // partition key prefix (default "2026-05-13")
	Seconds     float64
	Rate        float64
	Shards      int
	Workers     int // default 32
	MaxAttempts int // default 3
}

// HotLoadResult is what a HotLoad did: writes offered and landed, the
// writes that failed after their retries by reason, and the latency of
// the writes that landed (retries included).
type HotLoadResult struct {
	Offered, Landed, Failed int
	Attempts                int            // requests sent, retries included
	FailedBy                map[string]int // final failures by throttling reason (or exception)
	Throughput              float64        // writes landed per second of the run
	P50, P95, P99           time.Duration
}

// RunHotLoad runs a HotLoad and returns what happened.
func RunHotLoad(ctx context.Context, h HotLoad) (HotLoadResult, error) {
	if h.Key == "" {
		h.Key = "2026-05-13"
	}
	if h.Workers <= 0 {
		h.Workers = 32
	}
	if h.MaxAttempts <= 0 {
		h.MaxAttempts = 3
	}
	if h.Shards < 1 || !(h.Rate > 0) || !(h.Seconds > 0) || h.Table == "" || h.Endpoint == "" {
		return HotLoadResult{}, fmt.Errorf("hot load: want Endpoint, Table, Shards >= 1, Rate > 0 and Seconds > 0, got %+v", h)
	}
	db := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(h.Endpoint), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), Logger: logging.Nop{},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = h.MaxAttempts })})
	if err := ensureTable(ctx, db, h.Table); err != nil {
		return HotLoadResult{}, err
	}
	n := int(h.Rate * h.Seconds)
	jobs := make(chan int)
	var mu sync.Mutex
	res := HotLoadResult{Offered: n, FailedBy: map[string]int{}}
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range h.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				t := time.Now()
				out, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.Table), Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", h.Key, i%h.Shards)},
					"sk": &types.AttributeValueMemberS{Value: fmt.Sprintf("JOB#%09d", i)}}})
				d := time.Since(t)
				mu.Lock()
				if err == nil {
					res.Landed++
					lat = append(lat, d)
					if r, ok := retry.GetAttemptResults(out.ResultMetadata); ok {
						res.Attempts += len(r.Results)
					}
				} else {
					res.Failed++
					res.Attempts += h.MaxAttempts
					res.FailedBy[failureName(err)]++
				}
				mu.Unlock()
			}
		}()
	}
	pace(ctx, start, n, h.Rate, jobs)
	wg.Wait()
	res.Throughput = float64(res.Landed) / time.Since(start).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pick := func(q float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(q*float64(len(lat))))]
	}
	res.P50, res.P95, res.P99 = pick(0.50), pick(0.95), pick(0.99)
	return res, ctx.Err()
}

// reasonOf names a failed write: its first throttling reason, else its
// exception.
func reasonOf(err error) string {
	var pte *types.ProvisionedThroughputExceededException
	var te *types.ThrottlingException
	switch {
	case errors.As(err, &pte) && len(pte.ThrottlingReasons) > 0:
		return aws.ToString(pte.ThrottlingReasons[0].Reason)
	case errors.As(err, &te) && len(te.ThrottlingReasons) > 0:
		return aws.ToString(te.ThrottlingReasons[0].Reason)
	}
	return "error: " + err.Error()
}

func ensureTable(ctx context.Context, db *dynamodb.Client, name string) error {
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}}})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	return nil
}

// HotLoadRows is a result as table rows (metric, value), for ShowTable.
func HotLoadRows(r HotLoadResult) [][]string {
	rows := [][]string{
		{"writes offered", format.Num(float64(r.Offered))},
		{"writes landed", format.Num(float64(r.Landed))},
		{"writes failed after retries", format.Num(float64(r.Failed))},
		{"requests sent (retries included)", format.Num(float64(r.Attempts))},
		{"throughput, writes/s", format.Num(r.Throughput)},
		{"latency p50, ms", format.Num(float64(r.P50.Microseconds()) / 1000)},
		{"latency p95, ms", format.Num(float64(r.P95.Microseconds()) / 1000)},
		{"latency p99, ms", format.Num(float64(r.P99.Microseconds()) / 1000)},
	}
	for _, k := range slices.Sorted(maps.Keys(r.FailedBy)) {
		rows = append(rows, []string{"failed: " + k, format.Num(float64(r.FailedBy[k]))})
	}
	return rows
}

// pace sends 0..n-1 on jobs, the i-th at start + i/rate seconds (an open
// loop: the schedule does not wait for the work), stopping early when ctx
// ends, then closes jobs.
func pace(ctx context.Context, start time.Time, n int, rate float64, jobs chan<- int) {
	defer close(jobs)
	for i := range n {
		if d := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			return
		}
		jobs <- i
	}
}

// HotLoadSummary is notebook 08's paragraph under a hot-key run at scale S
// (every limit divided by S): the partition's write limit, what the run
// offered and how many times the limit that is, what the layer received and
// throttled (tot, limits.Totals of the run's table), what landed (and what
// it would be on AWS), the latency tail the retries' backoff makes, and
// what failed in the end.
func HotLoadSummary(S float64, h HotLoad, res HotLoadResult, tot limits.Sample) string {
	limit := 1000 / S
	ms := func(d time.Duration) string { return format.Num(float64(d.Microseconds()) / 1000) }
	return fmt.Sprintf("At S = %s one partition takes %s write units a second (1,000 / S); the cell offered %s writes a second "+
		"to one key, %s times that. The layer received %s requests for %s writes that landed and throttled **%s** of them (%s); "+
		"the table landed %s writes a second (%s on AWS, S times it). The writes that landed took %s ms at the median and "+
		"**%s ms at the 99th percentile**: that tail is the retries' backoff. %s writes failed in the end (%s).",
		format.Num(S), format.Num(limit), format.Num(h.Rate), format.Num(h.Rate/limit), format.Num(float64(tot.Requests)),
		format.Num(float64(res.Landed)), format.Num(float64(tot.ThrottledTotal())), ReasonList(tot.Throttled),
		format.Num(res.Throughput), format.Num(res.Throughput*S), ms(res.P50),
		ms(res.P99), format.Num(float64(res.Failed)), ReasonList(res.FailedBy))
}
