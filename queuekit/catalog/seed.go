package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/measure"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// BatchSize is the most items one BatchWriteItem request may carry.
const BatchSize = dynamo.BatchSize

// MaxPadding is the largest padding WithPadding accepts: it keeps an item well
// under DynamoDB's 400 KB item limit.
const MaxPadding = 350 * 1024

// SeedOption is one functional option of Seed, PutItems, PutEach and
// CheckSeed: a func(*SeedOptions), the SDK's optFns form. It is an alias,
// so the With helpers and a plain func literal mix.
type SeedOption = func(*SeedOptions)

// SeedOptions are the settings of one Seed or PutEach call; each has a
// WithX option.
type SeedOptions struct {
	// Progress, if set, gets items written (Done) of all (Total) after
	// every batch (WithProgress).
	Progress func(queuekit.Progress)
	// Padding is the size of the "padding" attribute added to every item
	// (WithPadding).
	Padding int
}

// WithProgress reports progress after every written batch (or item, for
// PutEach): items written (Done) of all (Total). Calls are serialized and
// Done never decreases.
func WithProgress(fn func(queuekit.Progress)) SeedOption {
	return func(o *SeedOptions) { o.Progress = fn }
}

// WithPadding adds a string attribute "padding" of n bytes to every item, to
// make items big enough for Query and Scan to page (1 MB per page) and for
// capacity to show the effect of item size.
func WithPadding(n int) SeedOption { return func(o *SeedOptions) { o.Padding = n } }

// SeedReport describes a finished seed: measure.SeedReport, under the name
// this package always had.
type SeedReport = measure.SeedReport

// PricePerMillionWrites is the on-demand price of one million write request
// units, in dollars, from the module's one price table.
//
// Deprecated: use prices.Table2026.OnDemandPerMillionWrites (or
// SeedReport.Cost); this name is kept for code written against it.
var PricePerMillionWrites = prices.Table2026.OnDemandPerMillionWrites

// WriteUnits sums consumed capacity as ReturnConsumedCapacity INDEXES reports
// it: the total, and the part of it spent on indexes (so the table's part is
// total - index). The lease and fleet executors count their writes with it.
func WriteUnits(ccs ...types.ConsumedCapacity) (total, index float64) {
	return dynamo.WriteUnits(ccs...)
}

// Seed writes jobs into the table with BatchWriteItem: 25 items a request,
// several writers in parallel, and items returned as UnprocessedItems sent
// again after an exponential backoff with full jitter. Every job is validated
// before the first write; on any problem nothing is written. Writing the same
// jobs twice leaves the same table (a put replaces the item with its key).
// When retries run out, or a request fails, Seed returns an *UnwrittenError
// with the number of items left unwritten.
func (c *Catalog) Seed(ctx context.Context, jobs []queuekit.Job, opts ...SeedOption) (SeedReport, error) {
	so, items, err := c.prepare(jobs, opts)
	if err != nil {
		return SeedReport{}, err
	}
	return c.writeItems(ctx, items, so)
}

// PutItems writes items of any shape (each must carry the table's key
// attributes) with the same machinery as Seed: BatchWriteItem, 25 items a
// request, parallel writers, unprocessed items sent again with backoff. It is
// for tables keyed WithItemKeys; for jobs use Seed, which validates them.
// Items must not repeat a key within one call.
func (c *Catalog) PutItems(ctx context.Context, items []map[string]types.AttributeValue, opts ...SeedOption) (SeedReport, error) {
	return PutItemsTo(ctx, c.db, items, opts...)
}

// PutItemsTo is PutItems on a table handle of the AWS layer rather than a
// catalog: for packages of this module with a table of their own (the
// fleet's SubmitJobs), which report their writes as a seed does.
func PutItemsTo(ctx context.Context, t *dynamo.Table, items []map[string]types.AttributeValue, opts ...SeedOption) (SeedReport, error) {
	var so SeedOptions
	for _, fn := range opts {
		fn(&so)
	}
	return writeItems(ctx, t, items, so)
}

func (c *Catalog) writeItems(ctx context.Context, items []map[string]types.AttributeValue, so SeedOptions) (SeedReport, error) {
	return writeItems(ctx, c.db, items, so)
}

// writeItems writes marshalled items with the AWS layer's batch writer
// (see Seed) and reports what it took.
func writeItems(ctx context.Context, t *dynamo.Table, items []map[string]types.AttributeValue, so SeedOptions) (SeedReport, error) {
	total := len(items)
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	var rep SeedReport
	began := time.Now()
	err := t.Write(ctx, reqs, dynamo.OnWritten(func(w dynamo.Written) { // serialized by Write
		rep.Items += w.Items
		rep.Requests += w.Requests
		rep.Retried += w.Retried
		rep.WriteUnits += w.Units
		rep.IndexWriteUnits += w.IndexUnits
		if so.Progress != nil && w.Items > 0 {
			so.Progress(queuekit.Progress{Done: rep.Items, Total: total})
		}
	}))
	rep.Elapsed = time.Since(began)
	if err != nil {
		return rep, &UnwrittenError{Table: t.Name(), Unwritten: total - rep.Items, Total: total, Err: err}
	}
	return rep, nil
}

