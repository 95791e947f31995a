// Package timers schedules one-off jobs with DynamoDB Time to Live and fires
// them from the table's stream.
//
// Scheduling a timer puts an item whose TTL attribute ("due", epoch seconds)
// is its due time. When DynamoDB's TTL process deletes the expired item, the
// deletion appears on the table's stream with the item's old image; a
// Consumer reads the stream with the DynamoDB Streams API (DescribeStream for
// the shards, GetShardIterator, GetRecords) and fires the timer. Every other
// change (the insert that scheduled it, an update, a person's DeleteItem)
// is on the stream too and is ignored: see Classify.
//
// The delay of a fire, fired minus due, is TTL's and nobody else's: AWS
// deletes expired items within a few days, not at the second (and expired
// items stay readable until then); DynamoDB Local 3.3.1 sweeps a table 20
// items every 10 s, so a timer fires within about (items / 20) x 10 s.
// TTL timers therefore suit coarse, per-item schedules (expire a lease, clean
// up a request after a day), not a 01:00 batch window.
//
// # Exactly once
//
// A stream delivers each change at least once to a reader that starts from
// the right place, so what must not be lost or repeated is the reader's
// place. The consumer keeps it as a checkpoint item per shard (the sequence
// number of the last record it handled) in a state table next to the timers
// table, and commits each fire as one TransactWriteItems: put the fire record
// "fire#<id>#<due>" if it does not exist, move the checkpoint from the
// sequence number it read to this record's (a conditional put, so two
// consumers cannot both advance from the same place), and, for a recurring
// timer, put the next timer (the re-schedule: a fresh insert, in the same
// transaction, retried with the transaction). Either all three happen or
// none: a consumer killed before the commit restarts after the previous
// checkpoint and fires the timer then; one killed after it restarts after
// this record. A DynamoDB item, rather than a file or memory, because it
// survives the process and the host, another consumer can take over from it,
// and the transaction that records the fire can move it atomically.
//
// The Handler a consumer calls before committing is at-least-once (a crash
// between the handler and the commit calls it again after the restart); the
// fire records are exactly once. A Handler that keeps failing for a record
// (Attempts times) sends the record to an SQS dead-letter queue and the
// consumer commits past it, so one poisoned timer never blocks its shard.
package timers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// Attribute names of a timer item.
const (
	AttrID      = "timer_id" // partition key of the timers table
	AttrDue     = "due"      // TTL attribute: due time in epoch seconds
	AttrPayload = "payload"  // what to do when it fires
	AttrEvery   = "every_s"  // recurring timers: seconds to the next one
	attrPK      = "pk"       // partition key of the state table
)

// Timer is one scheduled job.
type Timer struct {
	ID      string
	Due     time.Time // TTL has a resolution of one second
	Payload string
	// Every > 0 makes the timer recurring: when it fires, the next one is
	// scheduled Every after this one's due time.
	Every time.Duration
}

// Timers is a timers table and its state table (checkpoints and fire
// records), reached through the table handle of the AWS layer.
type Timers struct {
	db      *dynamo.Table // the timers table; the state table is db.Named(state)
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	table   string
	state   string
}

// New returns the timers of the table c names (c.Table()); its state table is
// that name with "-state" appended.
func New(c *catalog.Catalog) *Timers {
	return &Timers{db: c.DB(), ddb: c.Client(), streams: c.Streams(), table: c.Table(), state: c.Table() + "-state"}
}

// Table returns the timers table's name.
func (t *Timers) Table() string { return t.table }

// StateTable returns the state table's name.
func (t *Timers) StateTable() string { return t.state }

// CreateTables creates the timers table (key timer_id, stream with old and
// new images, TTL on "due") and the state table (key pk), and waits until
// both are active. Tables that exist already are kept.
func (t *Timers) CreateTables(ctx context.Context) error {
	if err := t.create(ctx, t.table, AttrID, &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}); err != nil {
		return err
	}
	if err := t.create(ctx, t.state, attrPK, nil); err != nil {
		return err
	}
	_, err := dynamo.Call(ctx, t.db, func(ctx context.Context) (*dynamodb.UpdateTimeToLiveOutput, error) {
		return t.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(t.table),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(AttrDue), Enabled: aws.Bool(true)}})
	})
	if err != nil && !isValidation(err) { // "TimeToLive is already enabled" is a ValidationException

		return fmt.Errorf("enable TTL on %s: %w", t.table, err)
	}
	return nil
}

