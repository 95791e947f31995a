package dispatch

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// ExecutorConfig configures one executor.
type ExecutorConfig struct {
	Name  string
	Slots int
	Work  fleet.WorkFunc
	// WorkLog, when set, gets "<job_id> <attempt>" each time a job's work
	// finished with its lease held (fleet.WorkerConfig.WorkLog's lines).
	WorkLog io.Writer
	// OnStats, when set, is called about every StatsEvery (default
	// 250 ms) and once at the end with the counters so far.
	OnStats    func(ExecutorStats)
	StatsEvery time.Duration
}

// ExecutorStats are one executor's counters.
type ExecutorStats struct {
	Name string `json:"name"`
	// Received counts messages received; Deleted those it deleted.
	Received int `json:"received"`
	Deleted  int `json:"deleted"`
	// Won counts claims that committed; Refused those a condition refused
	// (duplicate or stale messages: dropped); ClaimErrors those with no
	// answer (they may have landed).
	Won         int `json:"won"`
	Refused     int `json:"refused"`
	ClaimErrors int `json:"claim_errors"`
	// Ends counts how the attempts this executor won ended (Fatal also
	// counts the jobs its claims found past their lost attempts' bound).
	fleet.Ends
	// BadMessages counts bodies that named no job (deleted);
	// ReceiveErrors and DeleteErrors SQS calls that failed.
	BadMessages   int `json:"bad_messages"`
	ReceiveErrors int `json:"receive_errors"`
	DeleteErrors  int `json:"delete_errors"`
	// Writes, TableWU, IndexWU: DynamoDB write requests and the units it
	// reported (claims, heartbeats, ends).
	Writes  int     `json:"writes"`
	TableWU float64 `json:"table_wu"`
	IndexWU float64 `json:"index_wu"`
	// LastError is the last SQS or DynamoDB error seen.
	LastError string `json:"last_error,omitempty"`
}

func (s *ExecutorStats) cost(c fleet.WriteCost) {
	s.Writes += c.Requests
	s.TableWU += c.TableWU
	s.IndexWU += c.IndexWU
}

// executor is one running executor.
type executor struct {
	t   *Tier
	cfg ExecutorConfig
	mu  sync.Mutex
	st  ExecutorStats
}

func (e *executor) add(fn func(st *ExecutorStats)) {
	e.mu.Lock()
	fn(&e.st)
	e.mu.Unlock()
}

func (e *executor) stats() ExecutorStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st
}

// Execute runs one executor until ctx ends (see the package doc): a
// receiver long-polls the queue only for free slots, up to 10 messages at
// a time, so no message waits for a slot; each slot claims the job of
// the next message, hands the message to the deleter (DeleteMessageBatch,
// up to 10 a call, whatever the claim did) and runs the job it won to its
// end. When ctx ends it stops receiving and claiming (messages received and
// not claimed come back after the visibility timeout), lets its jobs finish
// and end, and returns its counters. It never exits on SQS or DynamoDB
// being away: it counts the error and tries again after a pause (its jobs'
// leases lapse meanwhile, and they come back).
func (t *Tier) Execute(ctx context.Context, cfg ExecutorConfig) (ExecutorStats, error) {
	if cfg.Slots < 1 || cfg.Name == "" || cfg.Work == nil {
		return ExecutorStats{}, fmt.Errorf("executor: slots %d (want >= 1), name %q (want one), work (want one)", cfg.Slots, cfg.Name)
	}
	if cfg.StatsEvery <= 0 {
		cfg.StatsEvery = 250 * time.Millisecond
	}
	e := &executor{t: t, cfg: cfg}
	e.st.Name = cfg.Name
	// Claims, ends and deletes of jobs in hand outlive ctx, briefly.
	final, cancelFinal := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFinal()
	stopStats := make(chan struct{})
	statsDone := make(chan struct{})
	go func() {
		defer close(statsDone)
		tk := time.NewTicker(cfg.StatsEvery)
		defer tk.Stop()
		for {
			select {
			case <-stopStats:
				return
			case <-tk.C:
				if cfg.OnStats != nil {
					cfg.OnStats(e.stats())
				}
			}
		}
	}()
	msgs := make(chan types.Message, cfg.Slots)
	free := make(chan struct{}, cfg.Slots) // a token per free slot
	for range cfg.Slots {
		free <- struct{}{}
	}
	go e.receiveLoop(ctx, msgs, free)
	dels := newDeletes()
	delDone := make(chan struct{})
	go func() { defer close(delDone); e.deleteLoop(final, dels) }()
	var slots sync.WaitGroup
	for range cfg.Slots {
		slots.Add(1)
		go func() {
			defer slots.Done()
			for m := range msgs {
				if ctx.Err() == nil { // stopping: not claimed, delivered again after the visibility timeout
					if a := e.claim(final, m, dels); a != nil {
						e.run(final, a)
					}
				}
				free <- struct{}{}
			}
		}()
	}
	slots.Wait()
	dels.close()
	<-delDone
	close(stopStats)
	<-statsDone
	st := e.stats()
	if cfg.OnStats != nil {
		cfg.OnStats(st)
	}
	return st, nil
}

