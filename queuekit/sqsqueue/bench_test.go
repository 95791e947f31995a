package sqsqueue_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

func bodies(n int) []string {
	b := make([]string, n)
	for i := range b {
		b[i] = fmt.Sprintf(`{"run":"bench","slice":%d,"key":"2025-05-11"}`, i)
	}
	return b
}

// BenchmarkSendBatch sends b.N pointer-sized messages with SendMessageBatch,
// ten per request, from one goroutine: msgs/s is the figure.
func BenchmarkSendBatch(b *testing.B) {
	c := sqstest.Client(b)
	ctx := context.Background()
	q, err := c.Create(ctx, sqstest.Name(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	sqstest.Cleanup(b, c, q)
	msgs := bodies(b.N)
	b.ResetTimer()
	start := time.Now()
	if err := c.SendBatch(ctx, q, msgs); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkReceiveDelete drains b.N messages with 1, 4 and 8 processors,
// each receiving up to 10 at a time (long polling, 1 s) and deleting them
// with DeleteMessageBatch: msgs/s is the figure.
func BenchmarkReceiveDelete(b *testing.B) {
	for _, procs := range []int{1, 4, 8} {
		b.Run(strconv.Itoa(procs), func(b *testing.B) {
			c := sqstest.Client(b)
			ctx := context.Background()
			q, err := c.Create(ctx, sqstest.Name(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			sqstest.Cleanup(b, c, q)
			if err := c.SendBatch(ctx, q, bodies(b.N)); err != nil {
				b.Fatal(err)
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ResetTimer()
			start := time.Now()
			// The processor that takes the last message cancels the others'
			// long polls, so the figure has no idle tail.
			dctx, done := context.WithCancel(ctx)
			defer done()
			g, gctx := errgroup.WithContext(dctx)
			for range procs {
				g.Go(func() error { return drain(gctx, done, c, q, &left) })
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

func drain(ctx context.Context, done func(), c *sqsqueue.Client, q sqsqueue.Queue, left *atomic.Int64) error {
	for left.Load() > 0 {
		out, err := c.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		del := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
		for i, m := range out.Messages {
			del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		}
		if err := c.DeleteBatch(ctx, q, del); err != nil {
			return err
		}
		if left.Add(-int64(len(out.Messages))) <= 0 {
			done()
		}
	}
	return nil
}
