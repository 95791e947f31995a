// Package dynamo is the DynamoDB part of the AWS layer: a Table (one table
// reached through one client, with the call and wait timeouts), Call (one
// call under the timeout, its error mapped to *awsapi.UnreachableError,
// *awsapi.WrongServerError or *TableMissingError), table creation and
// deletion with the SDK's waiters, BatchWriteItem with resends backed off
// with full jitter, paged Query and Scan, and the Streams client. The job
// catalog and the executors build on it; none of them opens a client of
// its own.
package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// Options configure a Table. The zero value of a field means its default.
type Options struct {
	// CallTimeout bounds every single call (default 30 s).
	CallTimeout time.Duration
	// WaitTimeout bounds waiting for a table to become active or deleted
	// (default 2 min).
	WaitTimeout time.Duration
	// Writers is the number of parallel BatchWriteItem requests (default 4).
	Writers int
	// MaxAttempts is how many times one batch is sent while DynamoDB
	// returns UnprocessedItems (default 10).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the exponential backoff with full
	// jitter between attempts (defaults 25 ms and 2 s).
	BaseBackoff, MaxBackoff time.Duration
	// MissingHint, when set, says how to create a missing table; it
	// completes the message of *TableMissingError.
	MissingHint func(table, endpoint string) string
	// RideOut, when set, makes the client's retryer RideOut's (see
	// RideOut): the executors' tables, which keep going through network
	// outages. Unset, the client keeps the SDK's standard retryer.
	RideOut *RideOut
	// ClientOptions are applied last to the SDK client's options.
	ClientOptions []func(*dynamodb.Options)
}

// withDefaults returns the options with each zero field set to its default.
func (o Options) withDefaults() Options {
	o.CallTimeout = cmp.Or(o.CallTimeout, 30*time.Second)
	o.WaitTimeout = cmp.Or(o.WaitTimeout, 2*time.Minute)
	o.Writers = cmp.Or(o.Writers, 4)
	o.MaxAttempts = cmp.Or(o.MaxAttempts, 10)
	o.BaseBackoff = cmp.Or(o.BaseBackoff, 25*time.Millisecond)
	o.MaxBackoff = cmp.Or(o.MaxBackoff, 2*time.Second)
	return o
}

// Table is one DynamoDB table and the client that reaches it. It is safe
// for concurrent use.
type Table struct {
	conn   *awsapi.Conn
	client *dynamodb.Client
	name   string
	opts   Options
}

// New builds the DynamoDB client of conn (a local endpoint also gets no
// response checksum validation: DynamoDB Local omits checksums on errors and
// the SDK would log a warning each time) for the table name. It does not
// contact DynamoDB.
func New(conn *awsapi.Conn, name string, opts Options) *Table {
	opts = opts.withDefaults()
	fns := []func(*dynamodb.Options){func(d *dynamodb.Options) {
		d.BaseEndpoint = conn.BaseEndpoint()
		d.APIOptions = append(d.APIOptions, awsapi.CheckAnswers(missing))
		if opts.RideOut != nil {
			d.Retryer = opts.RideOut.Retryer()
		}
		d.Retryer = retryConflicts(d.Retryer)
		if conn.Local {
			d.DisableValidateResponseChecksum = true
		}
	}}
	return &Table{conn: conn, client: dynamodb.NewFromConfig(conn.Config, append(fns, opts.ClientOptions...)...), name: name, opts: opts}
}

// retryConflicts makes the client's retryer also retry
// TransactionConflictException, which the SDK's standard retryer does not:
// DynamoDB refuses a PutItem, UpdateItem or DeleteItem on an item an
// in-flight transaction holds with it, before the write is applied
// ("Transaction conflict handling in DynamoDB",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling),
// so sending it again is safe. Without this, the night executor's run
// heartbeat (an UpdateItem of the POOL item that every claim and end
// transaction also writes) read the conflict as "run replaced by another
// run" and stopped the night (seen through queuekit/limits, which answers
// conflicts as AWS does; DynamoDB Local serialises them instead).
func retryConflicts(r aws.Retryer) aws.Retryer {
	if r == nil {
		r = retry.NewStandard()
	}
	return retry.AddWithErrorCodes(r, "TransactionConflictException")
}

// RidingOut returns a table of the same endpoint, name and options whose
// client retries by the policy p (see RideOut): a client of its own, so the
// table it was made from keeps its retryer.
func (t *Table) RidingOut(p RideOut) *Table {
	p = p.WithDefaults()
	opts := t.opts
	opts.RideOut = &p
	return New(t.conn, t.name, opts)
}

