package dynamo

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// BatchSize is the most items one BatchWriteItem request may carry.
const BatchSize = 25

// Written is what one BatchWriteItem response took: items written,
// requests sent, items sent again, and the write units consumed (index
// units also counted apart).
type Written struct {
	Items, Requests, Retried int
	Units, IndexUnits        float64
}

// WriteOptions are the settings of one Write; each has a helper below.
type WriteOptions struct {
	// Writers is how many batches are in flight at once (default the
	// table's Options.Writers); 1 writes them in order.
	Writers int
	// OnWritten, if set, is called after every response with what it took.
	// Calls are serialized.
	OnWritten func(Written)
}

// WriteOption is one functional option of Write: a func(*WriteOptions),
// the SDK's optFns form. It is an alias, so the helpers below and a plain
// func literal mix.
type WriteOption = func(*WriteOptions)

// Writers sets WriteOptions.Writers.
func Writers(n int) WriteOption { return func(o *WriteOptions) { o.Writers = n } }

// OnWritten sets WriteOptions.OnWritten.
func OnWritten(fn func(Written)) WriteOption { return func(o *WriteOptions) { o.OnWritten = fn } }

// Write sends requests (puts and deletes) with BatchWriteItem, 25 a
// request, several requests in flight, and sends the items DynamoDB
// returns as UnprocessedItems again after an exponential backoff with full
// jitter, up to Options.MaxAttempts times a batch. The first failure stops
// the rest and is returned; OnWritten has counted what was written by then.
// Requests must not repeat a key within one call.
func (t *Table) Write(ctx context.Context, reqs []types.WriteRequest, opts ...WriteOption) error {
	wo := WriteOptions{Writers: t.opts.Writers}
	for _, fn := range opts {
		fn(&wo)
	}
	var mu sync.Mutex
	report := func(w Written) {
		if wo.OnWritten == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		wo.OnWritten(w)
	}
	// At most writers batches in flight; the first failure cancels gctx, so
	// no further batch starts and those in flight stop at their next call.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(wo.Writers, 1))
	for start := 0; start < len(reqs); start += BatchSize {
		if gctx.Err() != nil {
			break
		}
		b := reqs[start:min(start+BatchSize, len(reqs))]
		g.Go(func() error { return t.writeBatch(gctx, b, report) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil { // the caller cancelled before every batch started
		return context.Cause(ctx)
	}
	return nil
}

// writeBatch sends one batch until DynamoDB has taken every item, backing off
// with full jitter while it returns UnprocessedItems.
func (t *Table) writeBatch(ctx context.Context, b []types.WriteRequest, report func(Written)) error {
	pending := b
	for attempt := 1; ; attempt++ {
		out, err := Call(ctx, t, func(ctx context.Context) (*dynamodb.BatchWriteItemOutput, error) {
			return t.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems:           map[string][]types.WriteRequest{t.name: pending},
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
			})
		})
		if err != nil {
			return fmt.Errorf("batch write of %d items: %w", len(pending), err)
		}
		left := out.UnprocessedItems[t.name]
		w := Written{Items: len(pending) - len(left), Requests: 1}
		if attempt > 1 {
			w.Retried = len(pending)
		}
		w.Units, w.IndexUnits = WriteUnits(out.ConsumedCapacity...)
		report(w)
		if len(left) == 0 {
			return nil
		}
		if attempt >= t.opts.MaxAttempts {
			return fmt.Errorf("%d items still unprocessed after %d attempts; DynamoDB is throttling: retry later, or lower the number of writers", len(left), attempt)
		}
		pending = left
		if wait.Sleep(ctx, wait.Backoff(attempt, t.opts.BaseBackoff, t.opts.MaxBackoff)) != nil {
			return fmt.Errorf("waiting to resend %d unprocessed items: %w", len(left), context.Cause(ctx))
		}
	}
}

// WriteUnits sums consumed capacity: total, and the part spent on indexes.
func WriteUnits(ccs ...types.ConsumedCapacity) (total, index float64) {
	for _, cc := range ccs {
		total += aws.ToFloat64(cc.CapacityUnits)
		for _, g := range cc.GlobalSecondaryIndexes {
			index += aws.ToFloat64(g.CapacityUnits)
		}
	}
	return total, index
}

// QueryPages runs in with the SDK's Query paginator, every page under
// Call; it yields each page, or the error that stopped it (then ends).
func (t *Table) QueryPages(ctx context.Context, in *dynamodb.QueryInput) iter.Seq2[*dynamodb.QueryOutput, error] {
	return func(yield func(*dynamodb.QueryOutput, error) bool) {
		p := dynamodb.NewQueryPaginator(t.client, in)
		for p.HasMorePages() {
			out, err := Call(ctx, t, func(ctx context.Context) (*dynamodb.QueryOutput, error) { return p.NextPage(ctx) })
			if !yield(out, err) || err != nil {
				return
			}
		}
	}
}

// ScanPages runs in with the SDK's Scan paginator, as QueryPages does.
func (t *Table) ScanPages(ctx context.Context, in *dynamodb.ScanInput) iter.Seq2[*dynamodb.ScanOutput, error] {
	return func(yield func(*dynamodb.ScanOutput, error) bool) {
		p := dynamodb.NewScanPaginator(t.client, in)
		for p.HasMorePages() {
			out, err := Call(ctx, t, func(ctx context.Context) (*dynamodb.ScanOutput, error) { return p.NextPage(ctx) })
			if !yield(out, err) || err != nil {
				return
			}
		}
	}
}
