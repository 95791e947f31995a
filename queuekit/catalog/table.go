package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
)

// CreateTable creates the catalog table (on-demand, batch_date HASH,
// window_job_id RANGE) and waits with the SDK's TableExistsWaiter until it is
// active. A table that already exists with the same keys is fine; one with
// other keys is an error.
func (c *Catalog) CreateTable(ctx context.Context) error {
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.CreateTableOutput, error) {
		return c.client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:   aws.String(c.opts.Table),
			BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String(queuekit.AttrBatchDate), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String(queuekit.AttrWindowJobID), AttributeType: types.ScalarAttributeTypeS},
			},
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(queuekit.AttrBatchDate), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(queuekit.AttrWindowJobID), KeyType: types.KeyTypeRange},
			},
		})
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	out, err := c.waitActive(ctx)
	if err != nil {
		return fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	return c.checkKeys(out.Table)
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
	want := map[string]types.KeyType{queuekit.AttrBatchDate: types.KeyTypeHash, queuekit.AttrWindowJobID: types.KeyTypeRange}
	ok := t != nil && len(t.KeySchema) == 2
	if ok {
		for _, k := range t.KeySchema {
			if want[aws.ToString(k.AttributeName)] != k.KeyType {
				ok = false
			}
		}
	}
	if !ok {
		return fmt.Errorf("table %s at %s exists with another key schema; want %s (HASH) and %s (RANGE): drop it with `go run ./queuekit/cmd/queuekit reset --table %s` or choose another --table",
			c.opts.Table, c.where(), queuekit.AttrBatchDate, queuekit.AttrWindowJobID, c.opts.Table)
	}
	return nil
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
	req := *in
	req.TableName = aws.String(c.opts.Table)
	_, err := call(ctx, c, func(ctx context.Context) (*dynamodb.CreateTableOutput, error) {
		return c.client.CreateTable(ctx, &req)
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	if _, err := c.waitActive(ctx); err != nil {
		return fmt.Errorf("create table %s at %s: %w", c.opts.Table, c.where(), err)
	}
	return nil
}
