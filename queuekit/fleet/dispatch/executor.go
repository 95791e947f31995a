package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fence"
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
	// Succeeded, Retried, Fatal count the ends this executor wrote (a
	// recurring run's end counts as succeeded; Fatal includes jobs whose
	// claim found their last attempt's lease run out).
	Succeeded int `json:"succeeded"`
	Retried   int `json:"retried"`
	Fatal     int `json:"fatal"`
	// Fenced counts attempts whose lease was lost (refused by the token, or
	// not renewed in time: Expired); EndErrors ends with no answer.
	Fenced    int `json:"fenced"`
	Expired   int `json:"expired"`
	EndErrors int `json:"end_errors"`
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

// Execute runs one executor until ctx ends (see the package doc): it
// receives messages for its free slots, claims their jobs, deletes the
// messages, runs the jobs it won and ends them. When ctx ends it stops
// receiving, lets its jobs finish and end, and returns its counters. It
// never exits on SQS or DynamoDB being away: it counts the error and tries
// again after a pause (its jobs' leases lapse meanwhile, and they come back).
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
	slots := make(chan struct{}, cfg.Slots) // a token per busy slot
	var running sync.WaitGroup
	for ctx.Err() == nil {
		select { // one free slot at least
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		free := 1
		for free < min(10, cfg.Slots) {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		msgs, err := e.receive(ctx, free)
		for range free - len(msgs) {
			<-slots
		}
		if err != nil {
			if ctx.Err() == nil {
				e.add(func(st *ExecutorStats) { st.ReceiveErrors++; st.LastError = err.Error() })
				_ = wait.Sleep(ctx, time.Second)
			}
			continue
		}
		won := e.claimAll(final, msgs)
		for range len(msgs) - len(won) {
			<-slots
		}
		for _, a := range won {
			running.Add(1)
			go func() {
				defer running.Done()
				defer func() { <-slots }()
				e.run(final, a)
			}()
		}
	}
	running.Wait()
	close(stopStats)
	<-statsDone
	st := e.stats()
	if cfg.OnStats != nil {
		cfg.OnStats(st)
	}
	return st, nil
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

// claimAll claims the jobs of msgs at once, deletes every message (a
// refused claim is a duplicate or a stale message: dropped; a claim with
// no answer may have landed, and the job comes back by its lease or its
// dispatcher's resend either way), and returns the attempts won.
func (e *executor) claimAll(ctx context.Context, msgs []types.Message) []*fleet.Attempt {
	got := make([]*fleet.Attempt, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		msg, err := Decode(aws.ToString(m.Body))
		if err != nil {
			e.add(func(st *ExecutorStats) { st.BadMessages++; st.LastError = err.Error() })
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
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
			got[i] = a
		}()
	}
	wg.Wait()
	del := make([]types.DeleteMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
	}
	if err := e.t.sqs.DeleteBatch(ctx, e.t.q, del); err != nil {
		// Not deleted: delivered again after the visibility timeout, and
		// then refused by the token.
		e.add(func(st *ExecutorStats) { st.DeleteErrors++; st.LastError = err.Error() })
	} else {
		e.add(func(st *ExecutorStats) { st.Deleted += len(del) })
	}
	var won []*fleet.Attempt
	for _, a := range got {
		if a != nil {
			won = append(won, a)
		}
	}
	return won
}

// run runs one claimed attempt to its end.
func (e *executor) run(ctx context.Context, a *fleet.Attempt) {
	status, err := a.Run(ctx, e.cfg.Work, e.cfg.WorkLog)
	e.add(func(st *ExecutorStats) {
		st.cost(a.Cost())
		switch {
		case fence.Lost(err):
			st.Fenced++
			if errors.Is(err, fence.ErrExpired) {
				st.Expired++
			}
			st.LastError = err.Error()
		case err != nil:
			st.EndErrors++
			st.LastError = err.Error()
		case status == queuekit.StatusSuccess, status == queuekit.StatusNotStarted:
			st.Succeeded++
		case status == queuekit.StatusRetriableFailure:
			st.Retried++
		case status == queuekit.StatusFatalFailure:
			st.Fatal++
		}
	})
}
