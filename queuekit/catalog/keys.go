package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeySchema names a table's key attributes, both of type string. Sort may be
// empty: a table with a partition key only.
type KeySchema struct {
	Partition string
	Sort      string
}

func (k KeySchema) String() string {
	if k.Sort == "" {
		return k.Partition + " (HASH)"
	}
	return k.Partition + " (HASH) and " + k.Sort + " (RANGE)"
}

func (k KeySchema) elements() []types.KeySchemaElement {
	e := []types.KeySchemaElement{{AttributeName: aws.String(k.Partition), KeyType: types.KeyTypeHash}}
	if k.Sort != "" {
		e = append(e, types.KeySchemaElement{AttributeName: aws.String(k.Sort), KeyType: types.KeyTypeRange})
	}
	return e
}

// Index is a global secondary index of a table: its name and key attributes
// (strings; Sort may be empty), projecting every attribute. Items without the
// index's partition key attribute are not in the index (a sparse index).
type Index struct {
	Name      string
	Partition string
	Sort      string
}

// WithIndex adds a global secondary index that CreateTable creates with the
// table (projection ALL, on-demand like the table).
func WithIndex(name, partition, sort string) Option {
	return func(o *Options) { o.Indexes = append(o.Indexes, Index{Name: name, Partition: partition, Sort: sort}) }
}

// definitions returns the attribute definitions of the table's and its
// indexes' keys, each attribute once.
func definitions(k KeySchema, idx []Index) []types.AttributeDefinition {
	var d []types.AttributeDefinition
	seen := map[string]bool{}
	for _, name := range []string{k.Partition, k.Sort} {
		if name != "" && !seen[name] {
			seen[name] = true
			d = append(d, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS})
		}
	}
	for _, ix := range idx {
		for _, name := range []string{ix.Partition, ix.Sort} {
			if name != "" && !seen[name] {
				seen[name] = true
				d = append(d, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS})
			}
		}
	}
	return d
}

func gsis(idx []Index) []types.GlobalSecondaryIndex {
	var out []types.GlobalSecondaryIndex
	for _, ix := range idx {
		out = append(out, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  KeySchema{Partition: ix.Partition, Sort: ix.Sort}.elements(),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return out
}

// WithKeySchema makes the catalog's table use other key attributes (strings)
// than batch_date and window_job_id: CreateTable creates it so and checks an
// existing table against it. Such a table holds items of any shape: write them
// with PutItems and read one partition with QueryPartition; the job methods
// (Seed, QueryNight, ScanNight) assume the default schema.
func WithKeySchema(partition, sort string) Option {
	return func(o *Options) { o.Keys = KeySchema{Partition: partition, Sort: sort} }
}

// QueryPartition reads every item whose partition key equals value, with
// Query and the SDK's paginator, under the catalog's call timeout, and reports
// what it read and consumed (eventually consistent reads).
func (c *Catalog) QueryPartition(ctx context.Context, value string) ([]map[string]types.AttributeValue, AccessReport, error) {
	rep := AccessReport{Method: "Query", Segments: 1}
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(c.opts.Keys.Partition).Equal(expression.Value(value))).Build()
	if err != nil {
		return nil, rep, fmt.Errorf("query %s = %q: build key condition: %w", c.opts.Keys.Partition, value, err)
	}
	p := dynamodb.NewQueryPaginator(c.client, &dynamodb.QueryInput{
		TableName:                 aws.String(c.opts.Table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	var items []map[string]types.AttributeValue
	began := time.Now()
	for p.HasMorePages() {
		out, err := call(ctx, c, func(ctx context.Context) (*dynamodb.QueryOutput, error) { return p.NextPage(ctx) })
		if err != nil {
			rep.Elapsed = time.Since(began)
			return nil, rep, fmt.Errorf("query %s = %q in table %s: page %d: %w", c.opts.Keys.Partition, value, c.opts.Table, rep.Pages+1, err)
		}
		rep.add(out.Count, out.ScannedCount, out.ConsumedCapacity)
		items = append(items, out.Items...)
	}
	rep.Elapsed = time.Since(began)
	return items, rep, nil
}
