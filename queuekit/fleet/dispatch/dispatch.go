// Package dispatch runs the two-tier fleet (docs/design/fleet.md, "Two
// tiers"): a few dispatchers own the due index's shards and send the jobs
// due to an SQS standard queue; many executors receive them, claim each job
// with the fleet's fenced write, run it and end it. It is built on package
// fleet, whose items, shard leases, claim and end it reuses unchanged.
//
// The protocol:
//
//   - A dispatcher (Tier.Dispatch) is package fleet's other component over
//     shard ownership (fleet.Fleet.Dispatch, fleet.DispatcherConfig). It starts with a jittered first look:
//     it waits a random fraction of FirstLook (default ShardLease/4, the
//     look interval) before anything else, so that a tier rolled out at
//     once spreads its shard acquires over the interval. Then it joins (a MEMBER item: dispatchers
//     only), owns shards through the fenced shard leases of package fleet
//     (acquired when free, or seen unchanged for a ShardLease on its own
//     clock, or MaxSkew past its end on its wall clock; renewed every ShardLease/4, released when it leaves), polls
//     only the shards it owns (one page of Page entries of `claim_shard = k
//     AND due_at <= now`, oldest first) and sends what it reads to the queue
//     with SendMessageBatch (after a round of looks with nothing new to
//     send, it waits Idle before the next), at most its share of the room
//     in the queue (Buffer less the messages waiting, read before each
//     round: the backpressure; the backlog waits in the index), a message per job: its key, fence_token,
//     execution_status, lease_until, current_retry, max_retry, lost_attempts and attempt
//     (Message). A job it sent is not sent again at the same token within
//     Resend; a job read while held is sent only once its lease was seen
//     unchanged for a whole Lease on the dispatcher's clock, or is MaxSkew
//     past its end on the dispatcher's wall clock (fleet.Options.MaxSkew).
//   - An executor (Tier.Execute) has Slots slots. It long-polls the queue
//     only for its free slots (up to 10 messages at a time), so a message
//     it receives is claimed at once; a free slot claims its message's job with
//     fleet.Fleet.Claim (fence_token = the message's AND due_at <= now; for
//     a held job, fence_token AND lease_until as the message has them),
//     hands the message to be deleted (DeleteMessageBatch, up to 10 a call)
//     whatever the claim did, and runs the job it won (fleet.Attempt.Run: a
//     heartbeat every Lease/4, the end fenced by the token). It writes
//     nothing else: no MEMBER item; its liveness is its jobs' leases.
//
// What it promises, and why:
//
//   - Every job ends exactly once (once per run of a recurring job): an end
//     is conditioned on the claim's token, and a claim moves the token on.
//     A duplicate message (SQS standard delivers at least once; a
//     dispatcher resends after Resend or after a takeover) carries a token
//     that has moved on, or finds the job out of the index: its claim is
//     refused and its message deleted.
//   - The work runs at least once: a job is deleted from the index only by
//     its end, so a job whose executor died (its message was deleted at
//     the claim) is due again when its lease ends, MaxSkew past its end on
//     its shard's owner's clock (or seen unchanged for a Lease by it),
//     sent, and claimed by the takeover condition: within MaxSkew, a head
//     rescan and a round of its lease's end, whoever owns the shard by
//     then (docs/design/fleet.md gives the whole bound). Its work runs
//     again from the start.
//   - A dead dispatcher's shards are taken by the others as the fleet's
//     shards are: within ShardLease + ShardLease/4 plus a poll. Jobs it
//     sent stay in the queue; jobs it read and did not send are still due.
//   - An executor that dies between receive and claim leaves its messages
//     invisible for the visibility timeout; SQS delivers them again.
//
// The queue is a hand-off, never the record: the job item is. So a
// message lost or sent twice changes when a job runs, never whether it
// ends, nor how often.
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// Options configure a Tier. Set them with the With... functions.
type Options struct {
	// Visibility is the visibility timeout of a received message (default
	// 10 s): a message whose executor died before deleting it is delivered
	// again after it.
	Visibility time.Duration
	// Wait is an executor's long poll (default 20 s, at most 20 s): how
	// long a receive waits for a message.
	Wait time.Duration
	// Page is how many entries of a shard a dispatcher reads in one look
	// (default 100; SQS's in-flight limit is 120,000 a queue).
	Page int
	// Resend is how long a dispatcher waits before it sends a job again at
	// the same token (default 30 s): longer than a message waits in the
	// queue, or the queue fills with duplicates (each a refused claim).
	Resend time.Duration
	// Idle is how long a dispatcher waits when a round of looks at its
	// shards found nothing new to send (default 500 ms): a new job waits up
	// to Idle before it is sent.
	Idle time.Duration
	// Buffer is the dispatchers' backpressure (default 10·Page): the most
	// messages they keep waiting in the queue, sent and not yet received.
	// Before each round of looks a dispatcher reads the queue's depth
	// (GetQueueAttributes ApproximateNumberOfMessages) and sends at most
	// its share of Buffer less that depth (fleet.DispatcherConfig.Room); executors
	// receive only for free slots, so a received message is claimed at
	// once and what is sent and not yet claimed stays at most Buffer + D
	// plus the executors' slots being claimed. Size it to the jobs a
	// second the executors start times a round of looks (Idle, or a
	// Query and a send when busy): less leaves slots idle, more only
	// lengthens the queue's wait (which must stay under Resend, or jobs
	// are sent twice).
	Buffer int
	// FirstLook is the window of a dispatcher's jittered first look
	// (default the fleet's ShardLease/4, its look interval; 0: none): a
	// dispatcher that starts waits Rand() · FirstLook before it joins and
	// reads the shard items, so that a tier rolled out at once does not
	// send its D·K shard acquires in the same second.
	FirstLook time.Duration
	// Rand draws the fraction of FirstLook a dispatcher waits, in [0, 1)
	// (default math/rand/v2's Float64). A test injects its own source.
	Rand func() float64
}