// Named returns a table of the same client, endpoint and options under
// another name: a companion table.
func (t *Table) Named(name string) *Table {
	s := *t
	s.name = name
	return &s
}

// Open returns a table of the same client, endpoint and options under
// another name, as Named does, once the name is one DynamoDB accepts: the
// handle through which a package reaches a table of its own (an executor's,
// the fleet's, the timers', a result store's).
func (t *Table) Open(name string) (*Table, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("table name %q: DynamoDB wants 3 to 255 characters from a-z, A-Z, 0-9, '_', '-', '.'", name)
	}
	return t.Named(name), nil
}

// ValidName reports whether DynamoDB accepts name as a table name: 3 to
// 255 characters from a-z, A-Z, 0-9, '_', '-' and '.'.
func ValidName(name string) bool {
	if len(name) < 3 || len(name) > 255 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Name returns the table name.
func (t *Table) Name() string { return t.name }

// Client returns the SDK client.
func (t *Table) Client() *dynamodb.Client { return t.client }

// Conn returns the configuration the client was built from.
func (t *Table) Conn() *awsapi.Conn { return t.conn }

// Options returns the table's options, defaults filled in.
func (t *Table) Options() Options { return t.opts }

// Where names the endpoint for messages.
func (t *Table) Where() string { return t.conn.Where() }

// Streams returns a DynamoDB Streams client of the same configuration: on
// a local endpoint the same URL (DynamoDB Local serves both APIs) and dummy
// credentials; on AWS the standard chain, which resolves the streams
// endpoint of the region (or AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
func (t *Table) Streams() *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(t.conn.Config, func(o *dynamodbstreams.Options) {
		if t.conn.Local {
			o.BaseEndpoint = aws.String(t.conn.URL)
		}
	})
}

// TableMissingError says that a table does not exist.
type TableMissingError struct {
	Table    string
	Endpoint string
	Hint     string // how to create it; may be empty
	Err      error
}

func (e *TableMissingError) Error() string {
	if e.Hint == "" {
		return fmt.Sprintf("table %s does not exist at %s", e.Table, e.Endpoint)
	}
	return fmt.Sprintf("table %s does not exist at %s: %s", e.Table, e.Endpoint, e.Hint)
}

// Unwrap returns the SDK error.
func (e *TableMissingError) Unwrap() error { return e.Err }

// Call runs one DynamoDB call under the table's call timeout and turns
// transport errors into *awsapi.UnreachableError, an answer that is not
// DynamoDB's into *awsapi.WrongServerError and a missing table into
// *TableMissingError.
func Call[T any](ctx context.Context, t *Table, fn func(ctx context.Context) (T, error)) (T, error) {
	why := t.deadline(ctx, time.Now(), t.opts.CallTimeout, "the call timeout")
	ctx, cancel := context.WithTimeout(ctx, t.opts.CallTimeout)
	defer cancel()
	out, err := fn(ctx)
	if err != nil {
		var zero T
		return zero, t.explain(ctx, err, why)
	}
	return out, nil
}

// deadline names the deadline that ends a wait begun at start under ctx
// and a timeout of its own (named what): that timeout, or the caller's
// deadline (ctx's) when it comes first, so that an error says which one
// expired ("no answer within 1.5s, the caller's deadline (the call
// timeout is 30s)"), never a timeout that did not.
func (t *Table) deadline(ctx context.Context, start time.Time, timeout time.Duration, what string) string {
	if d, ok := ctx.Deadline(); ok && d.Before(start.Add(timeout)) {
		return fmt.Sprintf("no answer within %s, the caller's deadline (%s is %s)", max(d.Sub(start), 0).Round(time.Millisecond), what, timeout)
	}
	return fmt.Sprintf("no answer within %s, %s", timeout, what)
}

// Explain maps err as Call does; ctx is the context the call ran under.
// Its deadline, if it expired, reads as "no answer before the deadline"
// (Call itself names which deadline and how long it was). Other errors
// are returned unchanged.
func (t *Table) Explain(ctx context.Context, err error) error {
	return t.explain(ctx, err, "no answer before the deadline")
}

