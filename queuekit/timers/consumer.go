package timers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// Kind is what a stream record means to the timers.
type Kind int

// The kinds of stream record. Only KindTTLDelete fires a timer.
const (
	KindInsert     Kind = iota // a timer was scheduled
	KindUpdate                 // a timer was changed
	KindUserDelete             // someone deleted a timer with DeleteItem: a cancel, not a fire
	KindTTLDelete              // TTL deleted an expired timer: fire it
	KindOther                  // anything else (none known)
)

// String names the kind; a value outside the constants reads "Kind(n)".
func (k Kind) String() string {
	names := [...]string{"insert", "update", "user delete", "TTL delete", "other"}
	if k < 0 || int(k) >= len(names) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return names[k]
}

// Local331TTLEventName is the eventName DynamoDB Local 3.3.1 gives a TTL
// deletion (read from its behaviour: it has no name for it).
const Local331TTLEventName = "UNKNOWN_TO_SDK_VERSION"

// Classify says what a stream record is. Two forms mean "TTL deleted this
// item", and both are recognised because the same code runs on both servers:
//
//   - AWS: eventName REMOVE with userIdentity type "Service" and principalId
//     "dynamodb.amazonaws.com" (the documented mark of a TTL deletion; a
//     person's DeleteItem is a REMOVE without userIdentity).
//   - DynamoDB Local 3.3.1: eventName UNKNOWN_TO_SDK_VERSION with an
//     OldImage, no NewImage and no userIdentity (Local has no identity for
//     its TTL sweep). Without this case no timer would ever fire on Local.
//
// A REMOVE without the service identity is a user's delete, which cancels
// a timer and must not fire it.
func Classify(r stypes.Record) Kind {
	switch r.EventName {
	case stypes.OperationTypeInsert:
		return KindInsert
	case stypes.OperationTypeModify:
		return KindUpdate
	case stypes.OperationTypeRemove:
		if id := r.UserIdentity; id != nil && aws.ToString(id.Type) == "Service" && aws.ToString(id.PrincipalId) == "dynamodb.amazonaws.com" {
			return KindTTLDelete
		}
		return KindUserDelete
	case Local331TTLEventName:
		if r.Dynamodb != nil && r.Dynamodb.OldImage != nil && r.Dynamodb.NewImage == nil && r.UserIdentity == nil {
			return KindTTLDelete
		}
	}
	return KindOther
}

// ConsumerConfig configures one Consumer (Timers.Consumer), the way every
// operation in queuekit takes one config struct.
type ConsumerConfig struct {
	// Handler runs a fired timer before the fire is committed; nil does
	// nothing. It is called at least once per fire (again after a crash
	// between it and the commit), so it must be idempotent, e.g. keyed on
	// the timer's ID and due time.
	Handler func(ctx context.Context, f Fire) error
	// Attempts is how many times Handler is tried for one record before the
	// record goes to the dead-letter queue (default 3).
	Attempts int
	// Backoff is the pause after a failed attempt, doubled each time
	// (default 100 ms).
	Backoff time.Duration
	// Queues and DLQ receive records whose Handler kept failing. Without
	// them such a record stops Run with an error.
	Queues *sqsqueue.Client
	DLQ    sqsqueue.Queue
	// Poll is the pause after a pass over the shards found nothing new
	// (default 500 ms).
	Poll time.Duration
	// OnFire is called after a fire is committed, e.g. for progress.
	OnFire func(Fire)
	// Until, if set, ends Run (with nil) as soon as it returns true; it is
	// asked after every commit and every pass over the shards.
	Until func(Stats) bool
}

// Stats counts what a consumer saw.
type Stats struct {
	Fired        int          // fires committed
	Duplicates   int          // TTL deletions of a timer already fired (0 unless a stream redelivers)
	DeadLettered int          // records sent to the dead-letter queue
	Ignored      map[Kind]int // records that fired nothing, by kind
}

