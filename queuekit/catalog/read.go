package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/measure"
)

// AccessReport measures one read of a night: measure.AccessReport, under
// the name this package always had.
type AccessReport = measure.AccessReport

// Page is one response of a read: measure.Page.
type Page = measure.Page

// addPage adds one response to r.
func addPage(r *AccessReport, count, scanned int32, cc *types.ConsumedCapacity, more bool) {
	p := Page{Count: int(count), ScannedCount: int(scanned), More: more}
	if cc != nil {
		p.ConsumedRCU = aws.ToFloat64(cc.CapacityUnits)
	}
	r.Count += p.Count
	r.ScannedCount += p.ScannedCount
	r.ConsumedRCU += p.ConsumedRCU
	r.Pages++
	r.PerPage = append(r.PerPage, p)
}

// checkArgs validates a batch date and an optional window (HH:MM).
func checkArgs(date, window string) error {
	if _, err := queuekit.ParseBatchDate(date); err != nil {
		return fmt.Errorf("batch date: %w", err)
	}
	if window != "" {
		if _, err := queuekit.ParseClock(window); err != nil {
			return fmt.Errorf("window: %w", err)
		}
	}
	return nil
}

func describe(date, window string) string {
	if window == "" {
		return "night " + date
	}
	return "night " + date + " window " + window
}

// ReadOption is one functional option of QueryNight and GetByKey: a
// func(*ReadOptions), the SDK's optFns form. It is an alias, so the With
// helpers and a plain func literal mix.
type ReadOption = func(*ReadOptions)

// ReadOptions are the settings of one QueryNight or GetByKey call. Set them
// through ReadConsistent and ReadFilter.
type ReadOptions struct {
	// Consistent asks for a strongly consistent read; false reads
	// eventually consistent, DynamoDB's default.
	Consistent bool
	// Filter, if not nil, is a filter expression on non-key attributes
	// (QueryNight only).
	Filter *expression.ConditionBuilder
}

// ReadConsistent asks for a strongly consistent read: it reflects every
// write acknowledged before it, and costs twice an eventually consistent one
// (1 read unit per 4 KB instead of ½).
func ReadConsistent() ReadOption { return func(o *ReadOptions) { o.Consistent = true } }

// ReadFilter adds a filter expression on non-key attributes. DynamoDB
// applies it after reading, so the read is billed for every item the key
// condition selects (ScannedCount), and returns only those that pass (Count).
func ReadFilter(cond expression.ConditionBuilder) ReadOption {
	return func(o *ReadOptions) { o.Filter = &cond }
}

func readOpts(opts []ReadOption) ReadOptions {
	var o ReadOptions
	for _, fn := range opts {
		fn(&o)
	}
	return o
}

// QueryNight reads the jobs of one batch night with Query on the partition
// key (batch_date = :d), narrowed to one requested window with
// begins_with(window_job_id, "HH:MM#") when window is not empty. It follows
// every page with the SDK's Query paginator and asks for the consumed
// capacity. Jobs come in sort key order, that is window then job id, and are
// validated: a malformed item gives a *queuekit.FieldError naming the item.
// A night without items is an empty Night, not an error. opts may ask for a
// strongly consistent read or add a filter (the returned night then holds
// only the jobs that pass it).
func (c *Catalog) QueryNight(ctx context.Context, date, window string, opts ...ReadOption) (queuekit.Night, AccessReport, error) {
	ro := readOpts(opts)
	rep := AccessReport{Method: "Query", Segments: 1}
	if err := checkArgs(date, window); err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("query %s: %w", describe(date, window), err)
	}
	if c.opts.Key != KeyByNight {
		return queuekit.Night{}, rep, fmt.Errorf("query %s: table %s is keyed by %s, so no Query can select a night; read it with ScanNight",
			describe(date, window), c.opts.Table, c.opts.Key)
	}
	key := expression.Key(queuekit.AttrBatchDate).Equal(expression.Value(date))
	if window != "" {
		key = key.And(expression.Key(queuekit.AttrWindowJobID).BeginsWith(window + "#"))
	}
	b := expression.NewBuilder().WithKeyCondition(key)
	if ro.Filter != nil {
		b = b.WithFilter(*ro.Filter)
	}
	expr, err := b.Build()
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("query %s: build key condition: %w", describe(date, window), err)
	}
	var items []map[string]types.AttributeValue
	began := time.Now()
	for out, err := range c.db.QueryPages(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(c.opts.Table),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(ro.Consistent),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	}) {
		if err != nil {
			rep.Elapsed = time.Since(began)
			return queuekit.Night{}, rep, fmt.Errorf("query %s in table %s: page %d: %w", describe(date, window), c.opts.Table, rep.Pages+1, err)
		}
		addPage(&rep, out.Count, out.ScannedCount, out.ConsumedCapacity, len(out.LastEvaluatedKey) > 0)
		items = append(items, out.Items...)
	}
	rep.Elapsed = time.Since(began)
	n, err := c.night(date, items)
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("query %s: %w", describe(date, window), err)
	}
	return n, rep, nil
}

