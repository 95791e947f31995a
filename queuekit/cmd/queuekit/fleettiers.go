package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// tierFlags are the flags the two tiers' processes share (the fleet's,
// the queue and its endpoint, the process's name).
type tierFlags struct {
	ff          *fleetFlags
	sqsEndpoint *string
	queue       *string
	name        *string
	visibilityS *float64
}

func addTierFlags(fs *flag.FlagSet) *tierFlags {
	// The fleet's flags without --poll-all: dispatchers own their shards.
	ff := &fleetFlags{df: addDynamoFlags(fs), withLeases: true}
	fs.IntVar(&ff.leaseMS, "lease-ms", 10000, "a job's lease, ms; heartbeats every quarter (the same for every dispatcher and executor: a dispatcher resends a held job once its lease was seen unchanged this long)")
	fs.IntVar(&ff.shardMS, "shard-lease-ms", 6000, "a shard's and a dispatcher's membership lease, ms; renewed and rebalanced every quarter")
	ff.addSkewFlag(fs)
	return &tierFlags{ff: ff, sqsEndpoint: addSQSFlag(fs),
		queue:       fs.String("queue", "", "the SQS standard queue between dispatchers and executors (required; created when missing)"),
		name:        fs.String("name", "", "this process's name (default host-pid)"),
		visibilityS: fs.Float64("visibility-s", 10, "visibility timeout of a received message, s (1 to 43,200): a message whose executor died before deleting it comes back after it")}
}

