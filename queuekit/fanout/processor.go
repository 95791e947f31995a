package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// Source processes one slice and returns its result as JSON.
type Source interface {
	Process(ctx context.Context, p Pointer) (json.RawMessage, error)
}

// SourceFunc is a function as a Source.
type SourceFunc func(ctx context.Context, p Pointer) (json.RawMessage, error)

// Process calls f.
func (f SourceFunc) Process(ctx context.Context, p Pointer) (json.RawMessage, error) {
	return f(ctx, p)
}

// ErrThrottled is what a Limited source returns over its rate.
var ErrThrottled = errors.New("source throttled the request")

// Limited returns src behind a token bucket of perSecond requests a second
// and the given burst: a request over the rate fails at once with
// ErrThrottled, as a throttled database does. DynamoDB Local never throttles
// (it ignores provisioned capacity), so the workshop puts the limit here.
func Limited(src Source, perSecond float64, burst int) Source {
	l := rate.NewLimiter(rate.Limit(perSecond), burst)
	return SourceFunc(func(ctx context.Context, p Pointer) (json.RawMessage, error) {
		if !l.Allow() {
			return nil, ErrThrottled
		}
		return src.Process(ctx, p)
	})
}

// Processing is how slices are worked: a Processor's settings, which
// Config holds for the Processor that Execute runs.
type Processing struct {
	// Workers bounds the slices in flight (default 4).
	Workers int
	// Visibility is the work queue's visibility timeout; a slice still
	// running after half of it gets it extended by as much again (default 30 s).
	Visibility time.Duration
	// Wait is the long-poll time of a receive, at most 20 s (default 20 s).
	Wait time.Duration
	// RetryAfter is the visibility timeout given to a message whose slice
	// failed, i.e. the pause before its next receive (default 0: at once).
	RetryAfter time.Duration
	// RetryJitter makes that pause "full jitter" exponential backoff (AWS
	// Architecture Blog, "Exponential Backoff And Jitter"): a uniformly
	// random whole number of seconds from 0 to RetryAfter × 2^(receives−1),
	// capped at SQS's 12-hour visibility limit; see FullJitter. Without it,
	// every failed slice comes back after exactly RetryAfter, so slices
	// refused together are retried together.
	RetryJitter bool
	// Fail, when it returns an error for a slice, makes that slice fail
	// before the source is asked (fault injection for the workshop).
	Fail func(Pointer) error
	// AfterWrite is called after a slice's result is written and before its
	// message is deleted (crash tests stop the process there).
	AfterWrite func(Pointer)
}

// Processor works slices from the work queue.
type Processor struct {
	Queues  *sqsqueue.Client
	Work    sqsqueue.Queue
	Results *Results
	Source  Source
	Processing
	// OnDone is called after a message is deleted; dup says the result was
	// already written (a redelivery).
	OnDone func(p Pointer, dup bool)

	stats counters
}

type counters struct {
	received, processed, duplicates, failed, redelivered, extended, throttled atomic.Int64
	extendFailed, retryFailed, deleteFailed, recordFailed                     atomic.Int64
}

// Stats counts what a processor did.
type Stats struct {
	Received    int // messages received
	Processed   int // results written
	Duplicates  int // messages whose result was already written (deleted, not counted)
	Failed      int // slice attempts that failed (the message comes back)
	Throttled   int // of which the source throttled
	Redelivered int // messages received with ApproximateReceiveCount > 1
	Extended    int // visibility extensions
	// Calls that failed without stopping the processor (an expired receipt
	// handle, a call that timed out): the message still comes back, later.
	ExtendFailed int // ChangeMessageVisibility extending a running slice
	RetryFailed  int // ChangeMessageVisibility setting a failed slice's RetryAfter
	DeleteFailed int // DeleteMessage after the result was written (it comes back and is found written)
	RecordFailed int // writing a failed attempt's cause to the results table
}