// receiveLoop long-polls the queue until ctx ends for as many messages as
// there are free slots (a token on free each, up to 10: SQS's most), and
// hands each message to a slot, which gives its token back when done; it
// closes msgs when it stops.
func (e *executor) receiveLoop(ctx context.Context, msgs chan<- types.Message, free chan struct{}) {
	defer close(msgs)
	for ctx.Err() == nil {
		select { // wait for a free slot
		case <-free:
		case <-ctx.Done():
			return
		}
		n := 1
		for n < 10 {
			select {
			case <-free:
				n++
				continue
			default:
			}
			break
		}
		batch, err := e.receive(ctx, n)
		if err != nil && ctx.Err() == nil {
			e.add(func(st *ExecutorStats) { st.ReceiveErrors++; st.LastError = err.Error() })
			_ = wait.Sleep(ctx, time.Second)
		}
		for range n - len(batch) { // tokens of slots no message came for
			free <- struct{}{}
		}
		for _, m := range batch {
			msgs <- m // a slot is free for each: never blocks
		}
	}
}

// receive long-polls the queue for up to n messages.
func (e *executor) receive(ctx context.Context, n int) ([]types.Message, error) {
	t := e.t
	out, err := t.sqs.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(t.q.URL),
		MaxNumberOfMessages: int32(n), WaitTimeSeconds: int32(t.opts.Wait / time.Second),
		VisibilityTimeout: int32(max(1, t.opts.Visibility/time.Second))})
	if err != nil {
		return nil, fmt.Errorf("receive from queue %s: %w", t.q.Name, t.sqs.Explain(err))
	}
	e.add(func(st *ExecutorStats) { st.Received += len(out.Messages) })
	return out.Messages, nil
}

// claim claims the job of m and hands m's receipt to the deleter whatever
// the claim did: a refused claim is a duplicate or a stale message
// (dropped); a claim with no answer may have landed, and the job comes back
// by its lease or its dispatcher's resend either way. It returns the
// attempt won, or nil.
func (e *executor) claim(ctx context.Context, m types.Message, dels *deletes) *fleet.Attempt {
	defer dels.add(m.ReceiptHandle) // never blocks: a slow delete must not hold a claimed job
	msg, err := Decode(aws.ToString(m.Body))
	if err != nil {
		e.add(func(st *ExecutorStats) { st.BadMessages++; st.LastError = err.Error() })
		return nil
	}
	a, res, cost, err := e.t.f.Claim(ctx, msg.Job(), e.cfg.Name)
	e.add(func(st *ExecutorStats) {
		st.cost(cost)
		switch {
		case err != nil:
			st.ClaimErrors++
			st.LastError = err.Error()
		case res == fleet.Claimed:
			st.Won++
		case res == fleet.EndedFatal:
			st.Fatal++
		default:
			st.Refused++
		}
	})
	return a
}

// deletes is the receipts waiting for the deleter: slots add to it without
// ever waiting (a DeleteMessageBatch that is slow, SQS busy or away, must
// not keep a slot from running the job it has just claimed, whose lease is
// running), and the deleter takes them ten at a time.
type deletes struct {
	mu     sync.Mutex
	queue  []*string
	closed bool
	wake   chan struct{} // a receipt was added, or the queue closed
}

func newDeletes() *deletes { return &deletes{wake: make(chan struct{}, 1)} }

func (d *deletes) add(h *string) {
	d.mu.Lock()
	d.queue = append(d.queue, h)
	d.mu.Unlock()
	d.signal()
}

func (d *deletes) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.signal()
}

func (d *deletes) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// take removes up to n receipts; done is true once the queue is closed
// and empty.
func (d *deletes) take(n int) (hs []*string, waiting int, done bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := min(n, len(d.queue))
	hs = append(hs, d.queue[:k]...)
	d.queue = d.queue[k:]
	return hs, len(d.queue), d.closed && len(d.queue) == 0 && k == 0
}

// deleteLoop deletes the messages whose receipts are added to dels, ten to
// a DeleteMessageBatch, sending a batch when ten wait or 100 ms after the
// first of a batch came (a message whose job was claimed may wait: its
// duplicates are refused claims); it returns when dels is closed and
// drained.
func (e *executor) deleteLoop(ctx context.Context, dels *deletes) {
	flush := func(hs []*string) {
		if len(hs) == 0 {
			return
		}
		batch := make([]types.DeleteMessageBatchRequestEntry, len(hs))
		for i, h := range hs {
			batch[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: h}
		}
		if err := e.t.sqs.DeleteBatch(ctx, e.t.q, batch); err != nil {
			// Not deleted: delivered again after the visibility timeout,
			// and then refused by the token.
			e.add(func(st *ExecutorStats) { st.DeleteErrors++; st.LastError = err.Error() })
			return
		}
		n := len(batch)
		e.add(func(st *ExecutorStats) { st.Deleted += n })
	}
	for {
		<-dels.wake
		_, waiting, done := dels.take(0)
		if done {
			return
		}
		if waiting > 0 && waiting < 10 { // let a batch fill, 100 ms at most
			deadline := time.After(100 * time.Millisecond)
		fill:
			for {
				select {
				case <-deadline:
					break fill
				case <-dels.wake:
					if _, w, _ := dels.take(0); w >= 10 {
						break fill
					}
				}
			}
		}
		for {
			hs, left, _ := dels.take(10)
			flush(hs)
			if left < 10 { // a partial batch left waits for its 100 ms
				if left > 0 {
					dels.signal()
				}
				break
			}
		}
		if _, _, done := dels.take(0); done {
			return
		}
	}
}

// run runs one claimed attempt to its end.
func (e *executor) run(ctx context.Context, a *fleet.Attempt) {
	status, err := a.Run(ctx, e.cfg.Work, e.cfg.WorkLog)
	e.add(func(st *ExecutorStats) {
		st.cost(a.Cost())
		st.Ends.Count(status, err)
		if err != nil {
			st.LastError = err.Error()
		}
	})
}
