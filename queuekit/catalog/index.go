package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
)

// JobIndex is the global secondary index WithJobIndex adds: partition key
// job_id, every attribute projected, so "get job X" is one Query of the
// index that reads one item.
const JobIndex = "job_id-index"

// WithJobIndex makes CreateTable add the global secondary index JobIndex
// and GetJob read through it. An index is a second copy of every item,
// kept up to date by DynamoDB: each write to the table is also a write to
// the index, billed in write units of its own (SeedReport.IndexWriteUnits).
// It applies to the KeyByNight schema; KeyByJobID already has job_id as
// its key.
func WithJobIndex() Option { return func(o *Options) { o.JobIndex = true } }

// jobIndex reports whether the table has (or gets) JobIndex.
func (c *Catalog) jobIndex() bool { return c.opts.JobIndex && c.opts.Key == KeyByNight }

// indexes are the global secondary indexes CreateTable creates.
func (c *Catalog) indexes() []types.GlobalSecondaryIndex {
	if !c.jobIndex() {
		return nil
	}
	return []types.GlobalSecondaryIndex{{
		IndexName:  aws.String(JobIndex),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String(queuekit.AttrJobID), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}}
}

// definitions are the attribute definitions of the table's keys and of its
// indexes' keys.
func (c *Catalog) definitions() []types.AttributeDefinition {
	defs := c.opts.Key.definitions()
	if c.jobIndex() {
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(queuekit.AttrJobID), AttributeType: types.ScalarAttributeTypeS})
	}
	return defs
}

// checkIndex reports a table created without the index the catalog wants.
func (c *Catalog) checkIndex(t *types.TableDescription) error {
	if !c.jobIndex() {
		return nil
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == JobIndex {
			return nil
		}
	}
	return fmt.Errorf("table %s at %s exists without the index %s: drop it with `go run ./queuekit/cmd/queuekit reset --table %s` or choose another table",
		c.opts.Table, c.where(), JobIndex, c.opts.Table)
}

// LookupJob reads one job by its id, as GetJob does, and reports what the
// read cost. The method depends on the table:
//
//   - KeyByJobID: GetItem on the key ("GetItem");
//   - KeyByNight with WithJobIndex: Query of JobIndex, job_id = :id
//     ("Query job_id-index"), which reads the one item;
//   - KeyByNight without it: the id's date names the partition, so a Query
//     of that night with a filter on job_id ("Query + filter"), which reads,
//     and is billed for, the whole night.
//
// A job that is not there gives an error wrapping ErrNoSuchJob.
func (c *Catalog) LookupJob(ctx context.Context, jobID string) (queuekit.Job, AccessReport, error) {
	item, rep, err := c.lookup(ctx, jobID)
	if err != nil {
		return queuekit.Job{}, rep, err
	}
	j, err := c.UnmarshalJob(item)
	return j, rep, err
}

func (c *Catalog) lookup(ctx context.Context, jobID string) (map[string]types.AttributeValue, AccessReport, error) {
	fail := func(err error) error { return fmt.Errorf("get job %s from table %s: %w", jobID, c.opts.Table, err) }
	rep := AccessReport{Segments: 1}
	if c.opts.Key == KeyByJobID {
		item, rep, err := c.getItem(ctx, c.opts.Key.key(queuekit.Job{JobID: jobID}), false)
		if err != nil {
			return nil, rep, fail(err)
		}
		return item, rep, nil
	}
	in := &dynamodb.QueryInput{TableName: aws.String(c.opts.Table), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	var b expression.Builder
	if c.jobIndex() {
		rep.Method = "Query " + JobIndex
		in.IndexName = aws.String(JobIndex)
		b = expression.NewBuilder().WithKeyCondition(expression.Key(queuekit.AttrJobID).Equal(expression.Value(jobID)))
	} else {
		rep.Method = "Query + filter"
		date, ok := jobDate(jobID)
		if !ok {
			return nil, rep, fail(fmt.Errorf("malformed job id: write it as JOB-<yyyymmdd>-<3-digit seq>, e.g. JOB-20260513-001"))
		}
		b = expression.NewBuilder().
			WithKeyCondition(expression.Key(queuekit.AttrBatchDate).Equal(expression.Value(date))).
			WithFilter(expression.Name(queuekit.AttrJobID).Equal(expression.Value(jobID)))
	}
	expr, err := b.Build()
	if err != nil {
		return nil, rep, fail(err)
	}
	in.KeyConditionExpression, in.FilterExpression = expr.KeyCondition(), expr.Filter()
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Names(), expr.Values()
	var found map[string]types.AttributeValue
	began := time.Now()
	for out, err := range c.db.QueryPages(ctx, in) {
		rep.Elapsed = time.Since(began)
		if err != nil {
			return nil, rep, fail(err)
		}
		addPage(&rep, out.Count, out.ScannedCount, out.ConsumedCapacity, len(out.LastEvaluatedKey) > 0)
		if len(out.Items) > 0 && found == nil {
			found = out.Items[0]
		}
	}
	if found == nil {
		return nil, rep, fail(ErrNoSuchJob)
	}
	return found, rep, nil
}