// Option is one functional option of New, a func(*Options) as package
// fleet's.
type Option = func(*Options)

// WithVisibility sets the visibility timeout of received messages.
func WithVisibility(d time.Duration) Option { return func(o *Options) { o.Visibility = d } }

// WithWait sets the executors' long poll.
func WithWait(d time.Duration) Option { return func(o *Options) { o.Wait = d } }

// WithPage sets the entries a dispatcher reads from a shard in one look.
func WithPage(n int) Option { return func(o *Options) { o.Page = n } }

// WithIdle sets how long a dispatcher with nothing new to send waits
// before it reads its shards again.
func WithIdle(d time.Duration) Option { return func(o *Options) { o.Idle = d } }

// WithBuffer sets the dispatchers' backpressure: the most messages kept
// waiting in the queue (Options.Buffer).
func WithBuffer(n int) Option { return func(o *Options) { o.Buffer = n } }

// WithResend sets how long a dispatcher waits before sending a job again
// at the same token.
func WithResend(d time.Duration) Option { return func(o *Options) { o.Resend = d } }

// WithFirstLook sets the window of a dispatcher's jittered first look (0:
// start at once, as a benchmark that times both tiers from their start
// does).
func WithFirstLook(d time.Duration) Option { return func(o *Options) { o.FirstLook = d } }

// WithRand sets the source of the first look's fraction: a func returning
// values in [0, 1), as math/rand/v2's (*Rand).Float64.
func WithRand(r func() float64) Option { return func(o *Options) { o.Rand = r } }

// Tier is the two-tier fleet on one fleet table and one SQS queue. Safe
// for concurrent use: a process may run dispatchers and executors at once.
type Tier struct {
	f    *fleet.Fleet
	sqs  *sqsqueue.Client
	q    sqsqueue.Queue
	opts Options
}

// New opens the tier on f's table and the queue q of client c. It does not
// contact either.
func New(f *fleet.Fleet, c *sqsqueue.Client, q sqsqueue.Queue, opts ...Option) (*Tier, error) {
	if f == nil || c == nil || q.URL == "" {
		return nil, fmt.Errorf("dispatch: want a fleet, an SQS client and a queue with its URL (open it with sqsqueue.Client.Open or CreateQueue)")
	}
	o := Options{Visibility: 10 * time.Second, Wait: 20 * time.Second, Page: 100, Resend: 30 * time.Second, Idle: 500 * time.Millisecond,
		FirstLook: f.Options().ShardLease / 4, Rand: rand.Float64}
	for _, fn := range opts {
		fn(&o)
	}
	if o.Buffer == 0 {
		o.Buffer = 10 * o.Page
	}
	if o.Visibility < time.Second || o.Wait < 0 || o.Wait > 20*time.Second || o.Page < 1 || o.Resend <= 0 || o.Idle <= 0 ||
		o.FirstLook < 0 || o.Rand == nil || o.Buffer < 1 {
		return nil, fmt.Errorf("dispatch options: visibility %s (at least 1s), wait %s (0 to 20s), page %d (at least 1), resend %s and idle %s (> 0), first look %s (>= 0), buffer %d (at least 1) and a random source",
			o.Visibility, o.Wait, o.Page, o.Resend, o.Idle, o.FirstLook, o.Buffer)
	}
	return &Tier{f: f, sqs: c, q: q, opts: o}, nil
}

// Fleet is the fleet the tier runs on.
func (t *Tier) Fleet() *fleet.Fleet { return t.f }

// Queue is the tier's queue.
func (t *Tier) Queue() sqsqueue.Queue { return t.q }