// Consumer reads a timers table's stream and fires timers. One consumer per
// table at a time: a second one is refused at its first commit by the
// checkpoint's condition (ErrCheckpointMoved).
type Consumer struct {
	t     *Timers
	o     ConsumerConfig
	mu    sync.Mutex
	stats Stats
	cp    map[string]string // shard -> last committed sequence number
	until func()            // cancels Run when ConsumerConfig.Until holds
}

// ErrCheckpointMoved says that another consumer moved a shard's checkpoint.
var ErrCheckpointMoved = errors.New("another consumer moved the checkpoint")

// Consumer returns a consumer of t's stream.
func (t *Timers) Consumer(o ConsumerConfig) *Consumer {
	if o.Attempts < 1 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	return &Consumer{t: t, o: o, stats: Stats{Ignored: map[Kind]int{}}, cp: map[string]string{}}
}

// Stats returns a copy of the counts so far.
func (c *Consumer) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Ignored = map[Kind]int{}
	for k, v := range c.stats.Ignored {
		s.Ignored[k] = v
	}
	return s
}

// Run reads the stream from each shard's checkpoint (or its oldest record
// when it has none) and fires timers until ctx ends or ConsumerConfig.Until says
// so; then it returns nil. Closed shards are read to their end, a child
// shard only after its parent.
func (c *Consumer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.until = func() {
		if c.o.Until != nil && c.o.Until(c.Stats()) {
			cancel()
		}
	}
	arn, err := c.streamARN(ctx)
	if err != nil {
		return err
	}
	iters := map[string]*string{}
	finished := map[string]bool{}
	for ctx.Err() == nil {
		shards, err := c.shards(ctx, arn)
		if err != nil {
			return stopped(ctx, err)
		}
		known := map[string]bool{}
		for _, s := range shards {
			known[aws.ToString(s.ShardId)] = true
		}
		for _, s := range shards {
			id := aws.ToString(s.ShardId)
			if finished[id] || (s.ParentShardId != nil && known[*s.ParentShardId] && !finished[*s.ParentShardId]) {
				continue
			}
			if iters[id] == nil {
				it, err := c.iterator(ctx, arn, id)
				if err != nil {
					return stopped(ctx, err)
				}
				iters[id] = it
			}
			next, err := c.drain(ctx, id, iters[id])
			var expired *stypes.ExpiredIteratorException
			switch {
			case errors.As(err, &expired):
				delete(iters, id) // iterators last 15 minutes; start again from the checkpoint
			case err != nil:
				return stopped(ctx, err)
			case next == nil:
				finished[id] = true
			default:
				iters[id] = next
			}
		}
		c.until()
		_ = wait.Sleep(ctx, c.o.Poll) // a ctx that ended fails the loop's test
	}
	return nil
}

// stopped returns nil when err is only ctx ending.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (c *Consumer) streamARN(ctx context.Context) (string, error) {
	out, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
		return c.t.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(c.t.table)})
	})
	if err != nil {
		return "", fmt.Errorf("timers table %s: %w", c.t.table, err)
	}
	arn := aws.ToString(out.Table.LatestStreamArn)
	if arn == "" {
		return "", fmt.Errorf("timers table %s has no stream; create it with timers.CreateTables", c.t.table)
	}
	return arn, nil
}

// shards lists the stream's shards, following DescribeStream's pages.
func (c *Consumer) shards(ctx context.Context, arn string) ([]stypes.Shard, error) {
	var all []stypes.Shard
	var start *string
	for {
		out, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodbstreams.DescribeStreamOutput, error) {
			return c.t.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
		})
		if err != nil {
			return nil, fmt.Errorf("describe stream of %s: %w", c.t.table, err)
		}
		all = append(all, out.StreamDescription.Shards...)
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return all, nil
		}
	}
}

type checkpointItem struct {
	PK      string `dynamodbav:"pk"`
	Seq     string `dynamodbav:"seq"`
	Updated int64  `dynamodbav:"updated_ms"`
}

func checkpointKey(shard string) string { return "checkpoint#" + shard }

