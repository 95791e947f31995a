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
// GetItem, UpdateItem (the layer reads the item back after it) and Query
// on 64 keys for a fixed number of calls, through one SDK client each way.
// It prints both throughputs' medians and their ratio; nothing is
// throttled (S = 1 and the rate is far below 1,000 units per key).
func BenchmarkOverhead(b *testing.B) {
	const rounds, calls, workers = 6, 1200, 8
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
		var direct, layer []float64
		for r := range rounds {
			if r%2 == 0 {
				direct = append(direct, round(f.direct, r))
				layer = append(layer, round(f.db, r))
			} else {
				layer = append(layer, round(f.db, r))
				direct = append(direct, round(f.direct, r))
			}
		}
		slices.Sort(direct)
		slices.Sort(layer)
		d, l := direct[rounds/2], layer[rounds/2]
		b.ReportMetric(d, "direct-calls/s")
		b.ReportMetric(l, "layer-calls/s")
		b.ReportMetric(l/d, "layer/direct")
		fmt.Printf("limits layer overhead: DynamoDB Local direct %.0f calls/s (median of %d rounds, range %.0f-%.0f), through the layer %.0f calls/s (range %.0f-%.0f): ratio %.3f, overhead %.1f %%\n",
			d, rounds, direct[0], direct[rounds-1], l, layer[0], layer[rounds-1], l/d, 100*(1-l/d))
	}
	if tot := Totals(f.s.Stats(), name, ""); tot.ThrottledTotal() != 0 {
		b.Fatalf("the layer throttled %v: the benchmark measures overhead, not limits", tot.Throttled)
	}
}
