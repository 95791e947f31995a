// Package sqsqueue is the SQS client (named for SQS, not "queue": the
// workshop's job queue is the DynamoDB catalog). It opens Amazon SQS queues
// for the workshop: a client that works unchanged against AWS SQS and against
// ElasticMQ (the SQS server the tests and the workshop run), queues with a
// dead-letter queue wired through a RedrivePolicy, queue depths, and the move
// of dead-lettered messages back to their source queue (redrive).
//
// Endpoint: Options.Endpoint, else the standard AWS_ENDPOINT_URL_SQS, else
// the AWS endpoint of the region. A local endpoint (localhost, a loopback
// address or a one-label host such as the docker-compose service "sqs") gets
// static dummy credentials, which ElasticMQ accepts; any other endpoint goes
// through the standard configuration chain, so dummy credentials never reach
// AWS. A connection failure becomes an *UnreachableError whose one-line
// message names the endpoint and how to start ElasticMQ.
package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// EnvEndpoint is the standard AWS variable naming the SQS endpoint.
const EnvEndpoint = awsapi.SQSEnv

// StartHint tells a person how to get an SQS server for the workshop.
const StartHint = awsapi.SQSStartHint

// Client is an SQS client with the workshop's error messages. It is safe for
// concurrent use.
type Client struct {
	conn     *awsapi.Conn
	sqs      *sqs.Client
	endpoint string // "" means the AWS default endpoint
	local    bool
	timeout  time.Duration
}

// Options configures New; each field has a WithX option.
type Options struct {
	// Endpoint is the SQS endpoint URL, e.g. http://127.0.0.1:9324
	// (default: $AWS_ENDPOINT_URL_SQS, else AWS through the standard
	// configuration chain).
	Endpoint string
	// Region is the region (default: the configuration chain's, us-east-1
	// for a local endpoint).
	Region string
	// CallTimeout bounds every call but long polls (default 30 s).
	CallTimeout time.Duration
}

// Option is one functional option of New: a func(*Options), the SDK's optFns
// form. It is an alias, so the With helpers and a plain func literal mix.
type Option = func(*Options)

// WithEndpoint sets the endpoint URL, e.g. http://127.0.0.1:9324.
func WithEndpoint(u string) Option { return func(o *Options) { o.Endpoint = u } }

// WithRegion sets the region (default: the configuration chain's, us-east-1
// for a local endpoint).
func WithRegion(r string) Option { return func(o *Options) { o.Region = r } }

// WithCallTimeout bounds every call but long polls (default 30 s).
func WithCallTimeout(d time.Duration) Option { return func(o *Options) { o.CallTimeout = d } }

// New returns a client. It does not contact SQS; the first call does.
func New(ctx context.Context, opts ...Option) (*Client, error) {
	o := Options{CallTimeout: 30 * time.Second}
	for _, fn := range opts {
		fn(&o)
	}
	conn, err := awsapi.Load(ctx, awsapi.SQS, awsapi.Endpoint{URL: o.Endpoint, Region: o.Region})
	var badPrefix *awsapi.NamePrefixError
	if errors.As(err, &badPrefix) {
		return nil, err
	}
	if errors.Is(err, awsapi.ErrNotURL) {
		ep := o.Endpoint
		if ep == "" {
			ep = os.Getenv(EnvEndpoint)
		}
		return nil, fmt.Errorf("SQS endpoint %q: not a URL; write it as http://127.0.0.1:9324", ep)
	}
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration for SQS: %w; check AWS_PROFILE and AWS_REGION", err)
	}
	if conn.Config.Region == "" {
		return nil, fmt.Errorf("no SQS endpoint: set %s (e.g. http://127.0.0.1:9324) for ElasticMQ, or AWS_REGION for AWS; %s", EnvEndpoint, StartHint)
	}
	c := &Client{conn: conn, endpoint: conn.URL, local: conn.Local, timeout: o.CallTimeout}
	c.sqs = sqs.NewFromConfig(conn.Config, func(so *sqs.Options) {
		so.BaseEndpoint = conn.BaseEndpoint()
		so.APIOptions = append(so.APIOptions, awsapi.CheckAnswers(missing))
	})
	return c, nil
}

