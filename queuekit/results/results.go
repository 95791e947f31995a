// Package results is a store for what the night's work produces, one item
// per job, that refuses a write carrying a stale fencing token: the fencing
// of package lease carried past the execution table to the store the work
// writes to, as Kleppmann's "How to do distributed locking" asks. A worker
// that slept through its lease and wakes up to write its result is refused
// by the store itself, whatever it believes, because the job's token has
// moved on since (lease.Job.Token, which grows across the night's runs
// too).
//
// The rule is one condition on the write: the item is new, or its
// fence_token is at most the writer's. A newer holder overwrites an older
// one's result; an older holder never overwrites a newer one's; the same
// holder may write again (an SDK retry after a lost reply).
package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// TableSuffix names the store's table after the catalog's:
// <catalog table>_results.
const TableSuffix = "_results"

// Result is one job's result, as the store keeps it.
type Result struct {
	BatchDate string `dynamodbav:"batch_date"`
	JobID     string `dynamodbav:"job_id"`
	Token     int64  `dynamodbav:"fence_token"` // the writer's fencing token (lease.Job.Token)
	Run       string `dynamodbav:"run_id"`
	Worker    string `dynamodbav:"worker"`
	Attempt   int    `dynamodbav:"attempt"`
	Value     string `dynamodbav:"value"`
	AtMS      int64  `dynamodbav:"at_ms"` // when it was written, Unix ms (the writer's clock)
}

// ErrStale is matched (errors.Is) by a write refused for its token.
var ErrStale = errors.New("stale fencing token")

// StaleError is a write refused because the store already holds the
// job's result from a newer token.
type StaleError struct {
	JobID          string `json:"job_id"`
	Token          int64  `json:"token"`         // the refused writer's
	Stored         int64  `json:"stored_token"`  // the token of the result in the store
	StoredWorker   string `json:"stored_worker"` // who wrote it
	RefusedWorker  string `json:"worker"`
	StoredAttempt  int    `json:"stored_attempt"`
	RefusedAttempt int    `json:"attempt"`
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("result of job %s from worker %s (attempt %d, token %d) refused: the store holds the result of worker %s (attempt %d, token %d), a newer token",
		e.JobID, e.RefusedWorker, e.RefusedAttempt, e.Token, e.StoredWorker, e.StoredAttempt, e.Stored)
}

// Is matches ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Store is the result store of a catalog's nights.
type Store struct{ db *dynamo.Table }

// spec is the store's table: keyed by batch_date and job_id.
var spec = dynamo.Spec{Key: dynamo.Key{Partition: dynamo.S("batch_date"), Sort: dynamo.S("job_id")}}

// Open returns the store next to the catalog's table: a table handle of the
// AWS layer on the catalog's endpoint, keyed by batch_date and job_id. It
// does not contact DynamoDB.
func Open(ctx context.Context, cat *catalog.Catalog) (*Store, error) {
	db, err := cat.DB().Open(cat.Table() + TableSuffix)
	if err != nil {
		return nil, fmt.Errorf("result store: %w", err)
	}
	return &Store{db: db}, nil
}

// Table is the store's table name.
func (s *Store) Table() string { return s.db.Name() }

// CreateTable creates the store's table if missing; one that exists with
// other keys is an error.
func (s *Store) CreateTable(ctx context.Context) error {
	in := spec.Input()
	t, err := s.db.CreateAndWait(ctx, in)
	if err != nil {
		return err
	}
	if !dynamo.SameKeys(t, in.KeySchema) {
		return fmt.Errorf("table %s at %s exists with another key schema; want batch_date (HASH) and job_id (RANGE): drop it or choose another table name", s.db.Name(), s.db.Where())
	}
	return nil
}

// DeleteTable deletes the store's table.
func (s *Store) DeleteTable(ctx context.Context) error { return s.db.DeleteAndWait(ctx) }

// Put writes r if the store holds no result of its job or one of a token
// at most r.Token; otherwise it returns a *StaleError and writes nothing.
func (s *Store) Put(ctx context.Context, r Result) error {
	if r.AtMS == 0 {
		r.AtMS = time.Now().UnixMilli()
	}
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("marshal result of %s: %w", r.JobID, err)
	}
	expr, err := expression.NewBuilder().WithCondition(fresh(r.Token)).Build()
	if err != nil {
		return fmt.Errorf("build result write: %w", err)
	}
	_, err = dynamo.Call(ctx, s.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return s.db.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.db.Name()), Item: item,
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var old Result
		_ = attributevalue.UnmarshalMap(ccf.Item, &old)
		return &StaleError{JobID: r.JobID, Token: r.Token, Stored: old.Token, StoredWorker: old.Worker, RefusedWorker: r.Worker,
			StoredAttempt: old.Attempt, RefusedAttempt: r.Attempt}
	}
	if err != nil {
		return fmt.Errorf("write result of %s: %w", r.JobID, err)
	}
	return nil
}

// fresh is the store's one rule: no result yet, or one of a token at most
// the writer's.
func fresh(token int64) expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name("job_id")).
		Or(expression.Name("fence_token").LessThanEqual(expression.Value(token)))
}

// Get reads a job's result with a strongly consistent read; ok is false
// when there is none.
func (s *Store) Get(ctx context.Context, date, jobID string) (Result, bool, error) {
	out, err := dynamo.Call(ctx, s.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return s.db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.db.Name()), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"batch_date": &types.AttributeValueMemberS{Value: date}, "job_id": &types.AttributeValueMemberS{Value: jobID}}})
	})
	if err != nil {
		return Result{}, false, fmt.Errorf("read result of %s: %w", jobID, err)
	}
	if out.Item == nil {
		return Result{}, false, nil
	}
	var r Result
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return Result{}, false, fmt.Errorf("decode result of %s: %w", jobID, err)
	}
	return r, true, nil
}

// Work wraps work (nil: Sleep) so that each attempt that succeeds
// writes its result (value(j), or "done" when value is nil) to the store
// under the attempt's token, for night date. The write is sent even when
// the attempt's context has ended (its lease lost): the store, not the
// worker, decides. A refused write is the attempt's error (it matches
// ErrStale), so the attempt does not count as a success.
func (s *Store) Work(date string, work lease.WorkFunc, value func(lease.Job) string) lease.WorkFunc {
	if work == nil {
		work = Sleep
	}
	return func(ctx context.Context, j lease.Job, d time.Duration) error {
		if err := work(ctx, j, d); err != nil {
			return err
		}
		v := "done"
		if value != nil {
			v = value(j)
		}
		return s.Put(context.WithoutCancel(ctx), Result{BatchDate: date, JobID: j.ID, Token: j.Token, Run: j.Run,
			Worker: j.Worker, Attempt: j.Attempt, Value: v})
	}
}

// Sleep is a work function for demonstrations of late writes: it sleeps
// for d, timed from its call on this process's monotonic clock, and counts
// as done once d has passed, even if ctx ended meanwhile. A process stopped
// (SIGSTOP) past its lease wakes up with its work finished and its context
// cancelled, in whichever order its timers fire; Sleep returns nil either
// way, so Store.Work sends the late result and the store decides. It
// returns ctx's error only when ctx ended before d had passed.
func Sleep(ctx context.Context, _ lease.Job, d time.Duration) error {
	done := time.Now().Add(d)
	if err := wait.Sleep(ctx, d); err != nil && time.Now().Before(done) {
		return err
	}
	return nil
}
