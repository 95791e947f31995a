package access

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// DefaultJobIDTable is the table of the poor key design in the schema notebook.
const DefaultJobIDTable = "schema_by_job_id"

// JobIDTable is the job catalog keyed the naive way: job_id alone is the
// partition key, with no sort key. It answers "get job X" with one GetItem,
// but not the question the queue asks every night, "which jobs run
// tonight?": with batch_date outside the key, the only way to read a night
// is a Scan of the whole table with a filter. It exists to measure that.
type JobIDTable struct {
	cat   *catalog.Catalog // for the client and item decoding
	table string
}

// NewJobIDTable returns the poor-key table named table at the catalog's
// endpoint. It does not contact DynamoDB.
func NewJobIDTable(cat *catalog.Catalog, table string) *JobIDTable {
	return &JobIDTable{cat: cat, table: table}
}

// Table returns the table name.
func (t *JobIDTable) Table() string { return t.table }

func (t *JobIDTable) client() *dynamodb.Client { return t.cat.Client() }

// Create creates the table (on-demand, job_id HASH) if it does not exist and
// waits until it is active.
func (t *JobIDTable) Create(ctx context.Context) error {
	_, err := t.client().CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(t.table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(queuekit.AttrJobID), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(queuekit.AttrJobID), KeyType: types.KeyTypeHash}},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s at %s: %w", t.table, t.cat.Endpoint(), err)
	}
	w := dynamodb.NewTableExistsWaiter(t.client(), func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 2*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.table)}, 2*time.Minute); err != nil {
		return fmt.Errorf("create table %s: wait until active: %w", t.table, err)
	}
	return nil
}

// Delete drops the table; a table that does not exist is fine.
func (t *JobIDTable) Delete(ctx context.Context) error {
	_, err := t.client().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.table)})
	var missing *types.ResourceNotFoundException
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("delete table %s: %w", t.table, err)
	}
	if err == nil {
		w := dynamodb.NewTableNotExistsWaiter(t.client(), func(o *dynamodb.TableNotExistsWaiterOptions) {
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, 2*time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.table)}, 2*time.Minute); err != nil {
			return fmt.Errorf("delete table %s: wait until gone: %w", t.table, err)
		}
	}
	return nil
}

// Put writes the jobs, 25 to a BatchWriteItem request, sending unprocessed
// items again (up to 10 attempts per batch). Writing the same jobs twice
// leaves the same table.
func (t *JobIDTable) Put(ctx context.Context, jobs []queuekit.Job) error {
	for start := 0; start < len(jobs); start += catalog.BatchSize {
		end := min(start+catalog.BatchSize, len(jobs))
		reqs := make([]types.WriteRequest, 0, end-start)
		for _, j := range jobs[start:end] {
			if err := j.Validate(t.cat.Window()); err != nil {
				return fmt.Errorf("put into %s: job %s: %w", t.table, j.JobID, err)
			}
			item, err := catalog.MarshalJob(j)
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		pending := map[string][]types.WriteRequest{t.table: reqs}
		for attempt := 1; len(pending[t.table]) > 0; attempt++ {
			if attempt > 10 {
				return fmt.Errorf("put into %s: %d items still unprocessed after 10 attempts", t.table, len(pending[t.table]))
			}
			out, err := t.client().BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fmt.Errorf("put into %s: items %d to %d: %w", t.table, start+1, end, err)
			}
			pending = out.UnprocessedItems
			if len(pending[t.table]) > 0 {
				time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
			}
		}
	}
	return nil
}

// Get reads one job by its id with GetItem: the one question this key answers well.
func (t *JobIDTable) Get(ctx context.Context, jobID string) (queuekit.Job, error) {
	out, err := t.client().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(t.table),
		Key:       map[string]types.AttributeValue{queuekit.AttrJobID: &types.AttributeValueMemberS{Value: jobID}},
	})
	if err != nil {
		return queuekit.Job{}, fmt.Errorf("get %s from %s: %w", jobID, t.table, err)
	}
	if out.Item == nil {
		return queuekit.Job{}, fmt.Errorf("get %s from %s: no such job", jobID, t.table)
	}
	return t.cat.UnmarshalJob(out.Item)
}

// Night reads one batch night (optionally one requested window) the only way
// this key allows: a Scan of the whole table with a filter on batch_date.
// The report shows the cost: ScannedCount is every item of the table.
func (t *JobIDTable) Night(ctx context.Context, date, window string) (queuekit.Night, catalog.AccessReport, error) {
	rep := catalog.AccessReport{Method: "Scan", Segments: 1}
	filter := expression.Name(queuekit.AttrBatchDate).Equal(expression.Value(date))
	if window != "" {
		filter = filter.And(expression.Name(queuekit.AttrRequestedWindow).Equal(expression.Value(window)))
	}
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s for night %s: %w", t.table, date, err)
	}
	p := dynamodb.NewScanPaginator(t.client(), &dynamodb.ScanInput{
		TableName:                 aws.String(t.table),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	var jobs []queuekit.Job
	began := time.Now()
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			rep.Elapsed = time.Since(began)
			return queuekit.Night{}, rep, fmt.Errorf("scan %s for night %s: page %d: %w", t.table, date, rep.Pages+1, err)
		}
		rep.Pages++
		rep.Count += int(out.Count)
		rep.ScannedCount += int(out.ScannedCount)
		if out.ConsumedCapacity != nil {
			rep.ConsumedRCU += aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
		}
		for _, it := range out.Items {
			j, err := t.cat.UnmarshalJob(it)
			if err != nil {
				return queuekit.Night{}, rep, err
			}
			jobs = append(jobs, j)
		}
	}
	rep.Elapsed = time.Since(began)
	// A Scan returns items in hash order; put them back in window, job order.
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].WindowJobID < jobs[b].WindowJobID })
	n, err := queuekit.NewNight(date, t.cat.Window(), jobs)
	if err != nil {
		return queuekit.Night{}, rep, fmt.Errorf("scan %s: %w", t.table, err)
	}
	return n, rep, nil
}
