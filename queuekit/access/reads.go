package access

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/measure"
)

// Read is one measured way of reading (part of) a night: measure.Read,
// under the name this package always had.
type Read = measure.Read

// byteCounter is an HTTP client that counts the bytes of response bodies.
type byteCounter struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	n atomic.Int64
}

func (b *byteCounter) Do(r *http.Request) (*http.Response, error) {
	resp, err := b.next.Do(r)
	if err == nil && resp.Body != nil {
		resp.Body = countingBody{resp.Body, &b.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// countingCatalog opens the catalog with an HTTP client that counts response
// bytes.
func countingCatalog(ctx context.Context, opts []catalog.Option) (*catalog.Catalog, *byteCounter, error) {
	bc := &byteCounter{}
	wrap := catalog.WithClientOptions(func(o *dynamodb.Options) {
		bc.next = o.HTTPClient
		if bc.next == nil {
			bc.next = awshttp.NewBuildableClient()
		}
		o.HTTPClient = bc
	})
	cat, err := catalog.New(ctx, append(append([]catalog.Option{}, opts...), wrap)...)
	return cat, bc, err
}

// NightReads reads one night of the catalog (opts name the endpoint and the
// table, keyed by night) in the ways the schema notebook compares, and
// measures each:
//
//   - one Query on batch_date (eventually consistent, the default);
//   - the same Query with ConsistentRead: twice the read units;
//   - a GetItem per job on its full key: the same items, but each item is
//     rounded up to 4 KB on its own, so ½ unit per job instead of ½ unit per
//     4 KB of the whole night;
//   - the Query with a filter requires_exclusive_lock = true: billed for
//     every item of the night, fewer bytes back;
//   - a Query of one window with begins_with on the sort key: reads, and is
//     billed for, that window only.
func NightReads(ctx context.Context, date, window string, opts ...catalog.Option) ([]Read, error) {
	cat, bc, err := countingCatalog(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("night reads: %w", err)
	}
	var out []Read
	measure := func(label string, fn func() (catalog.AccessReport, int, error)) error {
		before := bc.n.Load()
		rep, requests, err := fn()
		if err != nil {
			return fmt.Errorf("night reads: %s: %w", label, err)
		}
		out = append(out, Read{Label: label, Report: rep, Requests: requests, ResponseBytes: bc.n.Load() - before})
		return nil
	}
	query := func(window string, ro ...catalog.ReadOption) func() (catalog.AccessReport, int, error) {
		return func() (catalog.AccessReport, int, error) {
			_, rep, err := cat.QueryNight(ctx, date, window, ro...)
			return rep, rep.Pages, err
		}
	}
	var night queuekit.Night
	if err := measure("Query batch_date = :d", func() (catalog.AccessReport, int, error) {
		n, rep, err := cat.QueryNight(ctx, date, "")
		night = n
		return rep, rep.Pages, err
	}); err != nil {
		return nil, err
	}
	if len(night.Jobs) == 0 {
		return nil, fmt.Errorf("night reads: night %s has no jobs in table %s; seed it first (notebook 00)", date, cat.Table())
	}
	if err := measure("Query batch_date = :d, ConsistentRead", query("", catalog.ReadConsistent())); err != nil {
		return nil, err
	}
	if err := measure(fmt.Sprintf("GetItem × %d, one per job (full key)", len(night.Jobs)), func() (catalog.AccessReport, int, error) {
		var sum catalog.AccessReport
		for _, j := range night.Jobs {
			_, rep, err := cat.GetByKey(ctx, j.BatchDate, j.WindowJobID)
			if err != nil {
				return sum, 0, err
			}
			sum = Add(sum, rep)
		}
		return sum, len(night.Jobs), nil
	}); err != nil {
		return nil, err
	}
	exclusive := expression.Name(queuekit.AttrExclusive).Equal(expression.Value(true))
	if err := measure("Query batch_date = :d + filter requires_exclusive_lock = true", query("", catalog.ReadFilter(exclusive))); err != nil {
		return nil, err
	}
	if window != "" {
		if err := measure("Query batch_date = :d and begins_with(window_job_id, \""+window+"#\")", query(window)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Add sums two access reports: counts, capacity, pages and time; the
// method is the first one's (or the second's when the first is empty).
func Add(a, b catalog.AccessReport) catalog.AccessReport {
	if a.Method == "" {
		a.Method, a.Segments = b.Method, b.Segments
	}
	a.Count += b.Count
	a.ScannedCount += b.ScannedCount
	a.ConsumedRCU += b.ConsumedRCU
	a.Pages += b.Pages
	a.Elapsed += b.Elapsed
	a.PerPage = append(a.PerPage, b.PerPage...)
	return a
}

// UpdateKey tries to change the sort key of a job's item in place, from
// <window>#<job_id> to newWindowJobID, with UpdateItem, and returns
// DynamoDB's answer: key attributes cannot be updated (a ValidationException),
// so moving an item to another key is a delete and a put. It is why status,
// which changes as a job runs, cannot be part of the key.
func UpdateKey(ctx context.Context, cat *catalog.Catalog, date, windowJobID, newWindowJobID string) error {
	upd := expression.Set(expression.Name(queuekit.AttrWindowJobID), expression.Value(newWindowJobID))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return fmt.Errorf("update key: %w", err)
	}
	_, err = cat.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(cat.Table()),
		Key: map[string]types.AttributeValue{
			queuekit.AttrBatchDate:   &types.AttributeValueMemberS{Value: date},
			queuekit.AttrWindowJobID: &types.AttributeValueMemberS{Value: windowJobID},
		},
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return fmt.Errorf("update %s of %s=%s %s=%s in table %s: %w", queuekit.AttrWindowJobID, queuekit.AttrBatchDate, date,
			queuekit.AttrWindowJobID, windowJobID, cat.Table(), err)
	}
	return nil
}

// JobIndexTable is the table of the schema notebook that answers "get job
// X" with an index: the catalog's key (batch_date, window_job_id) plus the
// global secondary index catalog.JobIndex on job_id.
const JobIndexTable = "schema_with_job_index"

// JobIndexed returns the job catalog keyed by night with the job_id index,
// in JobIndexTable (catalog.WithJobIndex). opts come first, so they may name
// the endpoint but not another table.
func JobIndexed(ctx context.Context, opts ...catalog.Option) (*catalog.Catalog, error) {
	return catalog.New(ctx, append(append([]catalog.Option{}, opts...), catalog.WithTable(JobIndexTable), catalog.WithJobIndex())...)
}

// WritesTable is the scratch table WriteCosts writes into.
const WritesTable = "qvs_writes"

// WriteCosts writes the same jobs twice into a fresh WritesTable (opts name
// the endpoint): once with BatchWriteItem (catalog.Seed, 25 items a
// request) and once with one PutItem per job (catalog.PutEach), and returns
// both reports. Both consume one write unit per item up to 1 KB, and more for
// bigger items (padBytes adds to each item): batching saves requests, not
// units.
func WriteCosts(ctx context.Context, jobs []queuekit.Job, padBytes int, opts ...catalog.Option) (batch, single catalog.SeedReport, err error) {
	cat, err := catalog.New(ctx, append(append([]catalog.Option{}, opts...), catalog.WithTable(WritesTable))...)
	if err != nil {
		return batch, single, fmt.Errorf("write costs: %w", err)
	}
	var so []catalog.SeedOption
	if padBytes > 0 {
		so = append(so, catalog.WithPadding(padBytes))
	}
	for i, write := range []func() (catalog.SeedReport, error){
		func() (catalog.SeedReport, error) { return cat.Seed(ctx, jobs, so...) },
		func() (catalog.SeedReport, error) { return cat.PutEach(ctx, jobs, so...) },
	} {
		if err := cat.DeleteTable(ctx); err != nil {
			return batch, single, fmt.Errorf("write costs: %w", err)
		}
		if err := cat.CreateTable(ctx); err != nil {
			return batch, single, fmt.Errorf("write costs: %w", err)
		}
		rep, err := write()
		if err != nil {
			return batch, single, fmt.Errorf("write costs: %w", err)
		}
		if i == 0 {
			batch = rep
		} else {
			single = rep
		}
	}
	return batch, single, nil
}

// JobIndexWrites seeds jobs into a fresh JobIndexTable (dropped and
// recreated, opts name the endpoint) and then writes the same jobs again,
// and returns both reports. The first write puts every item in the table
// and in the index: one write unit each for items under 1 KB, twice in all.
// On DynamoDB Local the second, identical write costs the index nothing:
// no attribute the index holds changed.
func JobIndexWrites(ctx context.Context, jobs []queuekit.Job, opts ...catalog.Option) (first, again catalog.SeedReport, err error) {
	cat, err := JobIndexed(ctx, opts...)
	if err != nil {
		return first, again, fmt.Errorf("job index writes: %w", err)
	}
	if err := cat.DeleteTable(ctx); err != nil {
		return first, again, fmt.Errorf("job index writes: %w", err)
	}
	if err := cat.CreateTable(ctx); err != nil {
		return first, again, fmt.Errorf("job index writes: %w", err)
	}
	if first, err = cat.Seed(ctx, jobs); err != nil {
		return first, again, fmt.Errorf("job index writes: first write: %w", err)
	}
	if again, err = cat.Seed(ctx, jobs); err != nil {
		return first, again, fmt.Errorf("job index writes: second write: %w", err)
	}
	return first, again, nil
}