// PutEach writes jobs one PutItem after another: the slow baseline Seed is
// measured against. It validates every job first, as Seed does.
func (c *Catalog) PutEach(ctx context.Context, jobs []queuekit.Job, opts ...SeedOption) (SeedReport, error) {
	so, items, err := c.prepare(jobs, opts)
	if err != nil {
		return SeedReport{}, err
	}
	var rep SeedReport
	began := time.Now()
	for i, it := range items {
		out, err := call(ctx, c, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
			return c.db.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(c.opts.Table), Item: it,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		})
		rep.Requests++
		if err == nil && out.ConsumedCapacity != nil {
			units, indexUnits := WriteUnits(*out.ConsumedCapacity)
			rep.WriteUnits += units
			rep.IndexWriteUnits += indexUnits
		}
		if err != nil {
			rep.Elapsed = time.Since(began)
			return rep, &UnwrittenError{Table: c.opts.Table, Unwritten: len(items) - i, Total: len(items),
				Err: fmt.Errorf("put item %d: %w", i+1, err)}
		}
		rep.Items++
		if so.Progress != nil {
			so.Progress(queuekit.Progress{Done: rep.Items, Total: len(items)})
		}
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

// CheckSeed validates jobs exactly as Seed does before its first write
// (every job's fields, duplicate job ids, each item within DynamoDB's
// 400 KB and key limits with the options' padding), without contacting
// DynamoDB: a command calls it before creating the table, so bad input
// leaves nothing created and nothing written.
func (c *Catalog) CheckSeed(jobs []queuekit.Job, opts ...SeedOption) error {
	_, _, err := c.prepare(jobs, opts)
	return err
}

// checkItemSize refuses an item over DynamoDB's item or key size limits,
// naming the largest attribute.
func checkItemSize(loc string, it map[string]types.AttributeValue) error {
	if k, ok := it[queuekit.AttrWindowJobID].(*types.AttributeValueMemberS); ok && len(k.Value) > MaxSortKeyBytes {
		return &queuekit.FieldError{Location: loc, Field: queuekit.AttrWindowJobID, Value: fmt.Sprintf("%d bytes", len(k.Value)),
			Problem: fmt.Sprintf("a sort key is at most %d bytes in DynamoDB", MaxSortKeyBytes), Fix: "shorten job_id"}
	}
	if n := ItemSize(it); n > MaxItemBytes {
		name, size := dynamo.LargestAttribute(it)
		return &queuekit.FieldError{Location: loc, Field: name, Value: fmt.Sprintf("%d bytes", size),
			Problem: fmt.Sprintf("the item is %d bytes, over DynamoDB's item limit of %d bytes (400 KB)", n, MaxItemBytes),
			Fix:     "shorten the attribute (or lower --pad-bytes)"}
	}
	return nil
}

// prepare validates every job and marshals it; duplicate keys are refused
// because one BatchWriteItem request may not carry the same key twice.
func (c *Catalog) prepare(jobs []queuekit.Job, opts []SeedOption) (SeedOptions, []map[string]types.AttributeValue, error) {
	var so SeedOptions
	for _, fn := range opts {
		fn(&so)
	}
	if so.Padding < 0 || so.Padding > MaxPadding {
		return so, nil, fmt.Errorf("padding = %d bytes: want 0 to %d (DynamoDB items are at most 400 KB)", so.Padding, MaxPadding)
	}
	var pad types.AttributeValue
	if so.Padding > 0 {
		pad = &types.AttributeValueMemberS{Value: strings.Repeat("x", so.Padding)}
	}
	var errs []error
	seen := make(map[string]int, len(jobs)) // by job_id, which also fixes the sort key
	items := make([]map[string]types.AttributeValue, 0, len(jobs))
	for i, j := range jobs {
		loc := fmt.Sprintf("seed input job %d (%s=%s, %s=%s)", i+1, queuekit.AttrBatchDate, j.BatchDate, queuekit.AttrWindowJobID, j.WindowJobID)
		if err := j.Validate(c.opts.Window); err != nil {
			var fe *queuekit.FieldError
			if errors.As(err, &fe) {
				fe.Location = loc
			}
			errs = append(errs, err)
		} else if first, dup := seen[j.JobID]; dup {
			errs = append(errs, &queuekit.FieldError{Location: loc, Field: queuekit.AttrJobID, Value: fmt.Sprintf("%q", j.JobID),
				Problem: fmt.Sprintf("duplicate job_id (first as job %d)", first), Fix: "give each job of a night its own sequence number"})
		} else {
			seen[j.JobID] = i + 1
			it, err := MarshalJob(j)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", loc, err))
			} else {
				if pad != nil {
					it[AttrPadding] = pad
				}
				if err := checkItemSize(loc, it); err != nil {
					errs = append(errs, err)
				} else {
					items = append(items, it)
				}
			}
		}
		if len(errs) >= queuekit.MaxReportedErrors {
			errs = append(errs, fmt.Errorf("seed: stopped after %d problems; fix these first", len(errs)))
			break
		}
	}
	if len(errs) > 0 {
		return so, nil, fmt.Errorf("seed table %s: nothing written: %w", c.opts.Table, errors.Join(errs...))
	}
	return so, items, nil
}