// GetByKey reads one job with GetItem on its full primary key: batch_date
// and window_job_id (<window>#<job_id>) for KeyByNight, job_id alone for
// KeyByJobID (windowJobID is then the job id). GetItem is billed per item,
// rounded up to 4 KB: ½ read unit for an eventually consistent read of a
// small item, 1 with ReadConsistent. A missing item gives an error wrapping
// ErrNoSuchJob. ReadFilter does not apply to GetItem and is refused.
func (c *Catalog) GetByKey(ctx context.Context, date, windowJobID string, opts ...ReadOption) (queuekit.Job, AccessReport, error) {
	ro := readOpts(opts)
	fail := func(err error) error {
		return fmt.Errorf("get item %s=%s %s=%s from table %s: %w", queuekit.AttrBatchDate, date, queuekit.AttrWindowJobID, windowJobID, c.opts.Table, err)
	}
	if ro.Filter != nil {
		return queuekit.Job{}, AccessReport{Method: "GetItem", Segments: 1}, fail(errors.New("GetItem takes no filter expression: read the item, or Query with ReadFilter"))
	}
	key := c.opts.Key.key(queuekit.Job{BatchDate: date, WindowJobID: windowJobID, JobID: windowJobID})
	item, rep, err := c.getItem(ctx, key, ro.Consistent)
	if err != nil {
		return queuekit.Job{}, rep, fail(err)
	}
	j, err := c.UnmarshalJob(item)
	return j, rep, err
}

// getItem is one GetItem with its access report; a missing item is
// ErrNoSuchJob.
func (c *Catalog) getItem(ctx context.Context, key map[string]types.AttributeValue, consistent bool) (map[string]types.AttributeValue, AccessReport, error) {
	rep := AccessReport{Method: "GetItem", Segments: 1}
	began := time.Now()
	out, err := call(ctx, c, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return c.db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.opts.Table), Key: key,
			ConsistentRead: aws.Bool(consistent), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	})
	rep.Elapsed = time.Since(began)
	if err != nil {
		return nil, rep, err
	}
	n := int32(0)
	if out.Item != nil {
		n = 1
	}
	addPage(&rep, n, n, out.ConsumedCapacity, false)
	if out.Item == nil {
		return nil, rep, ErrNoSuchJob
	}
	return out.Item, rep, nil
}

// ScanNight reads the same jobs as QueryNight the wrong way: a Scan of the
// whole table with a filter (batch_date = :d, and begins_with on the sort key
// for a window). DynamoDB reads, and charges for, every item of the table;
// the filter only drops them from the answer. segments > 1 runs a parallel
// Scan with that many segments, each with its own paginator; a segment that
// fails cancels the others. Jobs are sorted into sort key order, as
// QueryNight returns them. It works whatever the table's KeySchema.
func (c *Catalog) ScanNight(ctx context.Context, date, window string, segments int) (queuekit.Night, AccessReport, error) {
	segments = max(segments, 1)
	rep := AccessReport{Method: "Scan", Segments: segments}
	if err := checkArgs(date, window); err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s: %w", describe(date, window), err)
	}
	filter := expression.Name(queuekit.AttrBatchDate).Equal(expression.Value(date))
	if window != "" {
		filter = filter.And(expression.Name(queuekit.AttrWindowJobID).BeginsWith(window + "#"))
	}
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s: build filter: %w", describe(date, window), err)
	}
	// One goroutine per segment, each with its own paginator; the first
	// failure cancels gctx, so the other segments stop at their next page.
	var (
		mu    sync.Mutex
		items []map[string]types.AttributeValue
	)
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	for s := range segments {
		in := &dynamodb.ScanInput{
			TableName:                 aws.String(c.opts.Table),
			FilterExpression:          expr.Filter(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
			ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
		}
		if segments > 1 {
			in.Segment, in.TotalSegments = aws.Int32(int32(s)), aws.Int32(int32(segments))
		}
		g.Go(func() error {
			for out, err := range c.db.ScanPages(gctx, in) {
				if err != nil {
					return fmt.Errorf("segment %d of %d: %w", s+1, segments, err)
				}
				mu.Lock()
				addPage(&rep, out.Count, out.ScannedCount, out.ConsumedCapacity, len(out.LastEvaluatedKey) > 0)
				items = append(items, out.Items...)
				mu.Unlock()
			}
			return nil
		})
	}
	err = g.Wait()
	rep.Elapsed = time.Since(began)
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s in table %s: %w", describe(date, window), c.opts.Table, err)
	}
	sort.Slice(items, func(a, b int) bool {
		return keyText(items[a][queuekit.AttrWindowJobID]) < keyText(items[b][queuekit.AttrWindowJobID])
	})
	n, err := c.night(date, items)
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s: %w", describe(date, window), err)
	}
	return n, rep, nil
}

// night decodes and validates the items of one night, reporting up to
// queuekit.MaxReportedErrors malformed items at once.
func (c *Catalog) night(date string, items []map[string]types.AttributeValue) (queuekit.Night, error) {
	jobs := make([]queuekit.Job, 0, len(items))
	var errs []error
	for _, it := range items {
		j, err := c.UnmarshalJob(it)
		if err != nil {
			errs = append(errs, err)
			if len(errs) >= queuekit.MaxReportedErrors {
				errs = append(errs, fmt.Errorf("stopped after %d problems; fix these first", len(errs)))
				break
			}
			continue
		}
		jobs = append(jobs, j)
	}
	if len(errs) > 0 {
		return queuekit.Night{}, errors.Join(errs...)
	}
	n, err := queuekit.NewNight(date, c.opts.Window, jobs)
	if err != nil {
		return queuekit.Night{}, fmt.Errorf("table %s: %w", c.opts.Table, err)
	}
	return n, nil
}