// SQS returns the SDK client, for calls this package does not wrap.
func (c *Client) SQS() *sqs.Client { return c.sqs }

// Endpoint returns the endpoint in use, "" for the AWS default.
func (c *Client) Endpoint() string { return c.endpoint }

// UnreachableError says that nothing answered at the SQS endpoint: the AWS
// layer's one type, with Service awsapi.SQS.
type UnreachableError = awsapi.UnreachableError

// WrongServerError says that something answered at the SQS endpoint, but
// not as SQS does (for example a web server answering HTML, or DynamoDB):
// the AWS layer's one type, with Service awsapi.SQS.
type WrongServerError = awsapi.WrongServerError

// Explain turns a connection failure into an *UnreachableError and an
// answer that is not SQS's into a *WrongServerError; other errors are
// returned unchanged.
func (c *Client) Explain(err error) error { return c.conn.Explain(err) }

// MissingError says that a queue does not exist.
type MissingError struct {
	Name, Endpoint string
	Err            error
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("queue %s does not exist at %s", e.Name, e.Endpoint)
}

// Unwrap returns the SDK error.
func (e *MissingError) Unwrap() error { return e.Err }

// Queue names one queue.
type Queue struct {
	Name string
	URL  string
	ARN  string
}

// Create creates (or opens, if it exists with the same attributes) a
// standard queue and returns its URL and ARN.
func (c *Client) Create(ctx context.Context, name string, attrs map[string]string) (Queue, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out, err := c.sqs.CreateQueue(cctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return Queue{}, fmt.Errorf("create queue %s: %w", name, c.Explain(err))
	}
	q := Queue{Name: name, URL: aws.ToString(out.QueueUrl)}
	a, err := c.sqs.GetQueueAttributes(cctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return Queue{}, fmt.Errorf("queue %s: read its ARN: %w", name, c.Explain(err))
	}
	q.ARN = a.Attributes[string(types.QueueAttributeNameQueueArn)]
	return q, nil
}

// Pair is a work queue and its dead-letter queue.
type Pair struct {
	Work, Dead Queue
	// MaxReceives is the RedrivePolicy's maxReceiveCount: a message received
	// that many times without being deleted moves to Dead on its next receive.
	MaxReceives int
}

// CreateWithDLQ creates name and name-dlq, the first with a RedrivePolicy
// sending a message to the second after maxReceives receives, and the given
// default visibility timeout (whole seconds, at least 1 s).
func (c *Client) CreateWithDLQ(ctx context.Context, name string, maxReceives int, visibility time.Duration) (Pair, error) {
	if maxReceives < 1 {
		return Pair{}, fmt.Errorf("max receives %d: SQS wants maxReceiveCount >= 1", maxReceives)
	}
	dead, err := c.Create(ctx, name+"-dlq", map[string]string{"MessageRetentionPeriod": "1209600"})
	if err != nil {
		return Pair{}, err
	}
	policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, dead.ARN, maxReceives)
	work, err := c.Create(ctx, name, map[string]string{
		"RedrivePolicy":     policy,
		"VisibilityTimeout": strconv.Itoa(max(1, int(visibility.Round(time.Second)/time.Second))),
	})
	if err != nil {
		return Pair{}, err
	}
	return Pair{Work: work, Dead: dead, MaxReceives: maxReceives}, nil
}

// Open returns an existing queue by name.
func (c *Client) Open(ctx context.Context, name string) (Queue, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out, err := c.sqs.GetQueueUrl(cctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		var missing *types.QueueDoesNotExist
		if errors.As(err, &missing) {
			return Queue{}, &MissingError{Name: name, Endpoint: c.endpoint, Err: err}
		}
		return Queue{}, fmt.Errorf("open queue %s: %w", name, c.Explain(err))
	}
	return Queue{Name: name, URL: aws.ToString(out.QueueUrl)}, nil
}

