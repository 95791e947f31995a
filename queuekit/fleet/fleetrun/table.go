package fleetrun

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// runItem is META/RUN: the shape of the run in progress on the table. No
// worker reads it.
type runItem struct {
	Jobs     int    `dynamodbav:"jobs"`
	Users    int    `dynamodbav:"users"`
	Shards   int    `dynamodbav:"shards"`
	MaxRetry int    `dynamodbav:"max_retry"`
	State    string `dynamodbav:"state"` // "running" or "done"
}

// key is the fleet table's key of item (pk, sk).
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{fleet.AttrPK: &types.AttributeValueMemberS{Value: pk}, fleet.AttrSK: &types.AttributeValueMemberS{Value: sk}}
}

// lastRun reads META/RUN; ok is false when there is none (or no table).
func lastRun(ctx context.Context, f *fleet.Fleet) (runItem, bool, error) {
	db := f.DB()
	out, err := dynamo.Call(ctx, db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true), Key: key("META", "RUN")})
	})
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) {
		return runItem{}, false, nil
	}
	if err != nil {
		return runItem{}, false, fmt.Errorf("read the last run of %s: %w", f.Table(), err)
	}
	if out.Item == nil {
		return runItem{}, false, nil
	}
	var r runItem
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return runItem{}, false, fmt.Errorf("META/RUN of %s: %w", f.Table(), err)
	}
	return r, true, nil
}

// putRun writes META/RUN.
func putRun(ctx context.Context, f *fleet.Fleet, r runItem) error {
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return err
	}
	for k, v := range key("META", "RUN") {
		item[k] = v
	}
	db := f.DB()
	// An unconditional put of the same item: safe to send again, so the
	// coordinator rides out an outage here as in its count (Fleet.RideOut).
	o := db.Outage(f.RideOut(), "the fleet coordinator's write of its run record on "+f.Table(),
		"the workers keep their jobs; check the network to DynamoDB, then run the same fleet again (it resumes the table)")
	err = o.Do(ctx, func(ctx context.Context) error {
		_, err := dynamo.Call(ctx, db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return db.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Table()), Item: item})
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("record the run on %s: %w", f.Table(), err)
	}
	return nil
}

// WriteCeiling measures what the server accepts on the fleet's table:
// clients goroutines, each making conditional UpdateItems on an item of its
// own (pk CEILING; no two clients touch one item), back to back, for d. It
// returns committed writes per second.
func WriteCeiling(ctx context.Context, f *fleet.Fleet, clients int, d time.Duration) (float64, error) {
	db := f.DB()
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	stop := began.Add(d)
	for i := range clients {
		g.Go(func() error {
			k := key("CEILING", fmt.Sprintf("%05d", i))
			for n := 0; time.Now().Before(stop); n++ {
				// Each write raises n: it never conflicts with itself.
				next := expression.Value(n + 1)
				expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("n"), next)).
					WithCondition(expression.AttributeNotExists(expression.Name("n")).Or(expression.Name("n").LessThan(next))).Build()
				if err != nil {
					return fmt.Errorf("write ceiling: client %d: build the write: %w", i, err)
				}
				_, err = db.UpdateItem(gctx, k, expr)
				if err != nil {
					return fmt.Errorf("write ceiling: client %d: %w", i, err)
				}
				done.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return float64(done.Load()) / time.Since(began).Seconds(), nil
}
