package fanoutlab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// FIFOOutcome is what FIFODemo saw, receive by receive.
type FIFOOutcome struct {
	Queue string
	// Sent is the sends SQS accepted, the duplicate included.
	Sent int
	// First is the first receive (one message): the first message of group A.
	First []string
	// WhileInFlight is the next receive, with A's first message in flight:
	// group B's message, nothing of group A.
	WhileInFlight []string
	// Blocked is a receive with both groups' messages in flight: empty.
	Blocked []string
	// AfterDelete is a receive after A's first message is deleted: A's
	// second message, in the order sent.
	AfterDelete []string
	// Rest is every receive after the others are deleted: empty, because
	// the duplicate was dropped.
	Rest []string
	// Delivered is every message received, once each.
	Delivered int
}

// scratchFIFO creates a FIFO queue named prefix + a random suffix + ".fifo",
// deduplicated by content, with a 30 s visibility timeout, for one
// demonstration that deletes it when done.
func scratchFIFO(ctx context.Context, q *sqsqueue.Client, prefix string) (sqsqueue.Queue, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return q.CreateFIFO(ctx, sqsqueue.FIFOConfig{Name: prefix + hex.EncodeToString(b[:]) + ".fifo",
		ContentBasedDeduplication: true, Visibility: 30 * time.Second})
}

// FIFODemo creates a FIFO queue with content-based deduplication, sends
// "A1", "A2" (group A), "B1" (group B) and "A1" again within the
// deduplication interval, receives step by step, and deletes the queue.
// wait is the long poll of the receives that are expected to come back empty
// (a second is plenty on ElasticMQ).
func FIFODemo(ctx context.Context, q *sqsqueue.Client, wait time.Duration) (FIFOOutcome, error) {
	fq, err := scratchFIFO(ctx, q, "queuekit-fifo-")
	if err != nil {
		return FIFOOutcome{}, err
	}
	out := FIFOOutcome{Queue: fq.Name}
	defer func() { _ = q.Delete(context.WithoutCancel(ctx), fq) }()
	ids, err := q.SendFIFO(ctx, fq, []sqsqueue.FIFOMessage{{Body: "A1", Group: "A"}, {Body: "A2", Group: "A"},
		{Body: "B1", Group: "B"}, {Body: "A1", Group: "A"}})
	out.Sent = len(ids)
	if err != nil {
		return out, err
	}
	var held []sqsqueue.Received
	receive := func(max int, w time.Duration) ([]string, error) {
		got, err := q.Receive(ctx, fq, max, w)
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, m.Body)
		}
		held = append(held, got...)
		out.Delivered += len(got)
		return bodies, err
	}
	if out.First, err = receive(1, 0); err != nil {
		return out, err
	}
	if out.WhileInFlight, err = receive(10, wait); err != nil {
		return out, err
	}
	if out.Blocked, err = receive(10, wait); err != nil {
		return out, err
	}
	for _, m := range held {
		if m.Body == "A1" {
			if err := q.DeleteReceived(ctx, fq, m); err != nil {
				return out, err
			}
		}
	}
	if out.AfterDelete, err = receive(10, wait); err != nil {
		return out, err
	}
	for _, m := range held {
		if m.Body != "A1" {
			if err := q.DeleteReceived(ctx, fq, m); err != nil {
				return out, err
			}
		}
	}
	held = nil
	out.Rest, err = receive(10, wait)
	return out, err
}

// ShowFIFO shows a FIFODemo outcome as sentences built from its values.
func ShowFIFO(o FIFOOutcome) {
	list := func(s []string) string {
		if len(s) == 0 {
			return "nothing"
		}
		return strings.Join(s, ", ")
	}
	lab.Markdown(fmt.Sprintf("Sent %d messages (the last a copy of A1). The first receive got **%s**. "+
		"With it in flight, the next receive got **%s** (group B; group A's next waits), and the one after got **%s**. "+
		"After A1 was deleted, a receive got **%s**; after the rest were deleted, **%s**: the copy of A1 was dropped. "+
		"%d of %d messages delivered, each once.",
		o.Sent, list(o.First), list(o.WhileInFlight), list(o.Blocked), list(o.AfterDelete), list(o.Rest), o.Delivered, o.Sent))
}