// create creates table keyed by key (with stream, if not nil) through the
// AWS layer's create-and-wait on a handle of that table: the same call
// and wait timeouts and typed errors as the catalog's own tables.
func (t *Timers) create(ctx context.Context, table, key string, stream *types.StreamSpecification) error {
	db, err := t.db.Open(table)
	if err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	_, err = db.CreateAndWait(ctx, dynamo.Spec{Key: dynamo.Key{Partition: dynamo.S(key)}, Stream: stream}.Input())
	return err
}

// DeleteTables deletes both tables; tables already gone are fine.
func (t *Timers) DeleteTables(ctx context.Context) error {
	var errs []error
	for _, table := range []string{t.table, t.state} {
		_, err := dynamo.Call(ctx, t.db, func(ctx context.Context) (*dynamodb.DeleteTableOutput, error) {
			return t.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		})
		var missing *catalog.TableMissingError
		if err != nil && !errors.As(err, &missing) {
			errs = append(errs, fmt.Errorf("delete table %s: %w", table, err))
		}
	}
	return errors.Join(errs...)
}

// timerItem is the stored form of a Timer.
type timerItem struct {
	ID      string `dynamodbav:"timer_id"`
	Due     int64  `dynamodbav:"due"`
	Payload string `dynamodbav:"payload,omitempty"`
	Every   int64  `dynamodbav:"every_s,omitempty"`
}

func (tm Timer) item() (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(timerItem{ID: tm.ID, Due: tm.Due.Unix(), Payload: tm.Payload, Every: int64(tm.Every / time.Second)})
}

// Schedule puts the timer: a fresh insert (or a replacement of a timer with
// the same ID that has not fired yet). A failed put is retried up to five
// times with exponential backoff, beyond the SDK's own retries, because a
// re-schedule that is lost is a job that never runs.
func (t *Timers) Schedule(ctx context.Context, tm Timer) error {
	if tm.ID == "" {
		return fmt.Errorf("schedule: timer ID is empty; give each timer an ID")
	}
	item, err := tm.item()
	if err != nil {
		return fmt.Errorf("schedule timer %s: %w", tm.ID, err)
	}
	return retry(ctx, 5, func() error {
		_, err := dynamo.Call(ctx, t.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return t.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.table), Item: item})
		})
		if err != nil {
			return fmt.Errorf("schedule timer %s: %w", tm.ID, err)
		}
		return nil
	})
}

// retry calls fn until it succeeds, attempts run out, or ctx ends, backing
// off between attempts with full jitter (wait.Backoff) from a ceiling of
// 100 ms, 200 ms, 400 ms, ... up to 2 s. Errors a retry cannot fix (a
// missing table, a validation error) end it at once.
func retry(ctx context.Context, attempts int, fn func() error) error {
	var err error
	for i := range attempts {
		if err = fn(); err == nil || permanent(err) {
			return err
		}
		if serr := wait.Sleep(ctx, wait.Backoff(i+1, 100*time.Millisecond, 2*time.Second)); serr != nil {
			return errors.Join(err, serr)
		}
	}
	return err
}

func permanent(err error) bool {
	var missing *catalog.TableMissingError
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &missing) || isValidation(err) || errors.As(err, &ccf) ||
		errors.Is(err, errDuplicate) || errors.Is(err, ErrCheckpointMoved)
}

// isValidation reports a ValidationException, which the SDK gives as a
// generic API error with that code.
func isValidation(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException"
}

// Fire is one timer fired by its TTL deletion.
type Fire struct {
	ID      string
	Payload string
	Due     time.Time
	FiredAt time.Time     // when the consumer read the deletion
	Delay   time.Duration // FiredAt - Due
	Shard   string
	Seq     string // the stream record's sequence number
	Every   time.Duration
}

type fireItem struct {
	PK      string `dynamodbav:"pk"`
	ID      string `dynamodbav:"timer_id"`
	Due     int64  `dynamodbav:"due_s"`
	FiredMS int64  `dynamodbav:"fired_ms"`
	Shard   string `dynamodbav:"shard"`
	Seq     string `dynamodbav:"seq"`
	Dead    bool   `dynamodbav:"dead,omitempty"`
}

