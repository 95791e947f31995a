package sqsqueue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// FIFOConfig describes a FIFO queue for CreateFIFO.
type FIFOConfig struct {
	// Name must end in ".fifo" (SQS's rule for FIFO queue names).
	Name string
	// ContentBasedDeduplication makes SQS use a SHA-256 hash of the body as
	// the deduplication id of a message sent without one.
	ContentBasedDeduplication bool
	// Visibility is the default visibility timeout, whole seconds
	// (default 30 s, SQS's own default).
	Visibility time.Duration
}

// CreateFIFO creates (or opens, if it exists with the same attributes) a
// FIFO queue: messages of one message group are delivered in order and one
// at a time, and a message whose deduplication id was sent in the last five
// minutes is accepted but not delivered again.
func (c *Client) CreateFIFO(ctx context.Context, cfg FIFOConfig) (Queue, error) {
	if !strings.HasSuffix(cfg.Name, ".fifo") {
		return Queue{}, fmt.Errorf("FIFO queue name %q: SQS wants a FIFO queue's name to end in .fifo", cfg.Name)
	}
	attrs := map[string]string{
		string(types.QueueAttributeNameFifoQueue):                 "true",
		string(types.QueueAttributeNameContentBasedDeduplication): strconv.FormatBool(cfg.ContentBasedDeduplication),
	}
	if cfg.Visibility > 0 {
		attrs[string(types.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(max(1, int(cfg.Visibility.Round(time.Second)/time.Second)))
	}
	return c.Create(ctx, cfg.Name, attrs)
}

// FIFOMessage is one message for SendFIFO.
type FIFOMessage struct {
	Body string
	// Group is the MessageGroupId (required on a FIFO queue): messages of
	// one group are delivered in the order sent, one group member in flight
	// at a time.
	Group string
	// DedupID is the MessageDeduplicationId; empty uses the queue's
	// content-based deduplication (the queue must have it on).
	DedupID string
}

// SendFIFO sends msgs one SendMessage each, in order (the order within a
// group is the order of the sends), and returns the message ids SQS gave.
// A duplicate within the deduplication interval succeeds: SQS accepts it and
// does not deliver it.
func (c *Client) SendFIFO(ctx context.Context, q Queue, msgs []FIFOMessage) ([]string, error) {
	ids := make([]string, 0, len(msgs))
	for i, m := range msgs {
		if m.Group == "" {
			return ids, fmt.Errorf("send to FIFO queue %s: message %d has no group: a FIFO queue wants a MessageGroupId", q.Name, i)
		}
		in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(m.Body), MessageGroupId: aws.String(m.Group)}
		if m.DedupID != "" {
			in.MessageDeduplicationId = aws.String(m.DedupID)
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		out, err := c.sqs.SendMessage(cctx, in)
		cancel()
		if err != nil {
			return ids, fmt.Errorf("send message %d (group %s) to queue %s: %w", i, m.Group, q.Name, c.Explain(err))
		}
		ids = append(ids, aws.ToString(out.MessageId))
	}
	return ids, nil
}

// Received is a received message: its body, group (FIFO queues) and the
// receipt handle that deletes it.
type Received struct {
	Body, Group, Receipt string
}

// Receive receives up to maxMessages (1 to 10) from q, long polling for up
// to wait (whole seconds, at most 20 s; 0 returns at once).
func (c *Client) Receive(ctx context.Context, q Queue, maxMessages int, wait time.Duration) ([]Received, error) {
	if maxMessages < 1 || maxMessages > 10 {
		return nil, fmt.Errorf("receive from %s: max messages %d: SQS wants 1 to 10", q.Name, maxMessages)
	}
	secs := min(20, int(wait/time.Second))
	cctx, cancel := context.WithTimeout(ctx, c.timeout+time.Duration(secs)*time.Second)
	defer cancel()
	out, err := c.sqs.ReceiveMessage(cctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
		MaxNumberOfMessages: int32(maxMessages), WaitTimeSeconds: int32(secs),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameMessageGroupId}})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", q.Name, c.Explain(err))
	}
	got := make([]Received, 0, len(out.Messages))
	for _, m := range out.Messages {
		got = append(got, Received{Body: aws.ToString(m.Body), Receipt: aws.ToString(m.ReceiptHandle),
			Group: m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]})
	}
	return got, nil
}

// DeleteReceived deletes a received message (the consumer is done with it).
func (c *Client) DeleteReceived(ctx context.Context, q Queue, m Received) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if _, err := c.sqs.DeleteMessage(cctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String(m.Receipt)}); err != nil {
		return fmt.Errorf("delete a message of %s: %w", q.Name, c.Explain(err))
	}
	return nil
}
