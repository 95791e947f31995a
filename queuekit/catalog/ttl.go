package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// LocalTTLSweepers is how many tables DynamoDB Local 3.3.1 deletes expired
// items from at a time (read from its bytecode, and measured: an eighth
// table with TTL on had nothing deleted in minutes, then within a sweep of
// one of the seven being deleted). Its background jobs share one pool of 10
// threads, 3 of which its job schedulers hold for good; a table's TTL job
// never ends while the table exists with TTL on (it reads 20 items, sleeps
// 10 s, and at the end of the table starts over, because it tests the SDK's
// LastEvaluatedKey for null and gets an empty map). So the first tables to
// get a TTL job keep theirs, whatever their size, and a later table waits in
// the pool's queue until one of them is deleted or has TTL turned off. AWS
// has no such limit.
const LocalTTLSweepers = 7

// TTLTables lists the tables at the catalog's endpoint whose Time to Live is
// enabled or being enabled, sorted by name. A table deleted while it is
// listed is left out.
func (c *Catalog) TTLTables(ctx context.Context) ([]string, error) {
	var names []string
	pages := dynamodb.NewListTablesPaginator(c.Client(), &dynamodb.ListTablesInput{})
	for pages.HasMorePages() {
		out, err := call(ctx, c, func(ctx context.Context) (*dynamodb.ListTablesOutput, error) { return pages.NextPage(ctx) })
		if err != nil {
			return nil, fmt.Errorf("list tables at %s: %w", c.where(), err)
		}
		for _, name := range out.TableNames {
			d, err := call(ctx, c, func(ctx context.Context) (*dynamodb.DescribeTimeToLiveOutput, error) {
				return c.Client().DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
			})
			var gone *types.ResourceNotFoundException
			if errors.As(err, &gone) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("describe the TTL of %s at %s: %w", name, c.where(), err)
			}
			if s := d.TimeToLiveDescription; s != nil &&
				(s.TimeToLiveStatus == types.TimeToLiveStatusEnabled || s.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}
