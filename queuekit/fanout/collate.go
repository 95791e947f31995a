package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// SliceResult is one done slice, as the collator hands it to Combine.
type SliceResult struct {
	Slice  int
	Key    string
	Result json.RawMessage
}

// Final is a run's collated result.
type Final struct {
	Run          string `json:"run"`
	Slices       int    `json:"slices"`
	Processed    int    `json:"processed"`     // slices with a result
	DeadLettered []int  `json:"dead_lettered"` // slice indices, ascending
	// LastErrors is the cause each dead-lettered slice's last failed
	// attempt recorded, by slice index.
	LastErrors map[int]string `json:"last_errors,omitempty"`
	// DeadByFailure are the dead-lettered slices of which at least one
	// attempt recorded a failure (LastErrors has the last): their own work
	// failed. DeadByCrash are those with no failure recorded
	// (LastErrors says NoCauseRecorded): every receive ended with its
	// processor gone (killed, crashed, stopped past the visibility
	// timeout), so SQS's maxReceiveCount counted crashes, not failures. The
	// slice itself may be healthy: redrive it (Redrive, or the CLI's
	// --resume --redrive) once the processors are stable, and size
	// maxReceiveCount for crashes as well as failures.
	DeadByFailure []int           `json:"dead_by_failure"`
	DeadByCrash   []int           `json:"dead_by_crash"`
	Result        json.RawMessage `json:"result"`
}

// Complete reports whether every slice is done or dead-lettered.
func (f Final) Complete() bool { return f.Processed+len(f.DeadLettered) == f.Slices }

// Collator writes a run's final result when every slice is done or
// dead-lettered.
type Collator struct {
	Queues  *sqsqueue.Client
	Dead    sqsqueue.Queue
	Results *Results
	Run     string
	Slices  int
	// Combine turns the done slices, in slice order, into the final result;
	// dead lists the dead-lettered slices' keys.
	Combine func(done []SliceResult, dead []string) (json.RawMessage, error)
}

// Collate marks the run's dead-lettered slices, reads every slice's item and,
// when all are done or dead, combines them and puts the final result (only
// over a less complete one). It returns the collation so far and whether it
// is complete.
func (c *Collator) Collate(ctx context.Context) (Final, bool, error) {
	if err := c.markDead(ctx); err != nil {
		return Final{}, false, err
	}
	items, err := c.Results.slices(ctx, c.Run)
	if err != nil {
		return Final{}, false, err
	}
	f := Final{Run: c.Run, Slices: c.Slices, DeadLettered: []int{}, DeadByFailure: []int{}, DeadByCrash: []int{}}
	var done []SliceResult
	var deadKeys []string
	for _, it := range items {
		switch it.Status {
		case statusDone:
			done = append(done, SliceResult{Slice: it.Slice, Key: it.Key, Result: it.Result})
		case statusDead:
			f.DeadLettered = append(f.DeadLettered, it.Slice)
			deadKeys = append(deadKeys, it.Key)
			if f.LastErrors == nil {
				f.LastErrors = map[int]string{}
			}
			f.LastErrors[it.Slice] = it.Error
			if it.Error == "" || it.Error == NoCauseRecorded {
				f.DeadByCrash = append(f.DeadByCrash, it.Slice)
			} else {
				f.DeadByFailure = append(f.DeadByFailure, it.Slice)
			}
		}
	}
	f.Processed = len(done)
	sort.Ints(f.DeadLettered)
	sort.Ints(f.DeadByFailure)
	sort.Ints(f.DeadByCrash)
	if !f.Complete() {
		return f, false, nil
	}
	sort.Slice(done, func(i, j int) bool { return done[i].Slice < done[j].Slice })
	if f.Result, err = c.Combine(done, deadKeys); err != nil {
		return f, false, fmt.Errorf("collate run %s: %w", c.Run, err)
	}
	av, err := attributevalue.MarshalMap(finalItem{Run: c.Run, Slice: finalSlice, Slices: f.Slices, Processed: f.Processed,
		Dead: f.DeadLettered, Result: f.Result, WrittenMS: time.Now().UnixMilli()})
	if err != nil {
		return f, false, err
	}
	cond := expression.AttributeNotExists(expression.Name(attrRun)).Or(expression.Name("processed").LessThan(expression.Value(f.Processed)))
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return f, false, err
	}
	_, err = dynamo.Call(ctx, c.Results.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return c.Results.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(c.Results.table), Item: av,
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) { // failed condition: an equal collation is there already
		return f, false, fmt.Errorf("write final result of run %s: %w", c.Run, err)
	}
	return f, true, nil
}

// markDead receives the dead-letter queue's messages of this run, puts a
// dead marker for each slice (only where no result is), and makes the
// messages visible again at once, so a redrive finds them.
func (c *Collator) markDead(ctx context.Context) error {
	var seen []stypes.ChangeMessageVisibilityBatchRequestEntry
	defer func() {
		for start := 0; start < len(seen); start += 10 {
			end := min(start+10, len(seen))
			_, _ = c.Queues.SQS().ChangeMessageVisibilityBatch(context.WithoutCancel(ctx), &sqs.ChangeMessageVisibilityBatchInput{
				QueueUrl: aws.String(c.Dead.URL), Entries: seen[start:end]})
		}
	}()
	for {
		out, err := c.Queues.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.Dead.URL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 10})
		if err != nil {
			return fmt.Errorf("read dead-letter queue %s: %w", c.Dead.Name, c.Queues.Explain(err))
		}
		if len(out.Messages) == 0 {
			return nil
		}
		for _, m := range out.Messages {
			seen = append(seen, stypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(len(seen))), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
			var p Pointer
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &p) != nil || p.Run != c.Run {
				continue
			}
			if err := c.Results.markDead(ctx, p); err != nil {
				return err
			}
		}
	}
}

// Redrive sends a run's dead-lettered slices back to the work queue after a
// fix: it first deletes the run's dead markers (so the collator waits for the
// slices again; a crash here leaves the messages in the dead-letter queue,
// where the next collation marks them again), then moves the messages with
// sqsqueue.Client.Redrive. It returns how many messages moved.
func (c *Collator) Redrive(ctx context.Context, work sqsqueue.Queue) (int, error) {
	items, err := c.Results.slices(ctx, c.Run)
	if err != nil {
		return 0, err
	}
	dead, err := expression.NewBuilder().WithCondition(expression.Name(attrStatus).Equal(expression.Value(statusDead))).Build()
	if err != nil {
		return 0, fmt.Errorf("redrive run %s: build the dead-marker condition: %w", c.Run, err)
	}
	for _, it := range items {
		if it.Status != statusDead {
			continue
		}
		_, err := dynamo.Call(ctx, c.Results.db, func(ctx context.Context) (*dynamodb.DeleteItemOutput, error) {
			return c.Results.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(c.Results.table),
				Key: map[string]types.AttributeValue{attrRun: &types.AttributeValueMemberS{Value: c.Run},
					attrSlice: &types.AttributeValueMemberN{Value: strconv.Itoa(it.Slice)}},
				ConditionExpression: dead.Condition(), ExpressionAttributeNames: dead.Names(), ExpressionAttributeValues: dead.Values()})
		})
		var ccf *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &ccf) {
			return 0, fmt.Errorf("redrive run %s: clear dead marker of slice %d: %w", c.Run, it.Slice, err)
		}
	}
	n, err := c.Queues.Redrive(ctx, c.Dead, work)
	if err != nil {
		return n, fmt.Errorf("redrive run %s: %w", c.Run, err)
	}
	return n, nil
}
