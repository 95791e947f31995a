package sqsqueue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// An explicit MessageDeduplicationId: a second send with the same id within
// the 5-minute deduplication interval is accepted but not delivered, even
// with another body ("FIFO queue key terms", Message deduplication ID, SQS
// Developer Guide); groups come back with their MessageGroupId.
func TestFIFODeduplicationIDDropsTheSecondSend(t *testing.T) {
	t.Parallel()
	c := sqstest.Client(t)
	ctx := context.Background()
	q, err := c.CreateFIFO(ctx, sqsqueue.FIFOConfig{Name: sqstest.Name(t) + ".fifo", Visibility: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sqstest.Cleanup(t, c, q)
	ids, err := c.SendFIFO(ctx, q, []sqsqueue.FIFOMessage{
		{Body: "first", Group: "night-1", DedupID: "job-7"},
		{Body: "second", Group: "night-1", DedupID: "job-7"},
		{Body: "other", Group: "night-2", DedupID: "job-8"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("SendFIFO returned %d ids, want 3 (a duplicate send succeeds)", len(ids))
	}
	var got []sqsqueue.Received
	for range 3 { // a group yields one message at a time: receive, delete, again
		ms, err := c.Receive(ctx, q, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			got = append(got, m)
			if err := c.DeleteReceived(ctx, q, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	bodies := map[string]string{}
	for _, m := range got {
		bodies[m.Body] = m.Group
	}
	if len(got) != 2 || bodies["first"] != "night-1" || bodies["other"] != "night-2" {
		t.Errorf("received %+v; want first (night-1) and other (night-2), the second send with job-7 dropped", got)
	}
}

func TestFIFOInputErrors(t *testing.T) {
	c := sqstest.Client(t)
	ctx := context.Background()
	if _, err := c.CreateFIFO(ctx, sqsqueue.FIFOConfig{Name: "no-suffix"}); err == nil || !strings.Contains(err.Error(), ".fifo") {
		t.Errorf("CreateFIFO without .fifo: err = %v, want one naming the .fifo rule", err)
	}
	q, err := c.CreateFIFO(ctx, sqsqueue.FIFOConfig{Name: sqstest.Name(t) + ".fifo", ContentBasedDeduplication: true})
	if err != nil {
		t.Fatal(err)
	}
	sqstest.Cleanup(t, c, q)
	if _, err := c.SendFIFO(ctx, q, []sqsqueue.FIFOMessage{{Body: "x"}}); err == nil || !strings.Contains(err.Error(), "MessageGroupId") {
		t.Errorf("SendFIFO without a group: err = %v, want one naming MessageGroupId", err)
	}
	if _, err := c.Receive(ctx, q, 11, 0); err == nil {
		t.Error("Receive of 11 messages: no error, want SQS's 1 to 10")
	}
}