// Stats returns the counts so far.
func (p *Processor) Stats() Stats {
	s := &p.stats
	return Stats{Received: int(s.received.Load()), Processed: int(s.processed.Load()), Duplicates: int(s.duplicates.Load()),
		Failed: int(s.failed.Load()), Throttled: int(s.throttled.Load()), Redelivered: int(s.redelivered.Load()),
		Extended: int(s.extended.Load()), ExtendFailed: int(s.extendFailed.Load()), RetryFailed: int(s.retryFailed.Load()),
		DeleteFailed: int(s.deleteFailed.Load()), RecordFailed: int(s.recordFailed.Load())}
}

func (p *Processor) defaults() {
	if p.Workers < 1 {
		p.Workers = 4
	}
	if p.Visibility <= 0 {
		p.Visibility = 30 * time.Second
	}
	if p.Wait <= 0 || p.Wait > 20*time.Second {
		p.Wait = 20 * time.Second
	}
}

// Run receives and processes slices until done returns true (it is asked
// after every receive that comes back empty, and every second while busy) or
// ctx ends. It returns an error when the queue cannot be read, or when a
// call on a message finds the server gone (unreachable, another server, the
// queue deleted); other failed calls are counted in Stats.
func (p *Processor) Run(ctx context.Context, done func(ctx context.Context) (bool, error)) error {
	p.defaults()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.Workers) // slots below already bound it; the limit states it
	slots := make(chan struct{}, p.Workers)
	for range p.Workers {
		slots <- struct{}{}
	}
	lastCheck := time.Now()
	err := func() error {
		for gctx.Err() == nil {
			// Receive only as many messages as there are free workers: the
			// rest stay in the queue for other processors.
			n := 0
			select {
			case <-slots:
				n = 1
			case <-gctx.Done():
				return nil
			}
			for n < 10 && n < p.Workers {
				select {
				case <-slots:
					n++
					continue
				default:
				}
				break
			}
			out, err := p.Queues.SQS().ReceiveMessage(gctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(p.Work.URL), MaxNumberOfMessages: int32(n), WaitTimeSeconds: int32(p.Wait / time.Second),
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			})
			got := 0
			if out != nil {
				got = len(out.Messages)
			}
			for range n - got {
				slots <- struct{}{}
			}
			if err != nil {
				if gctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("receive from %s: %w", p.Work.Name, p.Queues.Explain(err))
			}
			for _, m := range out.Messages {
				g.Go(func() error {
					defer func() { slots <- struct{}{} }()
					return p.handle(gctx, m)
				})
			}
			if len(out.Messages) == 0 || time.Since(lastCheck) > time.Second {
				lastCheck = time.Now()
				ok, err := done(gctx)
				if err != nil {
					return err
				}
				if ok {
					return nil
				}
			}
		}
		return nil
	}()
	werr := g.Wait()
	if err != nil {
		return err
	}
	return werr
}

// handle processes one message: decode, extend visibility while running,
// fail (the cause is recorded, the message returns) or write the result and
// delete the message. It returns an error only when the server is gone (see
// fatal); the caller's errgroup then stops the processor.
func (p *Processor) handle(ctx context.Context, m types.Message) error {
	p.stats.received.Add(1)
	receives, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	if receives > 1 {
		p.stats.redelivered.Add(1)
	}
	var ptr Pointer
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ptr); err != nil {
		return p.fail(ctx, m, nil, receives, err) // not a pointer: it ends in the dead-letter queue
	}
	// Extend the visibility timeout every half timeout while the slice runs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(p.Visibility / 2)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_, err := p.Queues.SQS().ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(p.Work.URL),
					ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: int32(p.Visibility / time.Second)})
				if err == nil {
					p.stats.extended.Add(1)
				} else if ctx.Err() == nil {
					// The message comes back at its old timeout; a second
					// processor may then run the slice too, and finds its
					// result written (a duplicate, never a double count).
					p.stats.extendFailed.Add(1)
				}
			}
		}
	}()
	res, err := p.run(ctx, ptr)
	close(stop)
	wg.Wait()
	if err != nil {
		if errors.Is(err, ErrThrottled) {
			p.stats.throttled.Add(1)
		}
		return p.fail(ctx, m, &ptr, receives, err)
	}
	dup := false
	err = p.Results.put(ctx, sliceItem{Run: ptr.Run, Slice: ptr.Slice, Key: ptr.Key, Status: statusDone, Result: res})
	switch {
	case errors.Is(err, errWritten):
		dup = true
		p.stats.duplicates.Add(1)
	case err != nil:
		return p.fail(ctx, m, &ptr, receives, err)
	default:
		p.stats.processed.Add(1)
	}
	if p.AfterWrite != nil {
		p.AfterWrite(ptr)
	}
	if _, err := p.Queues.SQS().DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.Work.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
		if ctx.Err() != nil {
			return nil // stopping: the message comes back and is found written
		}
		err = p.Queues.Explain(err)
		if fatal(err) {
			return fmt.Errorf("delete message of slice %d from %s: %w", ptr.Slice, p.Work.Name, err)
		}
		p.stats.deleteFailed.Add(1) // it comes back and is found written
		return nil
	}
	if p.OnDone != nil {
		p.OnDone(ptr, dup)
	}
	return nil
}

