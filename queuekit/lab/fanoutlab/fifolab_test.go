package fanoutlab_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/lab/fanoutlab"
)

// The values come from SQS's documented FIFO rules, not from the demo:
//   - messages of one group are processed one at a time, in the order sent
//     (SQS Developer Guide, "Using the message group ID with Amazon SQS FIFO
//     Queues"); one receive may return several messages of a group, but no
//     later receive returns more of that group until those are deleted or
//     visible again ("FIFO queue delivery logic in Amazon SQS"), which is why
//     the first receive asks for one message;
//   - a message sent with the deduplication id of one sent successfully is
//     accepted but not delivered during the 5-minute deduplication interval;
//     with ContentBasedDeduplication the id is a SHA-256 hash of the body
//     (SQS API Reference, SendMessage, MessageDeduplicationId).
//
// So: A1 first; with A1 in flight only B1; with both in flight nothing;
// after A1 is deleted A2; then nothing, as the copy of A1 is dropped: three
// deliveries of four accepted sends.
func TestFIFODemoFollowsTheDocumentedRules(t *testing.T) {
	t.Parallel()
	c := sqstest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := fanoutlab.FIFODemo(ctx, c, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name      string
		got, want []string
	}{
		{"first receive", o.First, []string{"A1"}},
		{"receive with A1 in flight", o.WhileInFlight, []string{"B1"}},
		{"receive with A1 and B1 in flight", o.Blocked, nil},
		{"receive after A1 deleted", o.AfterDelete, []string{"A2"}},
		{"receive after all deleted", o.Rest, nil},
	} {
		if !slices.Equal(step.got, step.want) {
			t.Errorf("%s: got %q, want %q", step.name, step.got, step.want)
		}
	}
	if o.Sent != 4 || o.Delivered != 3 {
		t.Errorf("sent %d, delivered %d; want 4 sends accepted (the duplicate too) and 3 delivered", o.Sent, o.Delivered)
	}
}

func TestFIFODemoQueueIsGone(t *testing.T) {
	t.Parallel()
	c := sqstest.Client(t)
	ctx := context.Background()
	o, err := fanoutlab.FIFODemo(ctx, c, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(ctx, o.Queue); err == nil {
		t.Errorf("queue %s still exists after the demo", o.Queue)
	}
}

// The FIFO demo of notebook 07 against the SQS of AWS_ENDPOINT_URL_SQS
// (ElasticMQ in the workshop): one group serialised, the other delivered
// beside it, a duplicate dropped.
func ExampleFIFODemo() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := fanoutlab.Queues(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := fanoutlab.FIFODemo(ctx, q, time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("first:", o.First, "in flight:", o.WhileInFlight, "blocked:", o.Blocked)
	fmt.Println("after delete:", o.AfterDelete, "rest:", o.Rest)
	fmt.Printf("%d sent, %d delivered\n", o.Sent, o.Delivered)
	// Output:
	// first: [A1] in flight: [B1] blocked: []
	// after delete: [A2] rest: []
	// 4 sent, 3 delivered
}

// One receive of up to 10 returns the whole group, as SQS returns as many
// messages of one group as it can ("FIFO queue delivery logic in Amazon
// SQS"): a processor that works a batch in parallel holds no lock.
func TestFIFOBatchDemoReturnsTheGroupTogether(t *testing.T) {
	c := sqstest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := fanoutlab.FIFOBatchDemo(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if out.SameGroup() != 3 || !slices.Equal(out.Batch, []string{"A1", "A2", "A3"}) {
		t.Fatalf("batch %v, want A1, A2, A3 in one receive", out.Batch)
	}
	want := "One receive of up to 10 got **A1, A2, A3**: 3 messages of group A in one batch. A processor that hands each message of a batch to its own worker, as this notebook's do, runs 3 jobs of one group **side by side**: the group was no lock."
	if s := fanoutlab.FIFOBatchSentence(out); s != want {
		t.Errorf("sentence %q", s)
	}
}

// One receive of up to 10 messages, as notebook 07's processors make.
func ExampleFIFOBatchDemo() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := fanoutlab.Queues(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := fanoutlab.FIFOBatchDemo(ctx, q)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Batch, o.SameGroup())
	// Output:
	// [A1 A2 A3] 3
}