// explain is Explain with why as the reason of an expired deadline.
func (t *Table) explain(ctx context.Context, err error, why string) error {
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		hint := ""
		if t.opts.MissingHint != nil {
			hint = t.opts.MissingHint(t.name, t.Where())
		}
		return &TableMissingError{Table: t.name, Endpoint: t.Where(), Hint: hint, Err: err}
	}
	if mapped := t.conn.Explain(err); mapped != err {
		return mapped
	}
	if ctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded) {
		return &awsapi.UnreachableError{Service: t.conn.Service, Endpoint: t.Where(),
			Reason: why, Local: t.conn.Local, Err: err}
	}
	return err
}

// CreateAndWait creates the table as in describes it (its TableName is
// replaced by the table's), accepts a table that already exists, and waits
// with the SDK's TableExistsWaiter, within the wait timeout, until it is
// active. It returns the table's description for the caller's schema checks.
func (t *Table) CreateAndWait(ctx context.Context, in *dynamodb.CreateTableInput) (*types.TableDescription, error) {
	req := *in
	req.TableName = aws.String(t.name)
	_, err := Call(ctx, t, func(ctx context.Context) (*dynamodb.CreateTableOutput, error) {
		return t.client.CreateTable(ctx, &req)
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return nil, fmt.Errorf("create table %s at %s: %w", t.name, t.Where(), err)
	}
	out, err := t.waitActive(ctx)
	if err != nil {
		return nil, fmt.Errorf("create table %s at %s: %w", t.name, t.Where(), err)
	}
	return out.Table, nil
}

func (t *Table) waitActive(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
	why := t.deadline(ctx, time.Now(), t.opts.WaitTimeout, "the wait timeout")
	ctx, cancel := context.WithTimeout(ctx, t.opts.WaitTimeout)
	defer cancel()
	w := dynamodb.NewTableExistsWaiter(t.client, func(o *dynamodb.TableExistsWaiterOptions) {
		if t.conn.Local { // Local creates tables at once; do not sleep the AWS default 20 s
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
		}
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)}, t.opts.WaitTimeout)
	if err != nil {
		return nil, fmt.Errorf("wait until active: %w", t.explain(ctx, err, why))
	}
	return out, nil
}

// DeleteAndWait deletes the table and waits with the SDK's
// TableNotExistsWaiter until it is gone. A table that does not exist is fine.
func (t *Table) DeleteAndWait(ctx context.Context) error {
	_, err := Call(ctx, t, func(ctx context.Context) (*dynamodb.DeleteTableOutput, error) {
		return t.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.name)})
	})
	var missing *TableMissingError
	if errors.As(err, &missing) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete table %s at %s: %w", t.name, t.Where(), err)
	}
	why := t.deadline(ctx, time.Now(), t.opts.WaitTimeout, "the wait timeout")
	wctx, cancel := context.WithTimeout(ctx, t.opts.WaitTimeout)
	defer cancel()
	w := dynamodb.NewTableNotExistsWaiter(t.client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		if t.conn.Local {
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
		}
	})
	if err := w.Wait(wctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)}, t.opts.WaitTimeout); err != nil {
		return fmt.Errorf("delete table %s at %s: wait until gone: %w", t.name, t.Where(), t.explain(wctx, err, why))
	}
	return nil
}

// SameKeys reports whether the table t is keyed exactly by want (the same
// attributes as HASH and RANGE, in any order).
func SameKeys(t *types.TableDescription, want []types.KeySchemaElement) bool {
	if t == nil || len(t.KeySchema) != len(want) {
		return false
	}
	for _, w := range want {
		found := false
		for _, k := range t.KeySchema {
			found = found || (aws.ToString(k.AttributeName) == aws.ToString(w.AttributeName) && k.KeyType == w.KeyType)
		}
		if !found {
			return false
		}
	}
	return true
}

// UpdateItem sends one UpdateItem of expr (its update, and its condition
// if it has one) on the item at key, under Call. optFns set what the caller
// wants back on the input (ReturnValues, ReturnConsumedCapacity,
// ReturnValuesOnConditionCheckFailure), as the SDK's own optFns do on the
// client.
func (t *Table) UpdateItem(ctx context.Context, key map[string]types.AttributeValue, expr expression.Expression, optFns ...func(*dynamodb.UpdateItemInput)) (*dynamodb.UpdateItemOutput, error) {
	in := &dynamodb.UpdateItemInput{TableName: aws.String(t.name), Key: key,
		ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	for _, fn := range optFns {
		fn(in)
	}
	return Call(ctx, t, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) { return t.client.UpdateItem(ctx, in) })
}
