package limits

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkOverhead measures the layer's cost on DynamoDB Local's
// throughput, side by side in one run: rounds alternate (direct, layer,
// layer, direct, ...), each round 8 goroutines doing a mix of PutItem,
// GetItem, UpdateItem and Query on 64 keys for a fixed number of calls,
// through one SDK client each way. It prints both throughputs and the
// median ratio of adjacent pairs; nothing is throttled (S = 1, far below
// 1,000 units a second per key).
func BenchmarkOverhead(b *testing.B) {
	const rounds, calls, workers = benchRounds, 400, 8
	f := newFixture(b, WithClock(time.Now))
	name := f.table(onDemand())
	ctx := context.Background()
	round := func(db *dynamodb.Client, r int) float64 {
		var wg sync.WaitGroup
		start := time.Now()
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls / workers {
					pk, sk := fmt.Sprintf("k%d", (w*31+i)%64), fmt.Sprintf("s%d", i%4)
					var err error
					switch i % 4 {
					case 0:
						_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item(pk, sk, "v", fmt.Sprint(r, i))})
					case 1:
						_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item(pk, sk)})
					case 2:
						_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item(pk, sk), UpdateExpression: aws.String("SET n = :n"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
					case 3:
						_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}})
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatalf("round %d: %v", r, err)
		}
		return float64(calls) / time.Since(start).Seconds()
	}
	for range b.N {
		// Pairs, each run back to back in alternating order (ABBA...), so
		// that the machine's load, shared with other work, hits both arms
		// of a pair alike; the ratio is the median of the pairs' ratios.
		var direct, layer, ratios []float64
		for r := range rounds {
			var d, l float64
			if r%2 == 0 {
				d, l = round(f.direct, r), round(f.db, r)
			} else {
				l, d = round(f.db, r), round(f.direct, r)
			}
			direct, layer, ratios = append(direct, d), append(layer, l), append(ratios, l/d)
		}
		slices.Sort(direct)
		slices.Sort(layer)
		slices.Sort(ratios)
		d, l, q := direct[rounds/2], layer[rounds/2], ratios[rounds/2]
		b.ReportMetric(d, "direct-calls/s")
		b.ReportMetric(l, "layer-calls/s")
		b.ReportMetric(q, "layer/direct")
		fmt.Printf("limits layer overhead: %d interleaved pairs of %d calls (8 goroutines; PutItem, GetItem, UpdateItem, Query): DynamoDB Local direct median %.0f calls/s (range %.0f-%.0f), through the layer median %.0f calls/s (range %.0f-%.0f); median pair ratio layer/direct %.3f (pairs %.3f-%.3f, quartiles %.3f-%.3f): overhead %.1f %%\n",
			rounds, calls, d, direct[0], direct[rounds-1], l, layer[0], layer[rounds-1], q, ratios[0], ratios[rounds-1], ratios[rounds/4], ratios[3*rounds/4], 100*(1-q))
	}
	if tot := Totals(f.s.Stats(), name, ""); tot.ThrottledTotal() != 0 {
		b.Fatalf("the layer throttled %v: the benchmark measures overhead, not limits", tot.Throttled)
	}
}

// benchRounds is the number of interleaved pairs BenchmarkOverhead runs.
const benchRounds = 24 // even, so both orders run equally often

// BenchmarkOverheadPerCall is the same comparison at the finest
// interleaving: 8 goroutines each send the same mix of calls, alternately
// to DynamoDB Local directly and through the layer (the order flipping
// every call), and time each call. Load that changes from one millisecond
// to the next hits both arms alike, so the ratio of the median latencies
// (direct / layer: a closed loop's throughput ratio) is steadier than
// rounds' throughputs on a busy machine.
func BenchmarkOverheadPerCall(b *testing.B) {
	const calls, workers = 600, 8
	f := newFixture(b, WithClock(time.Now))
	name := f.table(onDemand())
	ctx := context.Background()
	do := func(db *dynamodb.Client, w, i int) (time.Duration, error) {
		pk, sk := fmt.Sprintf("k%d", (w*31+i)%64), fmt.Sprintf("s%d", i%4)
		start := time.Now()
		var err error
		switch i % 4 {
		case 0:
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item(pk, sk, "v", fmt.Sprint(i))})
		case 1:
			_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item(pk, sk)})
		case 2:
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item(pk, sk), UpdateExpression: aws.String("SET n = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
		case 3:
			_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}})
		}
		return time.Since(start), err
	}
	for range b.N {
		var mu sync.Mutex
		var direct, layer []float64
		var wg sync.WaitGroup
		var failed error
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					order := []*dynamodb.Client{f.direct, f.db}
					if (i+w)%2 == 1 {
						order[0], order[1] = order[1], order[0]
					}
					for _, db := range order {
						d, err := do(db, w, i)
						mu.Lock()
						if err != nil {
							failed = err
						} else if db == f.direct {
							direct = append(direct, d.Seconds())
						} else {
							layer = append(layer, d.Seconds())
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if failed != nil {
			b.Fatal(failed)
		}
		slices.Sort(direct)
		slices.Sort(layer)
		md, ml := direct[len(direct)/2], layer[len(layer)/2]
		b.ReportMetric(md/ml, "layer/direct")
		fmt.Printf("limits layer overhead, per call: %d calls each way, alternating (8 goroutines; PutItem, GetItem, UpdateItem, Query): median latency DynamoDB Local direct %.2f ms, through the layer %.2f ms (+%.2f ms); throughput ratio layer/direct %.3f, overhead %.1f %%\n",
			len(direct), 1000*md, 1000*ml, 1000*(ml-md), md/ml, 100*(1-md/ml))
	}
}