func fireKey(id string, due int64) string { return "fire#" + id + "#" + strconv.FormatInt(due, 10) }

// Fires returns the fire records the consumers committed (dead-lettered
// records excluded), read with a paginated Scan of the state table: the
// state table is small, and this is for tests and reports.
func (t *Timers) Fires(ctx context.Context) ([]Fire, error) {
	filt, err := expression.NewBuilder().WithFilter(expression.And(
		expression.BeginsWith(expression.Name(attrPK), "fire#"),
		expression.AttributeNotExists(expression.Name("dead")))).Build()
	if err != nil {
		return nil, err
	}
	var fires []Fire
	for out, err := range t.db.ScanPages(ctx, &dynamodb.ScanInput{TableName: aws.String(t.state), ConsistentRead: aws.Bool(true),
		FilterExpression: filt.Filter(), ExpressionAttributeNames: filt.Names(), ExpressionAttributeValues: filt.Values()}) {
		if err != nil {
			return nil, fmt.Errorf("read fires from %s: %w", t.state, err)
		}
		var items []fireItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
			return nil, fmt.Errorf("read fires from %s: %w", t.state, err)
		}
		for _, it := range items {
			due, fired := time.Unix(it.Due, 0), time.UnixMilli(it.FiredMS)
			fires = append(fires, Fire{ID: it.ID, Due: due, FiredAt: fired, Delay: fired.Sub(due), Shard: it.Shard, Seq: it.Seq})
		}
	}
	return fires, nil
}

// Pending counts the timers not yet deleted by TTL (a Scan with COUNT; the
// timers table is small).
func (t *Timers) Pending(ctx context.Context) (int, error) {
	out, err := dynamo.Call(ctx, t.db, func(ctx context.Context) (*dynamodb.ScanOutput, error) {
		return t.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(t.table), Select: types.SelectCount, ConsistentRead: aws.Bool(true)})
	})
	if err != nil {
		return 0, fmt.Errorf("count timers in %s: %w", t.table, err)
	}
	return int(out.Count), nil
}

// Client returns the DynamoDB client, for calls this package does not wrap.
func (t *Timers) Client() *dynamodb.Client { return t.ddb }

// Cancel deletes a timer that has not fired: a user's DeleteItem, which the
// stream shows as a REMOVE without the TTL service's identity, so it fires
// nothing. A timer already gone is fine.
func (t *Timers) Cancel(ctx context.Context, id string) error {
	_, err := dynamo.Call(ctx, t.db, func(ctx context.Context) (*dynamodb.DeleteItemOutput, error) {
		return t.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.table),
			Key: map[string]types.AttributeValue{AttrID: &types.AttributeValueMemberS{Value: id}}})
	})
	if err != nil {
		return fmt.Errorf("cancel timer %s: %w", id, err)
	}
	return nil
}

// Visible counts the timers a reader sees at now: all the items still in
// the table, and those not yet expired (a Scan filtered on due > now, as the
// DynamoDB Developer Guide's "Working with expired items" recommends). TTL
// deletes expired items late (on AWS typically within a few days), and
// until then reads, queries and scans return them: a reader that must not
// act on an expired timer filters on the TTL attribute.
func (t *Timers) Visible(ctx context.Context, now time.Time) (all, live int, err error) {
	filt, err := expression.NewBuilder().WithFilter(expression.Name(AttrDue).GreaterThan(expression.Value(now.Unix()))).Build()
	if err != nil {
		return 0, 0, err
	}
	for _, filtered := range []bool{false, true} {
		in := &dynamodb.ScanInput{TableName: aws.String(t.table), Select: types.SelectCount, ConsistentRead: aws.Bool(true)}
		if filtered {
			in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = filt.Filter(), filt.Names(), filt.Values()
		}
		n := 0
		for out, err := range t.db.ScanPages(ctx, in) {
			if err != nil {
				return 0, 0, fmt.Errorf("count timers in %s: %w", t.table, err)
			}
			n += int(out.Count)
		}
		if filtered {
			live = n
		} else {
			all = n
		}
	}
	return all, live, nil
}