// fatal reports whether err means the server is gone for every message, not
// just this one: SQS or DynamoDB unreachable or another server, or the work
// queue deleted. A processor stops on it instead of counting it.
func fatal(err error) bool {
	var (
		un *awsapi.UnreachableError // SQS or DynamoDB: the AWS layer's one type
		ws *awsapi.WrongServerError
		dm *catalog.TableMissingError
		nq *types.QueueDoesNotExist
	)
	return errors.As(err, &un) || errors.As(err, &ws) || errors.As(err, &dm) || errors.As(err, &nq)
}

func (p *Processor) run(ctx context.Context, ptr Pointer) (json.RawMessage, error) {
	if p.Fail != nil {
		if err := p.Fail(ptr); err != nil {
			return nil, err
		}
	}
	return p.Source.Process(ctx, ptr)
}

// fail records the cause of a failed attempt of slice ptr (nil: the body
// was not a pointer) in the results table, where the collator's dead-letter
// marker keeps the last one, and leaves the message to come back after
// RetryAfter (with RetryJitter: after FullJitter); after maxReceiveCount receives the RedrivePolicy moves it to
// the dead-letter queue. It returns an error only when the server is gone.
func (p *Processor) fail(ctx context.Context, m types.Message, ptr *Pointer, receives int, cause error) error {
	p.stats.failed.Add(1)
	if ctx.Err() != nil {
		return nil // stopping: the message comes back when its timeout runs out
	}
	if ptr != nil {
		err := p.Results.put(ctx, sliceItem{Run: ptr.Run, Slice: ptr.Slice, Key: ptr.Key, Status: statusFailed,
			Error: errorText(cause), Attempts: receives})
		switch {
		case err == nil, errors.Is(err, errWritten): // errWritten: a result or marker is there already
		case fatal(err):
			return fmt.Errorf("record the failure of slice %d: %w", ptr.Slice, err)
		default:
			p.stats.recordFailed.Add(1)
		}
	}
	_, err := p.Queues.SQS().ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(p.Work.URL),
		ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: int32(p.retryDelay(receives) / time.Second)})
	if err != nil && ctx.Err() == nil {
		err = p.Queues.Explain(err)
		if fatal(err) {
			return fmt.Errorf("retry slice on %s: %w", p.Work.Name, err)
		}
		// The message still comes back, only later: when its visibility
		// timeout runs out.
		p.stats.retryFailed.Add(1)
	}
	return nil
}

// Slow returns src taking d longer per slice: a slow source, to watch a
// processor extend the visibility timeout of a long slice.
func Slow(src Source, d time.Duration) Source {
	return SourceFunc(func(ctx context.Context, p Pointer) (json.RawMessage, error) {
		if err := wait.Sleep(ctx, d); err != nil {
			return nil, err
		}
		return src.Process(ctx, p)
	})
}
