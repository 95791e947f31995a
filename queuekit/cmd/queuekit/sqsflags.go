package main

import (
	"context"
	"errors"
	"flag"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/queue"
)

// addSQSFlag registers --sqs-endpoint on fs.
func addSQSFlag(fs *flag.FlagSet) *string {
	return fs.String("sqs-endpoint", "", "SQS endpoint URL, e.g. http://127.0.0.1:9324 (default: $"+queue.EnvEndpoint+", else AWS through the standard configuration chain)")
}

// openQueues opens the SQS client; a bad endpoint is a usage error.
func openQueues(ctx context.Context, endpoint string) (*queue.Client, error) {
	var opts []queue.Option
	if endpoint != "" {
		opts = append(opts, queue.WithEndpoint(endpoint))
	}
	q, err := queue.New(ctx, opts...)
	if err != nil {
		return nil, badInput(err)
	}
	return q, nil
}

// unreachableAsUsage turns "a server is unreachable" and "the table does not
// exist" into usage errors (exit status 2: the fix is to start or seed it),
// and passes other errors on.
func unreachableAsUsage(err error) error {
	var d *catalog.UnreachableError
	var s *queue.UnreachableError
	var m *catalog.TableMissingError
	if errors.As(err, &d) || errors.As(err, &s) || errors.As(err, &m) {
		return badInput(err)
	}
	return err
}