func (tf *tierFlags) check() error {
	if err := tf.ff.check(); err != nil {
		return err
	}
	if *tf.queue == "" || len(*tf.queue) > 80 || strings.ContainsFunc(*tf.queue, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return usagef("--queue %q: required, 1 to 80 letters, digits, - or _ (an SQS queue name)", *tf.queue)
	}
	if !(*tf.visibilityS >= 1 && *tf.visibilityS <= 43_200) {
		return usagef("--visibility-s %v: must be 1 to 43,200 seconds", *tf.visibilityS)
	}
	if *tf.name == "" {
		host, _ := os.Hostname()
		*tf.name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if strings.ContainsAny(*tf.name, " \t\n") || len(*tf.name) > 100 {
		return usagef("--name %q: 1 to 100 characters, no spaces", *tf.name)
	}
	return checkSQSEndpoint(*tf.sqsEndpoint)
}

// open opens the fleet and the queue (created when missing) as a tier.
func (tf *tierFlags) open(ctx context.Context, opts ...dispatch.Option) (*dispatch.Tier, error) {
	f, err := tf.ff.open(ctx)
	if err != nil {
		return nil, err
	}
	c, err := openQueues(ctx, *tf.sqsEndpoint)
	if err != nil {
		return nil, err
	}
	vis := time.Duration(*tf.visibilityS * float64(time.Second))
	q, err := c.Open(ctx, *tf.queue)
	var missing *sqsqueue.MissingError
	if errors.As(err, &missing) {
		q, err = dispatch.CreateQueue(ctx, c, *tf.queue, vis)
	}
	if err != nil {
		return nil, err
	}
	t, err := dispatch.New(f, c, q, append([]dispatch.Option{dispatch.WithVisibility(vis)}, opts...)...)
	if err != nil {
		return nil, badInput(err)
	}
	return t, nil
}

// runFleetDispatcher is `queuekit fleet dispatcher`: one dispatcher of the
// two-tier fleet until stopped, its counters as JSON lines on stdout.
func runFleetDispatcher(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fleet dispatcher")
	shards := fs.Int("shards", 0, "shards of the fleet table, K (required; must match the table's)")
	page := fs.Int("page", 100, "entries of a shard read in one look, 1 to 1,000 (one Query page)")
	resendMS := fs.Int("resend-ms", 30000, "send a job again at the same fence token only after this long, ms (100 to 3,600,000)")
	buffer := fs.Int("buffer", 0, "backpressure: the most messages kept waiting in the queue, sent and not yet received (0: 10 x --page; 1 to 1,000,000)")
	idleMS := fs.Int("idle-ms", 500, "after a round of looks with nothing new to send, wait this long before the next, ms (1 to 60,000)")
	tf := addTierFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *idleMS < 1 || *idleMS > 60_000 {
		return usagef("--idle-ms %d: must be 1 to 60,000", *idleMS)
	}
	if *shards < 1 || *shards > fleet.MaxShards {
		return usagef("--shards %d: required, 1 to %d (the fleet table's K)", *shards, fleet.MaxShards)
	}
	if *page < 1 || *page > 1000 {
		return usagef("--page %d: must be 1 to 1,000", *page)
	}
	if *resendMS < 100 || *resendMS > 3_600_000 {
		return usagef("--resend-ms %d: must be 100 to 3,600,000", *resendMS)
	}
	if *buffer < 0 || *buffer > 1_000_000 {
		return usagef("--buffer %d: must be 1 to 1,000,000 (or 0: 10 x --page)", *buffer)
	}
	if err := tf.check(); err != nil {
		return err
	}
	t, err := tf.open(ctx, dispatch.WithPage(*page), dispatch.WithResend(time.Duration(*resendMS)*time.Millisecond),
		dispatch.WithIdle(time.Duration(*idleMS)*time.Millisecond), dispatch.WithBuffer(*buffer))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	st, err := t.Dispatch(ctx, dispatch.DispatcherConfig{Name: *tf.name, Shards: *shards,
		OnStats: func(s fleet.Stats) { mu.Lock(); _ = enc.Encode(s); mu.Unlock() }})
	if err != nil {
		return fleetAsUsage(err)
	}
	fmt.Fprintf(stderr, "queuekit fleet dispatcher %s: %d jobs sent (%d of them again, %d sends failed; %d rounds found the queue full); shards acquired %d, released %d, lost %d\n",
		st.Name, st.Dispatched, st.Resent, st.DispatchErrors, st.Full, st.ShardsAcquired, st.ShardsReleased, st.ShardsLost)
	return nil
}

// runFleetExecutor is `queuekit fleet executor`: one executor of the
// two-tier fleet until stopped, its counters as JSON lines on stdout.
func runFleetExecutor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fleet executor")
	slots := fs.Int("slots", 0, "jobs this executor runs at once, S (required)")
	jobMS := fs.Float64("job-ms", 0, "how long one job's work takes, ms")
	workLog := fs.String("work-log", "", "append \"<job_id> <attempt>\" here each time a job's work finishes")
	waitS := fs.Int("wait-s", 20, "long poll of a receive, s (0 to 20)")
	tf := addTierFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *slots < 1 || *slots > 1024 {
		return usagef("--slots %d: required, 1 to 1,024", *slots)
	}
	if err := checkNum("job-ms", *jobMS, 3_600_000); err != nil {
		return err
	}
	if *waitS < 0 || *waitS > 20 {
		return usagef("--wait-s %d: must be 0 to 20 (SQS's longest long poll)", *waitS)
	}
	if err := tf.check(); err != nil {
		return err
	}
	var logw io.Writer
	if *workLog != "" {
		lf, err := fleet.OpenWorkLog(*workLog)
		if err != nil {
			return usagef("--work-log %s: %v", *workLog, err)
		}
		defer lf.Close()
		logw = lf
	}
	t, err := tf.open(ctx, dispatch.WithWait(time.Duration(*waitS)*time.Second))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	st, err := t.Execute(ctx, dispatch.ExecutorConfig{Name: *tf.name, Slots: *slots,
		Work: fleet.Sleep(time.Duration(*jobMS * float64(time.Millisecond))), WorkLog: logw,
		OnStats: func(s dispatch.ExecutorStats) { mu.Lock(); _ = enc.Encode(s); mu.Unlock() }})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "queuekit fleet executor %s: received %d; claims won %d, refused %d; %d succeeded, %d retried, %d fatal, %d fenced\n",
		st.Name, st.Received, st.Won, st.Refused, st.Succeeded, st.Retried, st.Fatal, st.Fenced)
	return nil
}
