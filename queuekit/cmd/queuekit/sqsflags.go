package main

import (
	"context"
	"flag"
	"net/url"

	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// addSQSFlag registers --sqs-endpoint on fs.
func addSQSFlag(fs *flag.FlagSet) *string {
	return fs.String("sqs-endpoint", "", "SQS endpoint URL, e.g. http://127.0.0.1:9324 (default: $"+sqsqueue.EnvEndpoint+", else AWS through the standard configuration chain)")
}

// checkSQSEndpoint checks a --sqs-endpoint value ("" is allowed: the
// variable or the AWS chain) before anything is contacted.
func checkSQSEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	if u, err := url.Parse(endpoint); err != nil || u.Scheme == "" || u.Host == "" {
		return usagef("--sqs-endpoint %q: not a URL; write it as http://127.0.0.1:9324", endpoint)
	}
	return nil
}

// openQueues opens the SQS client. A malformed --sqs-endpoint is a usage
// error; a failure to load the AWS configuration (or a malformed
// AWS_ENDPOINT_URL_SQS) is a runtime one.
func openQueues(ctx context.Context, endpoint string) (*sqsqueue.Client, error) {
	if err := checkSQSEndpoint(endpoint); err != nil {
		return nil, err
	}
	var opts []sqsqueue.Option
	if endpoint != "" {
		opts = append(opts, sqsqueue.WithEndpoint(endpoint))
	}
	return sqsqueue.New(ctx, opts...)
}
