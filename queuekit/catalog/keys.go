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

// ItemKeys name the key attributes (strings) of a table that holds items of
// any shape rather than jobs. Sort may be empty: a partition key only.
type ItemKeys struct {
	Partition string
	Sort      string
}

func (k ItemKeys) String() string {
	if k.Sort == "" {
		return k.Partition + " (HASH)"
	}
	return k.Partition + " (HASH) and " + k.Sort + " (RANGE)"
}

func (k ItemKeys) elements() []types.KeySchemaElement {
	e := []types.KeySchemaElement{{AttributeName: aws.String(k.Partition), KeyType: types.KeyTypeHash}}
	if k.Sort != "" {
		e = append(e, types.KeySchemaElement{AttributeName: aws.String(k.Sort), KeyType: types.KeyTypeRange})
	}
	return e
}

// WithItemKeys keys the catalog's table by the given string attributes
// instead of a job's key: CreateTable creates it so (with any WithIndex
// indexes) and checks an existing table against it. Such a table holds items
// of any shape: write them with PutItems and read one partition with
// QueryPartition; the job methods (Seed, QueryNight, ScanNight) need a job
// key.
func WithItemKeys(partition, sort string) Option {
	return func(o *Options) { o.ItemKeys = &ItemKeys{Partition: partition, Sort: sort} }
}

// Index is a global secondary index: its name and key attributes (strings;
// Sort may be empty), projecting every attribute. Items without the index's
// partition key attribute are not in it (a sparse index).
type Index struct {
	Name      string
	Partition string
	Sort      string
}

// WithIndex adds a global secondary index that CreateTable creates with a
// table keyed WithItemKeys (projection ALL, on demand like the table).
func WithIndex(name, partition, sort string) Option {
	return func(o *Options) { o.Indexes = append(o.Indexes, Index{Name: name, Partition: partition, Sort: sort}) }
}

// createItemTable is CreateTable for a table keyed WithItemKeys.
func (c *Catalog) createItemTable(ctx context.Context) error {
	k := *c.opts.ItemKeys
	if k.Partition == "" {
		return fmt.Errorf("create table %s: item keys need a partition key attribute (WithItemKeys(\"pk\", \"sk\"))", c.opts.Table)
	}
	var defs []types.AttributeDefinition
	seen := map[string]bool{}
	define := func(names ...string) {
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS})
			}
		}
	}
	define(k.Partition, k.Sort)
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range c.opts.Indexes {
		define(ix.Partition, ix.Sort)
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  ItemKeys{Partition: ix.Partition, Sort: ix.Sort}.elements(),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	t, err := c.createAndWait(ctx, &dynamodb.CreateTableInput{
		BillingMode:            types.BillingModePayPerRequest,
		AttributeDefinitions:   defs,
		KeySchema:              k.elements(),
		GlobalSecondaryIndexes: gsis,
	})
	if err != nil {
		return err
	}
	if !sameKeys(t, k.elements()) {
		return fmt.Errorf("table %s at %s exists with another key schema; want %s: drop it or choose another table name", c.opts.Table, c.where(), k)
	}
	return nil
}

// partitionKey is the table's partition key attribute.
func (c *Catalog) partitionKey() string {
	if c.opts.ItemKeys != nil {
		return c.opts.ItemKeys.Partition
	}
	return queuekit.AttrBatchDate
}

// QueryPartition reads every item whose partition key equals value, with
// Query and the SDK's paginator, under the catalog's call timeout, and reports
// what it read and consumed (eventually consistent reads).
func (c *Catalog) QueryPartition(ctx context.Context, value string) ([]map[string]types.AttributeValue, AccessReport, error) {
	rep := AccessReport{Method: "Query", Segments: 1}
	pk := c.partitionKey()
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(pk).Equal(expression.Value(value))).Build()
	if err != nil {
		return nil, rep, fmt.Errorf("query %s = %q: build key condition: %w", pk, value, err)
	}
	var items []map[string]types.AttributeValue
	began := time.Now()
	for out, err := range c.db.QueryPages(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(c.opts.Table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	}) {
		if err != nil {
			rep.Elapsed = time.Since(began)
			return nil, rep, fmt.Errorf("query %s = %q in table %s: page %d: %w", pk, value, c.opts.Table, rep.Pages+1, err)
		}
		addPage(&rep, out.Count, out.ScannedCount, out.ConsumedCapacity, len(out.LastEvaluatedKey) > 0)
		items = append(items, out.Items...)
	}
	rep.Elapsed = time.Since(began)
	return items, rep, nil
}
