package fanoutlab

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// FIFOBatchOutcome is what FIFOBatchDemo saw.
type FIFOBatchOutcome struct {
	// Batch is the bodies one receive of up to 10 messages returned.
	Batch []string
	// Groups is each body's message group, in the order of Batch.
	Groups []string
}

// SameGroup is the largest number of messages of one group in the batch.
func (o FIFOBatchOutcome) SameGroup() int {
	n := map[string]int{}
	best := 0
	for _, g := range o.Groups {
		n[g]++
		best = max(best, n[g])
	}
	return best
}

// FIFOBatchDemo creates a FIFO queue, sends A1, A2, A3 (group A), makes one
// receive of up to 10 messages, as notebook 07's processors do, and deletes
// the queue. SQS returns as many messages of one group as it can in one
// receive (SQS Developer Guide, "FIFO queue delivery logic"), so the batch
// holds the whole group.
func FIFOBatchDemo(ctx context.Context, q *sqsqueue.Client) (FIFOBatchOutcome, error) {
	fq, err := scratchFIFO(ctx, q, "queuekit-fifob-")
	if err != nil {
		return FIFOBatchOutcome{}, err
	}
	defer func() { _ = q.Delete(context.WithoutCancel(ctx), fq) }()
	if _, err := q.SendFIFO(ctx, fq, []sqsqueue.FIFOMessage{{Body: "A1", Group: "A"}, {Body: "A2", Group: "A"},
		{Body: "A3", Group: "A"}}); err != nil {
		return FIFOBatchOutcome{}, err
	}
	got, err := q.Receive(ctx, fq, 10, time.Second)
	var out FIFOBatchOutcome
	for _, m := range got {
		out.Batch = append(out.Batch, m.Body)
		out.Groups = append(out.Groups, strings.TrimRight(m.Body, "0123456789"))
	}
	return out, err
}

// FIFOBatchSentence says what the batch means for a processor that hands
// each received message to its own worker.
func FIFOBatchSentence(o FIFOBatchOutcome) string {
	if len(o.Batch) == 0 {
		return "The receive got nothing."
	}
	s := fmt.Sprintf("One receive of up to 10 got **%s**: %s of group A in one batch.", strings.Join(o.Batch, ", "),
		lab.Plural(o.SameGroup(), "message", "messages"))
	if o.SameGroup() > 1 {
		s += fmt.Sprintf(" A processor that hands each message of a batch to its own worker, as this notebook's do, runs %s of one group **side by side**: the group was no lock.",
			lab.Plural(o.SameGroup(), "job", "jobs"))
	} else {
		s += " This server returned one message of the group per receive; SQS may return several."
	}
	return s
}
