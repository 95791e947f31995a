package partitions

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// Lifecycle table: jobs keyed by job_id, with a sparse due-time index keyed by
// shard and due time that holds only claimable jobs.
const (
	LifecycleTable = "capacity_lifecycle"
	DueIndex       = "due"
	attrJobID      = "job_id"
	attrDueShard   = "due_shard"
	attrDueAt      = "due_at"
	attrStatus     = "execution_status"
)

// OpenLifecycle returns a catalog of the lifecycle table (job_id, and the
// sparse index "due" on due_shard and due_at), creating it if needed.
func OpenLifecycle(ctx context.Context, opts ...catalog.Option) (*catalog.Catalog, error) {
	all := append([]catalog.Option{catalog.WithTable(LifecycleTable)}, opts...)
	all = append(all, catalog.WithItemKeys(attrJobID, ""), catalog.WithIndex(DueIndex, attrDueShard, attrDueAt))
	c, err := catalog.New(ctx, all...)
	if err != nil {
		return nil, err
	}
	if err := c.CreateTable(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Step is one request of a job's life and the capacity DynamoDB reported for it.
type Step struct {
	Name     string
	TableWCU float64 // write units on the table
	IndexWCU float64 // write units on the due-time index
	RCU      float64 // read units (for the poll: the whole Query)
}

// ItemBytes is the size the lifecycle's items are padded to: just under 1 KB,
// so every write of the item costs one write unit.
const ItemBytes = 1000

// Lifecycle runs one job's life on the lifecycle table and reports the
// capacity of every request (ReturnConsumedCapacity INDEXES): submit
// (PutItem with the due-time key, so the job enters the index), the poll
// (Query of the index's shard, which returns pollBatch due jobs: the job and
// pollBatch−1 others put before it), the claim (a conditional UpdateItem that
// sets CLAIMED and removes the due-time key, so the job leaves the index),
// PROCESSING, SUCCESS, and the user's view (eventually consistent GetItem).
// The run id keeps runs apart; running the same id again re-submits the same
// jobs and measures the same figures.
func Lifecycle(ctx context.Context, c *catalog.Catalog, run string, pollBatch int) ([]Step, error) {
	if pollBatch < 1 || pollBatch > 100 {
		return nil, fmt.Errorf("lifecycle: poll batch %d: want 1 to 100", pollBatch)
	}
	cl, table := c.Client(), aws.String(c.Table())
	shard := "lifecycle/" + run + "#00"
	id := func(i int) string { return fmt.Sprintf("%s-JOB-%03d", run, i) }
	var steps []Step
	record := func(name string, cc *types.ConsumedCapacity) {
		s := Step{Name: name}
		if cc != nil {
			if cc.Table != nil {
				s.TableWCU = aws.ToFloat64(cc.Table.CapacityUnits)
			}
			for _, ix := range cc.GlobalSecondaryIndexes {
				s.IndexWCU += aws.ToFloat64(ix.CapacityUnits)
			}
			if cc.Table == nil && len(cc.GlobalSecondaryIndexes) == 0 {
				s.TableWCU = aws.ToFloat64(cc.CapacityUnits)
			}
		}
		steps = append(steps, s)
	}
	// Submit: the measured job last, so the poll's page holds it and the others.
	for i := pollBatch; i >= 1; i-- {
		item, err := jobItem(id(i), shard, fmt.Sprintf("2026-05-13T01:00:%02d", i%60))
		if err != nil {
			return nil, err
		}
		out, err := cl.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		if err != nil {
			return nil, fmt.Errorf("lifecycle: submit %s to %s: %w", id(i), c.Table(), err)
		}
		if i == 1 {
			record("submit (PutItem, NOT_STARTED, enters the index)", out.ConsumedCapacity)
		}
	}
	keyExpr, err := expression.NewBuilder().WithKeyCondition(expression.Key(attrDueShard).Equal(expression.Value(shard))).Build()
	if err != nil {
		return nil, fmt.Errorf("lifecycle: poll key condition: %w", err)
	}
	q, err := cl.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String(DueIndex),
		KeyConditionExpression: keyExpr.KeyCondition(), ExpressionAttributeNames: keyExpr.Names(), ExpressionAttributeValues: keyExpr.Values(),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: poll the due index of %s: %w", c.Table(), err)
	}
	if int(q.Count) != pollBatch {
		return nil, fmt.Errorf("lifecycle: the poll found %d due jobs, want %d", q.Count, pollBatch)
	}
	steps = append(steps, Step{Name: fmt.Sprintf("poll (Query of the index, %d due jobs)", pollBatch), RCU: consumed(q.ConsumedCapacity)})
	key := map[string]types.AttributeValue{attrJobID: &types.AttributeValueMemberS{Value: id(1)}}
	for _, u := range []struct {
		name   string
		status queuekit.Status
		claim  bool
	}{
		{"claim (conditional UpdateItem, CLAIMED, leaves the index)", queuekit.StatusClaimed, true},
		{"start (UpdateItem, PROCESSING)", queuekit.StatusProcessing, false},
		{"finish (UpdateItem, SUCCESS)", queuekit.StatusSuccess, false},
	} {
		upd := expression.Set(expression.Name(attrStatus), expression.Value(u.status))
		b := expression.NewBuilder()
		if u.claim {
			upd = upd.Remove(expression.Name(attrDueShard)).Remove(expression.Name(attrDueAt))
			b = b.WithCondition(expression.Name(attrStatus).Equal(expression.Value(queuekit.StatusNotStarted)))
		}
		ex, err := b.WithUpdate(upd).Build()
		if err != nil {
			return nil, fmt.Errorf("lifecycle: %s: %w", u.name, err)
		}
		out, err := cl.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key, UpdateExpression: ex.Update(),
			ConditionExpression: ex.Condition(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		var lost *types.ConditionalCheckFailedException
		if errors.As(err, &lost) {
			return nil, fmt.Errorf("lifecycle: %s: job %s was no longer NOT_STARTED: another worker claimed it first (run %q used twice at once?)", u.name, id(1), run)
		}
		if err != nil {
			return nil, fmt.Errorf("lifecycle: %s: %w", u.name, err)
		}
		record(u.name, out.ConsumedCapacity)
	}
	g, err := cl.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: view job: %w", err)
	}
	steps = append(steps, Step{Name: "view_job (GetItem, eventually consistent)", RCU: consumed(g.ConsumedCapacity)})
	return steps, nil
}

func consumed(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

// jobItem is a NOT_STARTED job padded to ItemBytes (attribute names and
// values counted as DynamoDB counts them, in UTF-8 bytes).
func jobItem(id, shard, due string) (map[string]types.AttributeValue, error) {
	item := map[string]types.AttributeValue{
		attrJobID:    &types.AttributeValueMemberS{Value: id},
		attrDueShard: &types.AttributeValueMemberS{Value: shard},
		attrDueAt:    &types.AttributeValueMemberS{Value: due},
		attrStatus:   &types.AttributeValueMemberS{Value: string(queuekit.StatusNotStarted)},
	}
	size := 0
	for k, v := range item {
		size += len(k) + len(v.(*types.AttributeValueMemberS).Value)
	}
	// SUCCESS is one byte shorter than NOT_STARTED and PROCESSING: leave room.
	pad := ItemBytes - size - len("payload") - 2
	if pad < 0 {
		return nil, fmt.Errorf("lifecycle: job id %q too long for a %d-byte item", id, ItemBytes)
	}
	item["payload"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", pad)}
	return item, nil
}