// iterator reads the shard's checkpoint and returns an iterator just after
// it, or at the shard's oldest record (TRIM_HORIZON) when there is none.
func (c *Consumer) iterator(ctx context.Context, arn, shard string) (*string, error) {
	out, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return c.t.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.t.state), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{attrPK: &types.AttributeValueMemberS{Value: checkpointKey(shard)}}})
	})
	if err != nil {
		return nil, fmt.Errorf("read checkpoint of shard %s: %w", shard, err)
	}
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shard), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon}
	if out.Item != nil {
		var cp checkpointItem
		if err := attributevalue.UnmarshalMap(out.Item, &cp); err != nil {
			return nil, fmt.Errorf("checkpoint of shard %s: %w", shard, err)
		}
		c.mu.Lock()
		c.cp[shard] = cp.Seq
		c.mu.Unlock()
		in.ShardIteratorType, in.SequenceNumber = stypes.ShardIteratorTypeAfterSequenceNumber, aws.String(cp.Seq)
	}
	it, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodbstreams.GetShardIteratorOutput, error) {
		return c.t.streams.GetShardIterator(ctx, in)
	})
	if err != nil {
		return nil, fmt.Errorf("iterator of shard %s: %w", shard, err)
	}
	return it.ShardIterator, nil
}

// drain reads the shard until a page comes back empty (the shard is open and
// read up to now) or the shard ends (nil iterator), handling every record.
// Records that fire nothing are checkpointed once per page, not one by one:
// re-reading a few of them after a crash is harmless, a write per change is
// not free.
func (c *Consumer) drain(ctx context.Context, shard string, it *string) (*string, error) {
	for it != nil {
		out, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodbstreams.GetRecordsOutput, error) {
			return c.t.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
		})
		if err != nil {
			return nil, fmt.Errorf("read shard %s: %w", shard, err)
		}
		pending := ""
		for _, r := range out.Records {
			seq := aws.ToString(r.Dynamodb.SequenceNumber)
			k := Classify(r)
			if k != KindTTLDelete {
				c.mu.Lock()
				c.stats.Ignored[k]++
				c.mu.Unlock()
				pending = seq
				continue
			}
			if err := c.fire(ctx, shard, r); err != nil {
				return nil, err
			}
			pending = ""
		}
		if pending != "" {
			if err := c.commit(ctx, shard, pending, nil, nil); err != nil {
				return nil, err
			}
		}
		it = out.NextShardIterator
		if len(out.Records) == 0 {
			return it, nil
		}
	}
	return nil, nil
}

// fire runs the handler for one TTL deletion, then commits the fire (or, when
// the handler keeps failing, sends the record to the dead-letter queue and
// commits it as dead).
func (c *Consumer) fire(ctx context.Context, shard string, r stypes.Record) error {
	now := time.Now()
	img, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.OldImage)
	if err != nil {
		return fmt.Errorf("shard %s record %s: %w", shard, aws.ToString(r.Dynamodb.SequenceNumber), err)
	}
	var ti timerItem
	if err := attributevalue.UnmarshalMap(img, &ti); err != nil {
		return fmt.Errorf("shard %s record %s: not a timer: %w", shard, aws.ToString(r.Dynamodb.SequenceNumber), err)
	}
	due := time.Unix(ti.Due, 0)
	f := Fire{ID: ti.ID, Payload: ti.Payload, Due: due, FiredAt: now, Delay: now.Sub(due), Shard: shard,
		Seq: aws.ToString(r.Dynamodb.SequenceNumber), Every: time.Duration(ti.Every) * time.Second}
	var herr error
	if c.o.Handler != nil {
		for i := range c.o.Attempts {
			if herr = c.o.Handler(ctx, f); herr == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := wait.Sleep(ctx, c.o.Backoff<<i); err != nil {
				return err
			}
		}
	}
	rec := fireItem{PK: fireKey(f.ID, ti.Due), ID: f.ID, Due: ti.Due, FiredMS: now.UnixMilli(), Shard: shard, Seq: f.Seq}
	var next *Timer
	if herr != nil {
		if c.o.Queues == nil {
			return fmt.Errorf("timer %s (due %s): handler failed %d times and there is no dead-letter queue: %w", f.ID, due.UTC().Format(time.RFC3339), c.o.Attempts, herr)
		}
		body, err := json.Marshal(map[string]string{"timer_id": f.ID, "due": strconv.FormatInt(ti.Due, 10), "payload": f.Payload,
			"shard": shard, "seq": f.Seq, "error": herr.Error()})
		if err != nil {
			return err
		}
		if err := c.o.Queues.SendBatch(ctx, c.o.DLQ, []string{string(body)}); err != nil {
			return fmt.Errorf("timer %s: dead-letter it: %w", f.ID, err)
		}
		rec.Dead = true
	} else if f.Every > 0 {
		next = &Timer{ID: f.ID, Due: due.Add(f.Every), Payload: f.Payload, Every: f.Every}
	}
	if err := c.commit(ctx, shard, f.Seq, &rec, next); err != nil {
		return err
	}
	c.mu.Lock()
	if rec.Dead {
		c.stats.DeadLettered++
	} else {
		c.stats.Fired++
	}
	c.mu.Unlock()
	if !rec.Dead && c.o.OnFire != nil {
		c.o.OnFire(f)
	}
	c.until()
	return nil
}

