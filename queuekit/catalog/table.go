package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
// exists, and waits with the SDK's TableExistsWaiter until it is active.
// It returns the table's description for the caller's schema checks.
func (c *Catalog) createAndWait(ctx context.Context, in *dynamodb.CreateTableInput) (*types.TableDescription, error) {
	req := *in
	req.TableName = aws.String(c.opts.Table)
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.CreateTableOutput, error) {
		return c.client.CreateTable(ctx, &req)
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return nil, fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	out, err := c.waitActive(ctx)
	if err != nil {
		return nil, fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	return out.Table, nil
}

func (c *Catalog) waitActive(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.WaitTimeout)
	defer cancel()
	w := dynamodb.NewTableExistsWaiter(c.client, func(o *dynamodb.TableExistsWaiterOptions) {
		if c.local { // Local creates tables at once; do not sleep the AWS default 20 s
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
		}
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(c.opts.Table)}, c.opts.WaitTimeout)
	if err != nil {
		return nil, fmt.Errorf("wait until active: %w", c.explain(ctx, err))
	}
	return out, nil
}

func (c *Catalog) checkKeys(t *types.TableDescription) error {
	if !sameKeys(t, c.opts.Key.elements()) {
		return fmt.Errorf("table %s at %s exists with another key schema; want %s: drop it with `go run ./queuekit/cmd/queuekit reset --table %s` or choose another --table",
			c.opts.Table, c.where(), c.opts.Key, c.opts.Table)
	}
	return nil
}

// sameKeys reports whether the table t is keyed exactly by want (the same
// attributes as HASH and RANGE, in any order).
func sameKeys(t *types.TableDescription, want []types.KeySchemaElement) bool {
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

// DeleteTable deletes the catalog table and waits until it is gone. A table
// that does not exist is fine.
func (c *Catalog) DeleteTable(ctx context.Context) error {
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.DeleteTableOutput, error) {
		return c.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(c.opts.Table)})
	})
	var missing *TableMissingError
	if errors.As(err, &missing) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.WaitTimeout)
	defer cancel()
	w := dynamodb.NewTableNotExistsWaiter(c.client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		if c.local {
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
		}
	})
	if err := w.Wait(wctx, &dynamodb.DescribeTableInput{TableName: aws.String(c.opts.Table)}, c.opts.WaitTimeout); err != nil {
		return fmt.Errorf("delete table %s at %s: wait until gone: %w", c.opts.Table, c.where(), c.explain(wctx, err))
	}
	return nil
}

// Exists reports whether the catalog table exists.
func (c *Catalog) Exists(ctx context.Context) (bool, error) {
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
		return c.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(c.opts.Table)})
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
	p := dynamodb.NewScanPaginator(c.client, &dynamodb.ScanInput{
		TableName: aws.String(c.opts.Table),
		Select:    types.SelectCount,
	})
	n := 0
	for p.HasMorePages() {
		out, err := call(ctx, c, func(ctx context.Context) (*dynamodb.ScanOutput, error) { return p.NextPage(ctx) })
		if err != nil {
			return 0, fmt.Errorf("count items of table %s: %w", c.opts.Table, err)
		}
		n += int(out.Count)
	}
	return n, nil
}

// CreateTableFrom creates the catalog's table with the key schema, indexes
// and billing of in (its TableName is replaced by the catalog's table) and
// waits until it is active. A table that already exists is fine; the caller
// checks its schema if it cares. For companion tables opened with Sibling.
func (c *Catalog) CreateTableFrom(ctx context.Context, in *dynamodb.CreateTableInput) error {
	_, err := c.createAndWait(ctx, in)
	return err
}