// CreateQueue creates (or opens, when it exists with the same attributes)
// the standard queue name with the given visibility timeout (whole seconds,
// at least 1 s): standard and not FIFO, the design says why.
func CreateQueue(ctx context.Context, c *sqsqueue.Client, name string, visibility time.Duration) (sqsqueue.Queue, error) {
	return c.Create(ctx, name, map[string]string{
		"VisibilityTimeout": fmt.Sprint(max(1, int(visibility.Round(time.Second)/time.Second)))})
}

// Message is one job handed to the executors: what its claim needs.
type Message struct {
	UserID       string          `json:"user_id"`
	JobID        string          `json:"job_id"`
	Token        int64           `json:"fence_token"`
	Status       queuekit.Status `json:"execution_status"`
	LeaseUntil   int64           `json:"lease_until,omitempty"`
	CurrentRetry int             `json:"current_retry"`
	MaxRetry     int             `json:"max_retry"`
	LostAttempts int             `json:"lost_attempts,omitempty"`
	Attempt      int             `json:"attempt"`
}

// MessageOf is the message of job j as read from the due index.
func MessageOf(j fleet.Job) Message {
	return Message{UserID: j.UserID, JobID: j.JobID, Token: j.Token, Status: j.Status, LeaseUntil: j.LeaseUntil,
		CurrentRetry: j.CurrentRetry, MaxRetry: j.MaxRetry, LostAttempts: j.LostAttempts, Attempt: j.Attempt}
}

// Job is the job a message names, with the fields its claim reads.
func (m Message) Job() fleet.Job {
	return fleet.Job{UserID: m.UserID, JobID: m.JobID, Token: m.Token, Status: m.Status, LeaseUntil: m.LeaseUntil,
		CurrentRetry: m.CurrentRetry, MaxRetry: m.MaxRetry, LostAttempts: m.LostAttempts, Attempt: m.Attempt}
}

// Encode is a message's body (JSON).
func (m Message) Encode() string {
	b, _ := json.Marshal(m) // a struct of strings and numbers always marshals
	return string(b)
}

// Decode reads a message body.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("message %.80q: not a job message: %w", body, err)
	}
	if m.UserID == "" || m.JobID == "" {
		return Message{}, fmt.Errorf("message %.80q: no user_id or job_id", body)
	}
	return m, nil
}

// Send sends jobs' messages to the queue (SendMessageBatch, ten at a time):
// the dispatchers' hand-over, also what a test uses to send a duplicate.
func (t *Tier) Send(ctx context.Context, jobs []fleet.Job) error {
	bodies := make([]string, len(jobs))
	for i, j := range jobs {
		bodies[i] = MessageOf(j).Encode()
	}
	return t.sqs.SendBatch(ctx, t.q, bodies)
}

// DispatcherConfig configures one dispatcher.
type DispatcherConfig struct {
	Name string
	// Shards is K, checked against the table's (0: the table's).
	Shards int
	// OnStats and StatsEvery as fleet.WorkerConfig's.
	OnStats    func(fleet.Stats)
	StatsEvery time.Duration
}

// FirstLook is how long a dispatcher that starts now waits before it
// joins and first reads the shard items: a fraction drawn from Rand of
// the FirstLook window, so that dispatchers started together (a rollout)
// look at different moments of the look interval and do not send their
// acquires of the free shards in the same second.
func (t *Tier) FirstLook() time.Duration {
	u := t.opts.Rand()
	if u < 0 || u >= 1 { // a source out of its contract waits the whole window at most
		u = min(max(u, 0), 1)
	}
	return time.Duration(u * float64(t.opts.FirstLook))
}

// Dispatch runs one dispatcher until ctx ends (see the package doc): a
// fleet worker that owns shards and sends their due jobs to the queue. It
// first waits FirstLook (the jittered first look), then joins. It returns
// the worker's counters (Dispatched: jobs sent); a ctx that ends during
// the wait returns zero counters and no error, nothing written.
func (t *Tier) Dispatch(ctx context.Context, cfg DispatcherConfig) (fleet.Stats, error) {
	if d := t.FirstLook(); d > 0 {
		if wait.Sleep(ctx, d) != nil {
			return fleet.Stats{Name: cfg.Name}, nil
		}
	}
	return t.f.Dispatch(ctx, fleet.DispatcherConfig{Name: cfg.Name, Shards: cfg.Shards, OnStats: cfg.OnStats, StatsEvery: cfg.StatsEvery,
		Page: t.opts.Page, Resend: t.opts.Resend, Idle: t.opts.Idle, Room: t.Room, Send: t.Send})
}

// Room is how many more messages the dispatchers may send now: Buffer less
// the messages waiting in the queue unreceived (one GetQueueAttributes;
// on AWS the count is approximate, so the bound is too).
func (t *Tier) Room(ctx context.Context) (int, error) {
	d, err := t.sqs.Depth(ctx, t.q)
	if err != nil {
		return 0, err
	}
	return t.opts.Buffer - d.Visible, nil
}