// Delete deletes q; a queue already gone is fine.
func (c *Client) Delete(ctx context.Context, q Queue) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.sqs.DeleteQueue(cctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(q.URL)})
	var missing *types.QueueDoesNotExist
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("delete queue %s: %w", q.Name, c.Explain(err))
	}
	return nil
}

// Depth is SQS's approximate count of a queue's messages.
type Depth struct {
	Visible  int // ApproximateNumberOfMessages
	InFlight int // ApproximateNumberOfMessagesNotVisible (received, not yet deleted)
}

// Depth reads the approximate number of visible and in-flight messages.
func (c *Client) Depth(ctx context.Context, q Queue) (Depth, error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out, err := c.sqs.GetQueueAttributes(cctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return Depth{}, fmt.Errorf("depth of queue %s: %w", q.Name, c.Explain(err))
	}
	v, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	f, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return Depth{Visible: v, InFlight: f}, nil
}

// SendBatch sends bodies with SendMessageBatch, ten at a time (the SQS
// limit), and fails if any entry fails.
func (c *Client) SendBatch(ctx context.Context, q Queue, bodies []string) error {
	for start := 0; start < len(bodies); start += 10 {
		end := min(start+10, len(bodies))
		entries := make([]types.SendMessageBatchRequestEntry, 0, end-start)
		for i := start; i < end; i++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(bodies[i])})
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		out, err := c.sqs.SendMessageBatch(cctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		cancel()
		if err != nil {
			return fmt.Errorf("send to queue %s: %w", q.Name, c.Explain(err))
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return fmt.Errorf("send to queue %s: %d of %d entries failed, first %s: %s", q.Name, len(out.Failed), len(entries), aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	return nil
}

// Redrive moves every message of from to to: receive, send, then delete, so
// a crash in between duplicates a message rather than losing it (consumers
// are idempotent). It stops when a receive comes back empty and returns how
// many it moved. AWS also offers StartMessageMoveTask for this; a plain
// receive-send-delete loop works on every SQS server, ElasticMQ included.
func (c *Client) Redrive(ctx context.Context, from, to Queue) (int, error) {
	moved := 0
	for {
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		out, err := c.sqs.ReceiveMessage(rctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(from.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30})
		cancel()
		if err != nil {
			return moved, fmt.Errorf("redrive %s to %s: receive: %w", from.Name, to.Name, c.Explain(err))
		}
		if len(out.Messages) == 0 {
			return moved, nil
		}
		bodies := make([]string, len(out.Messages))
		del := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
		for i, m := range out.Messages {
			bodies[i] = aws.ToString(m.Body)
			del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		}
		if err := c.SendBatch(ctx, to, bodies); err != nil {
			return moved, fmt.Errorf("redrive %s to %s: %w", from.Name, to.Name, err)
		}
		if err := c.DeleteBatch(ctx, from, del); err != nil {
			return moved, fmt.Errorf("redrive %s to %s: %w", from.Name, to.Name, err)
		}
		moved += len(out.Messages)
	}
}

// DeleteBatch deletes received messages with DeleteMessageBatch and fails if
// any entry fails.
func (c *Client) DeleteBatch(ctx context.Context, q Queue, entries []types.DeleteMessageBatchRequestEntry) error {
	if len(entries) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out, err := c.sqs.DeleteMessageBatch(cctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
	if err != nil {
		return fmt.Errorf("delete from queue %s: %w", q.Name, c.Explain(err))
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("delete from queue %s: %d entries failed, first %s", q.Name, len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return nil
}

// Ping checks that SQS answers at the endpoint, so a command can stop
// before it writes anything. It asks for the URL of a queue no one creates:
// SQS (and ElasticMQ) answers QueueDoesNotExist, which is the expected
// answer; a server that answers anything else, or with JSON lacking the
// QueueUrl every GetQueueUrl reply has, is not SQS (WrongServerError).
func (c *Client) Ping(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.sqs.GetQueueUrl(cctx, &sqs.GetQueueUrlInput{QueueName: aws.String("queuekit-ping-no-such-queue")})
	var missing *types.QueueDoesNotExist
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("ask SQS for a queue: %w", c.Explain(err))
	}
	return nil
}
