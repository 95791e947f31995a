// Package fanout runs a large job as slices through SQS: a trigger sends one
// pointer message per slice (the slice's index and key, never its data), a
// pool of processors works the slices at a pace the source can bear, and a
// collator writes the final result once every slice is done or
// dead-lettered.
//
// The guarantees, and what gives each one:
//
//   - At-least-once delivery (SQS): a message received but not deleted comes
//     back after its visibility timeout. A processor deletes a message only
//     after the slice's result is written, and extends the visibility timeout
//     while a long slice runs (ChangeMessageVisibility every half timeout), so
//     a slow slice is not handed to a second processor.
//   - No double count: the result of slice i is one item (run, slice i) put
//     with a condition (it does not exist yet, or it is a dead-letter marker
//     being replaced after a redrive). A redelivered message, such as the one
//     of a processor killed after writing and before deleting, finds its
//     result written, counts as a duplicate, and is deleted.
//   - Poison slices end in the dead-letter queue: the work queue's
//     RedrivePolicy moves a message received maxReceiveCount times without
//     being deleted. The collator marks each dead-lettered slice in the
//     results table (and leaves the message there for a redrive).
//   - Completion: slices done + slices dead = slices. The final result is put
//     with a condition that only a more complete collation replaces it.
//   - Redrive: after a fix, sqsqueue.Client.Redrive moves the dead-lettered
//     messages back, the processors write their results over the markers,
//     and the collator writes the complete result.
//
// Pacing: Processor.Workers bounds the slices in flight (errgroup with
// SetLimit), and a processor receives only as many messages as it has free
// workers, with long polling (WaitTimeSeconds) so an idle pool does not spin.
// A source with a rate limit (Limited) shows why: a stampede of workers gets
// throttled, and each throttled attempt spends one of a slice's receives.
package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// Pointer is the body of a slice message: where the slice is, not its data.
type Pointer struct {
	Run   string `json:"run"`
	Slice int    `json:"slice"`
	Key   string `json:"key"` // e.g. the night's batch_date
}

// Trigger sends one pointer per key (slice i has key keys[i]) to the work
// queue with SendMessageBatch, ten per request.
func Trigger(ctx context.Context, q *sqsqueue.Client, work sqsqueue.Queue, run string, keys []string) error {
	bodies := make([]string, len(keys))
	for i, k := range keys {
		b, err := json.Marshal(Pointer{Run: run, Slice: i, Key: k})
		if err != nil {
			return err
		}
		bodies[i] = string(b)
	}
	if err := q.SendBatch(ctx, work, bodies); err != nil {
		return fmt.Errorf("trigger run %s: %w", run, err)
	}
	return nil
}

// Results is the results table: one item per slice (partition key "run",
// sort key "slice"), and the final result at slice -1.
type Results struct {
	db    *dynamo.Table // the table handle of the AWS layer
	ddb   *dynamodb.Client
	table string
}

// Attribute names of the results table.
const (
	attrRun    = "run"
	attrSlice  = "slice"
	attrStatus = "status"
	statusDone = "done"
	statusDead = "dead"
	// statusFailed is a slice whose last attempt failed; its "error" holds
	// that attempt's cause, and the dead-letter marker keeps it.
	statusFailed = "failed"
	// maxErrorText bounds a stored cause (an item is at most 400 KB).
	maxErrorText = 1000
	finalSlice   = -1
)

// NewResults returns the results table c names (c.Table()).
func NewResults(c *catalog.Catalog) *Results {
	return &Results{db: c.DB(), ddb: c.Client(), table: c.Table()}
}

// Table returns the table's name.
func (r *Results) Table() string { return r.table }

// Create creates the table (on-demand) unless it exists, and waits until it
// is active, through the catalog's create-and-wait (so under its
// catalog.Options.WaitTimeout, with its typed errors).
func (r *Results) Create(ctx context.Context) error {
	_, err := r.db.CreateAndWait(ctx, dynamo.Spec{Key: dynamo.Key{Partition: dynamo.S(attrRun), Sort: dynamo.N(attrSlice)}}.Input())
	if err != nil {
		return fmt.Errorf("results table: %w", err)
	}
	return nil
}

// Delete deletes the table; a table already gone is fine.
func (r *Results) Delete(ctx context.Context) error {
	return r.db.DeleteAndWait(ctx)
}

// sliceItem is one slice's stored result.
type sliceItem struct {
	Run    string          `dynamodbav:"run"`
	Slice  int             `dynamodbav:"slice"`
	Key    string          `dynamodbav:"key"`
	Status string          `dynamodbav:"status"`
	Result json.RawMessage `dynamodbav:"result,omitempty"`
	Error  string          `dynamodbav:"error,omitempty"`
	// Attempts is the ApproximateReceiveCount of the failed attempt.
	Attempts int `dynamodbav:"attempts,omitempty"`
}

