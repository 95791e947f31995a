package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// dynamoFlags are the flags every DynamoDB command shares: --endpoint and
// --table. Commands call addDynamoFlags on their flag set, then open.
type dynamoFlags struct {
	endpoint string // "" means AWS_ENDPOINT_URL_DYNAMODB, else the AWS configuration chain
	table    string
}

// addDynamoFlags registers --endpoint and --table on fs.
func addDynamoFlags(fs *flag.FlagSet) *dynamoFlags {
	f := &dynamoFlags{}
	fs.StringVar(&f.endpoint, "endpoint", "", "DynamoDB endpoint URL, e.g. http://localhost:8000 (default: $"+catalog.EnvEndpoint+", else AWS through the standard configuration chain)")
	fs.StringVar(&f.table, "table", catalog.DefaultTable, "DynamoDB table of the job catalog")
	return f
}

// open opens the catalog the flags name.
func (f *dynamoFlags) open(ctx context.Context, opts ...catalog.Option) (*catalog.Catalog, error) {
	return openCatalog(ctx, f.endpoint, f.table, opts...)
}

// openCatalog opens the job catalog at endpoint ("" means
// AWS_ENDPOINT_URL_DYNAMODB, else AWS through the standard configuration
// chain: AWS_PROFILE, AWS_REGION, ...) in table ("" means
// db_batch_window_requests). A local endpoint gets dummy credentials; AWS
// never does. The catalog does not contact DynamoDB until its first call,
// which fails with one line naming the endpoint when nothing answers.
// extra options (e.g. catalog.WithWriters) come last. The tutorial's
// --source dynamodb reads nights through this with catalog.QueryNight.
func openCatalog(ctx context.Context, endpoint, table string, extra ...catalog.Option) (*catalog.Catalog, error) {
	opts := []catalog.Option{}
	if endpoint != "" {
		opts = append(opts, catalog.WithEndpoint(endpoint))
	}
	if table != "" {
		opts = append(opts, catalog.WithTable(table))
	}
	c, err := catalog.New(ctx, append(opts, extra...)...)
	var bad *catalog.OptionError
	if errors.As(err, &bad) { // --endpoint or --table malformed
		return nil, badInput(err)
	}
	if err != nil { // the AWS configuration could not be loaded: a runtime failure
		return nil, err
	}
	if c.Endpoint() == "" && c.Client().Options().Region == "" {
		return nil, fmt.Errorf("no DynamoDB endpoint: pass --endpoint http://localhost:8000 (or set %s) for DynamoDB Local, or set AWS_REGION / AWS_PROFILE for AWS; %s",
			catalog.EnvEndpoint, catalog.StartLocalHint)
	}
	return c, nil
}

// describeTarget names table and endpoint for messages.
func describeTarget(c *catalog.Catalog) string {
	ep := c.Endpoint()
	if ep == "" {
		ep = "AWS"
	}
	return fmt.Sprintf("table %s at %s", c.Table(), ep)
}