// commit moves the shard's checkpoint to seq and, in the same transaction,
// records the fire (if rec is not nil) and schedules the next timer (if next
// is not nil). A fire already recorded is a duplicate: counted, and the
// checkpoint moved alone. A transaction conflict is retried.
func (c *Consumer) commit(ctx context.Context, shard, seq string, rec *fireItem, next *Timer) error {
	c.mu.Lock()
	prev := c.cp[shard]
	c.mu.Unlock()
	cp, err := attributevalue.MarshalMap(checkpointItem{PK: checkpointKey(shard), Seq: seq, Updated: time.Now().UnixMilli()})
	if err != nil {
		return err
	}
	// A checkpoint is written once (no item yet) or moved on from the one
	// this consumer read (seq = prev); a fire record is written once.
	absent, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(attrPK))).Build()
	if err != nil {
		return fmt.Errorf("build checkpoint condition: %w", err)
	}
	cpCond := absent
	if prev != "" {
		if cpCond, err = expression.NewBuilder().WithCondition(expression.Name("seq").Equal(expression.Value(prev))).Build(); err != nil {
			return fmt.Errorf("build checkpoint condition: %w", err)
		}
	}
	cpPut := types.Put{TableName: aws.String(c.t.state), Item: cp, ConditionExpression: cpCond.Condition(),
		ExpressionAttributeNames: cpCond.Names(), ExpressionAttributeValues: cpCond.Values()}
	items := []types.TransactWriteItem{{Put: &cpPut}}
	if rec != nil {
		fi, err := attributevalue.MarshalMap(rec)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(c.t.state), Item: fi,
			ConditionExpression: absent.Condition(), ExpressionAttributeNames: absent.Names()}})
		if next != nil {
			ni, err := next.item()
			if err != nil {
				return err
			}
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(c.t.table), Item: ni}})
		}
	}
	err = retry(ctx, 5, func() error {
		_, err := dynamo.Call(ctx, c.t.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
			return c.t.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		})
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			for i, r := range tce.CancellationReasons {
				if aws.ToString(r.Code) != "ConditionalCheckFailed" {
					continue
				}
				if i == 0 {
					return fmt.Errorf("shard %s: %w (it is not at %q): one consumer per timers table", shard, ErrCheckpointMoved, prev)
				}
				return errDuplicate
			}
			return err // a conflict: retried
		}
		return err
	})
	if errors.Is(err, errDuplicate) {
		c.mu.Lock()
		c.stats.Duplicates++
		c.mu.Unlock()
		return c.commit(ctx, shard, seq, nil, nil)
	}
	if err != nil {
		return fmt.Errorf("commit shard %s at %s: %w", shard, seq, err)
	}
	c.mu.Lock()
	c.cp[shard] = seq
	c.mu.Unlock()
	return nil
}

var errDuplicate = errors.New("fire already recorded")
