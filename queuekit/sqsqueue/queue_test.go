package sqsqueue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// A message received maxReceiveCount times without being deleted moves to
// the dead-letter queue on its next receive; Redrive brings it back.
func TestRedrivePolicyAndRedrive(t *testing.T) {
	t.Parallel()
	c := sqstest.Client(t)
	ctx := context.Background()
	pair, err := c.CreateWithDLQ(ctx, sqstest.Name(t), 2, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sqstest.Cleanup(t, c, pair.Work, pair.Dead)
	if err := c.SendBatch(ctx, pair.Work, []string{"poison"}); err != nil {
		t.Fatal(err)
	}
	receive := func(q sqsqueue.Queue) int {
		out, err := c.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), WaitTimeSeconds: 2})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Messages)
	}
	// The queue's visibility timeout is 1 s and each receive long-polls 2 s,
	// so each receive waits for the message to reappear. (A VisibilityTimeout
	// of 0 on ReceiveMessage is not sent by the SDK: 0 means "not set".)
	if a, b, third := receive(pair.Work), receive(pair.Work), receive(pair.Work); a != 1 || b != 1 || third != 0 {
		t.Fatalf("receives got %d, %d, %d messages; want 1, 1, then 0 (moved after maxReceiveCount 2)", a, b, third)
	}
	if d, err := c.Depth(ctx, pair.Dead); err != nil || d.Visible != 1 {
		t.Fatalf("dead-letter queue depth %+v (%v), want 1 visible", d, err)
	}
	n, err := c.Redrive(ctx, pair.Dead, pair.Work)
	if err != nil || n != 1 {
		t.Fatalf("redrive moved %d (%v), want 1", n, err)
	}
	if got := receive(pair.Work); got != 1 {
		t.Fatalf("after redrive the work queue gave %d messages, want 1", got)
	}
}

func TestUnreachableNamesTheEndpointAndTheFix(t *testing.T) {
	t.Parallel()
	c, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(context.Background())
	var ue *sqsqueue.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "queuekit servers start sqs") {
		t.Fatalf("Ping = %v; want an UnreachableError naming the endpoint and queuekit servers start sqs", err)
	}
	if _, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint("not a url")); err == nil || !strings.Contains(err.Error(), "not a URL") {
		t.Fatalf("New(bad endpoint) = %v, want a one-line 'not a URL' error", err)
	}
}
