package main

import (
	"context"
	"os"

	"github.com/nightqueue/workshop/queuekit/internal/servers"
)

// serverLease is the workshop's hold on DynamoDB Local and ElasticMQ:
// their endpoints by name ("dynamodb", "sqs"), and Release, after which each
// stops when no other program uses it (*servers.Lease).
type serverLease interface {
	Endpoints() map[string]string
	Release(ctx context.Context) error
}

// acquireServers starts or joins both servers through package servers (a
// supervisor each, shared by every program of the checkout that uses them,
// stopped after the last), or uses the endpoints set in the environment
// (docker compose sets both). The servers' step lines go to the log.
func acquireServers(ctx context.Context, l *launcher) (serverLease, error) {
	var lease *servers.Lease
	err := l.alive("starting the servers", func() error {
		var err error
		lease, err = servers.Acquire(ctx, l.root, []string{servers.DynamoDB, servers.SQS},
			servers.UsePreset(), servers.WithLog(l.log))
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	eps := lease.Endpoints()
	for _, name := range []string{servers.DynamoDB, servers.SQS} {
		ep := eps[name]
		how := "answers"
		if v := os.Getenv(map[string]string{servers.DynamoDB: "AWS_ENDPOINT_URL_DYNAMODB", servers.SQS: "AWS_ENDPOINT_URL_SQS"}[name]); v == ep {
			how = "is used as set in the environment"
		}
		l.say("  %s %s on %s", name, how, ep)
	}
	return lease, nil
}
