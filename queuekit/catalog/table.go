package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// CreateTable creates the catalog table (on-demand, keyed by the catalog's
// KeySchema: batch_date HASH and window_job_id RANGE by default, with the
// index JobIndex under WithJobIndex) and waits with the SDK's
// TableExistsWaiter until it is active. A table that already exists with the
// same keys (and index) is fine; one with other keys is an error.
func (c *Catalog) CreateTable(ctx context.Context) error {
	if c.opts.ItemKeys != nil {
		return c.createItemTable(ctx)
	}
	t, err := c.createAndWait(ctx, &dynamodb.CreateTableInput{
		BillingMode:            types.BillingModePayPerRequest,
		AttributeDefinitions:   c.definitions(),
		KeySchema:              c.opts.Key.elements(),
		GlobalSecondaryIndexes: c.indexes(),
	})
	if err != nil {
		return err
	}
	if err := c.checkKeys(t); err != nil {
		return err
	}
	return c.checkIndex(t)
}

// createAndWait creates the catalog's table as in describes it (its
// TableName is replaced by the catalog's), accepts a table that already
// exists, and waits until it is active: the AWS layer's create-and-wait.
func (c *Catalog) createAndWait(ctx context.Context, in *dynamodb.CreateTableInput) (*types.TableDescription, error) {
	return c.db.CreateAndWait(ctx, in)
}

func (c *Catalog) checkKeys(t *types.TableDescription) error {
	if !sameKeys(t, c.opts.Key.elements()) {
		return fmt.Errorf("table %s at %s exists with another key schema; want %s: drop it with `go run ./queuekit/cmd/queuekit reset --table %s` or choose another --table",
			c.opts.Table, c.where(), c.opts.Key, c.opts.Table)
	}
	return nil
}

// sameKeys reports whether the table t is keyed exactly by want.
func sameKeys(t *types.TableDescription, want []types.KeySchemaElement) bool {
	return dynamo.SameKeys(t, want)
}

// DeleteTable deletes the catalog table and waits until it is gone. A table
// that does not exist is fine.
func (c *Catalog) DeleteTable(ctx context.Context) error { return c.db.DeleteAndWait(ctx) }

// Exists reports whether the catalog table exists.
func (c *Catalog) Exists(ctx context.Context) (bool, error) {
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
		return c.db.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(c.opts.Table)})
	})
	var missing *TableMissingError
	if errors.As(err, &missing) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe table %s: %w", c.opts.Table, err)
	}
	return true, nil
}

// CountItems counts the items of the table with a paginated Scan (Select
// COUNT). It reads the whole table: for tests and reports, not the main path.
func (c *Catalog) CountItems(ctx context.Context) (int, error) {
	n := 0
	for out, err := range c.db.ScanPages(ctx, &dynamodb.ScanInput{
		TableName: aws.String(c.opts.Table),
		Select:    types.SelectCount,
	}) {
		if err != nil {
			return 0, fmt.Errorf("count items of table %s: %w", c.opts.Table, err)
		}
		n += int(out.Count)
	}
	return n, nil
}