// errWritten says that a slice's result was already there.
var errWritten = errors.New("result already written")

// put writes a slice's result unless one is there already: the condition is
// "no item, a failed attempt's record, or a dead-letter marker", so a
// redelivered message never counts twice and a redriven slice replaces its
// marker.
func (r *Results) put(ctx context.Context, it sliceItem) error {
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return err
	}
	cond := expression.Or(expression.AttributeNotExists(expression.Name(attrRun)),
		expression.Name(attrStatus).Equal(expression.Value(statusDead)),
		expression.Name(attrStatus).Equal(expression.Value(statusFailed)))
	if it.Status == statusFailed { // a failure never replaces a result or a marker
		cond = expression.Or(expression.AttributeNotExists(expression.Name(attrRun)),
			expression.Name(attrStatus).Equal(expression.Value(statusFailed)))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return err
	}
	_, err = dynamo.Call(ctx, r.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return r.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.table), Item: av,
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errWritten
	}
	if err != nil {
		return fmt.Errorf("write result of slice %d of run %s: %w", it.Slice, it.Run, err)
	}
	return nil
}

// NoCauseRecorded is the last error of a slice dead-lettered by crashes:
// no attempt of it recorded a failure.
const NoCauseRecorded = "no attempt recorded a cause: each ended without a failure (a processor stopped, or the visibility timeout ran out)"

// markDead puts the dead-letter marker of slice p: status "dead", keeping
// the cause a failed attempt recorded (the last one), or saying that none
// was recorded. It never replaces a result or another marker.
func (r *Results) markDead(ctx context.Context, p Pointer) error {
	none := NoCauseRecorded
	upd := expression.Set(expression.Name(attrStatus), expression.Value(statusDead)).
		Set(expression.Name("key"), expression.Value(p.Key)).
		Set(expression.Name("error"), expression.IfNotExists(expression.Name("error"), expression.Value(none)))
	cond := expression.Or(expression.AttributeNotExists(expression.Name(attrRun)),
		expression.Name(attrStatus).Equal(expression.Value(statusFailed)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return err
	}
	_, err = dynamo.Call(ctx, r.db, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return r.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(r.table),
			Key: map[string]types.AttributeValue{attrRun: &types.AttributeValueMemberS{Value: p.Run},
				attrSlice: &types.AttributeValueMemberN{Value: strconv.Itoa(p.Slice)}},
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // a result or a marker is there already
	}
	if err != nil {
		return fmt.Errorf("mark slice %d of run %s dead-lettered: %w", p.Slice, p.Run, err)
	}
	return nil
}

// errorText is err's message, cut to maxErrorText bytes for storing.
func errorText(err error) string {
	s := err.Error()
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "..."
	}
	return s
}

// slices reads every slice item of a run (Query, consistent, paginated).
func (r *Results) slices(ctx context.Context, run string) ([]sliceItem, error) {
	kc := expression.Key(attrRun).Equal(expression.Value(run)).And(expression.Key(attrSlice).GreaterThanEqual(expression.Value(0)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, err
	}
	var items []sliceItem
	for out, err := range r.db.QueryPages(ctx, &dynamodb.QueryInput{TableName: aws.String(r.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}) {
		if err != nil {
			return nil, fmt.Errorf("read results of run %s: %w", run, err)
		}
		var page []sliceItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil {
			return nil, fmt.Errorf("read results of run %s: %w", run, err)
		}
		items = append(items, page...)
	}
	return items, nil
}

// finalItem is the stored collation.
type finalItem struct {
	Run       string          `dynamodbav:"run"`
	Slice     int             `dynamodbav:"slice"`
	Slices    int             `dynamodbav:"slices"`
	Processed int             `dynamodbav:"processed"`
	Dead      []int           `dynamodbav:"dead_lettered"`
	Result    json.RawMessage `dynamodbav:"result"`
	WrittenMS int64           `dynamodbav:"written_ms"`
}

// Final reads the run's final result; ok is false when there is none yet.
func (r *Results) Final(ctx context.Context, run string) (Final, bool, error) {
	out, err := dynamo.Call(ctx, r.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return r.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{attrRun: &types.AttributeValueMemberS{Value: run},
				attrSlice: &types.AttributeValueMemberN{Value: strconv.Itoa(finalSlice)}}})
	})
	if err != nil {
		return Final{}, false, fmt.Errorf("read final result of run %s: %w", run, err)
	}
	if out.Item == nil {
		return Final{}, false, nil
	}
	var f finalItem
	if err := attributevalue.UnmarshalMap(out.Item, &f); err != nil {
		return Final{}, false, fmt.Errorf("final result of run %s: %w", run, err)
	}
	if f.Dead == nil {
		f.Dead = []int{}
	}
	return Final{Run: f.Run, Slices: f.Slices, Processed: f.Processed, DeadLettered: f.Dead, Result: f.Result}, true, nil
}
