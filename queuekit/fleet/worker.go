package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/sync/errgroup"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// WorkFunc does one job's work. ctx is cancelled when the job's lease is
// lost. An error retries the job (with backoff, while retries are left);
// queuekit.Fatal(err) ends it FATAL_FAILURE at once.
type WorkFunc func(ctx context.Context, j Job) error

// Sleep is the work of a job that takes d: it waits d (or until ctx ends),
// and fails as the job's Fail attribute says ("retriable", "fatal").
func Sleep(d time.Duration) WorkFunc {
	return func(ctx context.Context, j Job) error {
		if d > 0 && wait.Sleep(ctx, d) != nil {
			return context.Cause(ctx)
		}
		switch j.Fail {
		case "retriable":
			return errors.New("the job's work failed (fail=retriable)")
		case "fatal":
			return queuekit.Fatal(errors.New("the job's work failed (fail=fatal)"))
		}
		return nil
	}
}

// WorkerConfig configures one worker (one process, usually).
type WorkerConfig struct {
	Name   string
	Slots  int
	Shards int // K, checked against the table's
	Work   WorkFunc
	// WorkLog, when set, gets one line "<job_id> <attempt>" each time a
	// job's work finishes, written with one Write (open it O_APPEND).
	WorkLog io.Writer
	// OnStats, when set, is called about every StatsEvery (default
	// 250 ms), and once at the end, with the counters so far: a stream of
	// snapshots (fleet-worker writes them as JSON lines for its
	// coordinator), not progress toward a total.
	OnStats    func(Stats)
	StatsEvery time.Duration
}

// DispatcherConfig configures a dispatcher of the two-tier fleet (package
// dispatch), the other component over shard ownership: it joins, owns
// shards and polls them as a worker does, but hands the due jobs it reads
// to Send (which sends them to a queue) instead of claiming them; it claims
// nothing and runs no work. A look reads one page of Page entries of a
// shard (default 100); a job handed over is not handed over again at the
// same fence token until Resend (default 30 s) has passed. What bounds the
// queue is Room (below), not the page: a look starts where the last one
// ended, so without Room a dispatcher walks and sends the whole backlog. A
// job read while held is handed over only once it may be taken over (seen
// unchanged for a whole lease on this dispatcher's clock, or MaxSkew past
// its end: stale), as a worker's claim would be. A Send that fails (the queue away) is counted and tried
// again at the next look. When a round of looks at its shards finds
// nothing new to send, a dispatcher waits Idle (default 500 ms) before the
// next round, where a worker waits the fleet's Poll. A dispatcher's look
// starts where its last look at the shard ended, and from the shard's head
// again every 4·Idle: entries sent and not yet claimed are not read again
// at every look, and a job that became due behind that point (a lease that
// ran out, a job scheduled in the past) waits at most 4·Idle longer.
type DispatcherConfig struct {
	Name   string
	Shards int // K, checked against the table's
	// OnStats and StatsEvery as WorkerConfig's.
	OnStats    func(Stats)
	StatsEvery time.Duration

	Send   func(ctx context.Context, jobs []Job) error
	Page   int
	Resend time.Duration
	Idle   time.Duration
	// Room, when set, is the dispatcher's backpressure: how many more
	// messages the queue may take now (its buffer less what waits in it
	// unreceived). At the start of each round of looks a dispatcher asks
	// Room and reads and sends at most its share of it, Room × shards it
	// owns / K rounded up (so D dispatchers overshoot the buffer by at most
	// D); with no room it reads nothing and waits Idle before asking again.
	// The backlog then waits in the due index, not in the queue. A Room
	// that fails (the queue away) counts as a failed hand-over.
	Room func(ctx context.Context) (int, error)
}

// Ends counts how the attempts a process ran ended: the one-tier worker's
// Stats and the two-tier executors' counters share it, and Count is the
// one reading of what Attempt.Run returned.
type Ends struct {
	// EndErrors counts ends that got no answer (DynamoDB away or too slow,
	// the SDK's retries spent within the call timeout): such an end may
	// have landed (counted nowhere else); if it did not, the job is
	// claimed again when its lease ends.
	EndErrors int `json:"end_errors"`
	// Succeeded, Retried, Fatal count the ends written (a recurring run's
	// end counts as succeeded; Fatal also counts jobs a claim found past
	// their lost attempts' bound, which the claimer ends).
	Succeeded int `json:"succeeded"`
	Retried   int `json:"retried"`
	Fatal     int `json:"fatal"`
	// Fenced counts attempts whose lease was lost (heartbeat or end refused,
	// or no heartbeat through in time).
	Fenced int `json:"fenced"`
	// Expired counts the part of Fenced lost because no heartbeat got
	// through before the lease's end less its margin (DynamoDB slow or
	// away): the holder gave the lease up itself. The rest of Fenced was
	// refused by the token: somebody else took the lease first.
	Expired int `json:"expired"`
}

// Count adds one attempt's end: status and err as Attempt.Run returned
// them.
func (e *Ends) Count(status queuekit.Status, err error) {
	switch {
	case fence.Lost(err):
		e.Fenced++
		if errors.Is(err, fence.ErrExpired) {
			e.Expired++
		}
	case err != nil:
		e.EndErrors++
	case status == queuekit.StatusSuccess, status == queuekit.StatusNotStarted:
		e.Succeeded++
	case status == queuekit.StatusRetriableFailure:
		e.Retried++
	case status == queuekit.StatusFatalFailure:
		e.Fatal++
	}
}

// Stats are one worker's counters.
type Stats struct {
	Name string `json:"name"`
	// Won and Lost count claims (conditional UpdateItems) that committed and
	// that a condition refused.
	Won  int `json:"won"`
	Lost int `json:"lost"`
	// ClaimErrors counts the part of Lost that got no answer (DynamoDB
	// away or too slow, the SDK's retries spent): such a claim may have
	// landed; its job is then claimed again when that lease ends.
	ClaimErrors int `json:"claim_errors"`
	// Ends counts how the attempts this worker won ended.
	Ends
	// Writes is every write request sent (refused ones too: AWS bills them);
	// TableWU and IndexWU the write units DynamoDB reported consumed.
	Writes  int     `json:"writes"`
	TableWU float64 `json:"table_wu"`
	IndexWU float64 `json:"index_wu"`
	// ShardsAcquired, ShardsReleased, ShardsLost count ownership changes;
	// Owned is the shards owned at the last report.
	ShardsAcquired int   `json:"shards_acquired"`
	ShardsReleased int   `json:"shards_released"`
	ShardsLost     int   `json:"shards_lost"`
	Owned          []int `json:"owned"`
	// Queries counts the due index Queries.
	Queries int `json:"queries"`
	// Rejoins counts memberships lost (not renewed in time) and taken again.
	Rejoins int `json:"rejoins"`
	// HeartbeatCopies counts the membership and shard heartbeats that were
	// sent again because the first had no answer after fence.Options.Hedge
	// (a slow call): writes the control plane's model does not count, zero
	// while calls are fast. They are in Writes too.
	HeartbeatCopies int `json:"heartbeat_copies"`
	// Landed counts writes (claims, ends, shard acquires and releases)
	// whose reply was lost and whose retry was refused by the write's own
	// effect, recognised as this worker's by its nonce: not lost, not fenced.
	Landed int `json:"landed"`
	// Wants counts shards this worker asked a busier owner to give back.
	Wants int `json:"wants"`
	// Rebalances counts this worker's looks at the shard items;
	// ShardReads the Query requests (pages) they took, ShardReadUnits the
	// read units DynamoDB reported for them: the control plane's reads,
	// O(K) per rebalance, whatever the number of workers.
	Rebalances     int     `json:"rebalances"`
	ShardReads     int     `json:"shard_reads"`
	ShardReadUnits float64 `json:"shard_read_units"`
	// LastLoss says how the last fenced attempt lost its lease.
	LastLoss string `json:"last_loss,omitempty"`
	// Dispatched counts the jobs a dispatcher handed over (Fleet.Dispatch),
	// DispatchErrors the hand-overs that failed.
	Dispatched     int `json:"dispatched,omitempty"`
	DispatchErrors int `json:"dispatch_errors,omitempty"`
	// Resent counts the part of Dispatched sent again at the same token
	// (not claimed within Resend); RoomLooks the asks of DispatcherConfig.Room
	// (one queue-depth read each); Full the rounds that found no room.
	Resent    int `json:"resent,omitempty"`
	RoomLooks int `json:"room_looks,omitempty"`
	Full      int `json:"full,omitempty"`
}

// owned is one shard this worker holds.
type owned struct {
	hold   fence.Hold
	keeper *fence.Keeper
	live   context.Context
}

// usable reports whether the worker may still act as the shard's owner: its
// keeper has not lost the lease, and the lease, as far as the worker knows,
// lasts beyond a margin of a quarter lease. (After a pause the keeper learns
// of a loss only at its next heartbeat; until then, time tells.)
func (o *owned) usable(now time.Time, lease time.Duration) bool {
	return o.live.Err() == nil && now.Before(o.keeper.Valid().Add(-lease/4))
}

// worker is one running worker.
type worker struct {
	f   *Fleet
	cfg WorkerConfig
	// disp is a dispatcher's configuration (nil for a worker); idle is
	// how long a round of looks that found nothing waits.
	disp *DispatcherConfig
	idle time.Duration

	mu       sync.Mutex
	st       Stats
	w        writes
	shards   map[int]*owned
	inflight map[string]bool
	// watch is, per job read while held, the lease (token, lease_until)
	// first seen and when, on this worker's monotonic clock; shardWatch the
	// same per shard. A lease is taken over once it has been seen unchanged
	// for a whole lease, or is MaxSkew past its end (stale; the package
	// doc, "Clocks").
	watch      map[string]seenLease
	shardWatch map[string]seenLease
	// sent is, for a dispatcher, each job handed over: its token then and
	// when (this worker's clock).
	sent map[string]seenLease
	// cursors is, for a dispatcher, where each shard's last look ended
	// (read and written by the poll goroutine only).
	cursors map[int]cursor
}

// cursor is the index key of the last entry a dispatcher's look read in a
// shard, and when it began reading from the shard's head.
type cursor struct {
	key   map[string]types.AttributeValue
	since time.Time
}

// seenLease is a lease as first seen: its token and end (the holder's
// clock, never compared with ours) and when we saw it (our clock).
type seenLease struct {
	token, until int64
	at           time.Time
}

// stale reports whether the lease (token, until) read held may be taken
// over (see the package doc, "Clocks"): seen unchanged for at least lease
// by now on this worker's monotonic clock (recorded as first seen now
// otherwise), or, with MaxSkew set, its end until (the holder's clock)
// past by MaxSkew on this worker's wall clock. The second rule is what
// bounds a takeover while shards change hands: a new owner, which has seen
// nothing yet, takes a lease that ended long ago at its first look instead
// of watching it for a whole lease again.
func (f *Fleet) stale(m map[string]seenLease, id string, token, until int64, lease time.Duration, now time.Time) bool {
	s, ok := m[id]
	if !ok || s.token != token || s.until != until {
		s = seenLease{token: token, until: until, at: now}
		m[id] = s
	}
	if f.opts.MaxSkew > 0 && f.now().UnixMilli() >= until+f.opts.MaxSkew.Milliseconds() {
		return true
	}
	return now.Sub(s.at) >= lease
}

// add updates the counters under wk.mu. fn must not make network calls:
// no lock is held across one.
func (wk *worker) add(fn func(st *Stats, w *writes)) {
	wk.mu.Lock()
	fn(&wk.st, &wk.w)
	wk.mu.Unlock()
}

// merge adds the counters of one operation's writes.
func (wk *worker) merge(w writes) {
	wk.add(func(st *Stats, all *writes) {
		all.requests += w.requests
		all.tableWU += w.tableWU
		all.gsiWU += w.gsiWU
		all.refused += w.refused
		all.failed += w.failed
		st.Landed += w.landed
	})
}

func (wk *worker) stats() Stats {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	s := wk.st
	s.Writes, s.TableWU, s.IndexWU = wk.w.requests, wk.w.tableWU, wk.w.gsiWU
	s.Owned = nil
	for k, o := range wk.shards {
		if o.usable(time.Now(), wk.f.opts.ShardLease) {
			s.Owned = append(s.Owned, k)
		}
	}
	slices.Sort(s.Owned)
	return s
}

// Join runs one worker until ctx ends: it joins the fleet, owns its shards
// (or polls them all, WithPollAll), claims due jobs for its free slots, runs
// them, and ends them. When ctx ends it stops claiming, lets the jobs it
// holds finish and end, releases its shards and leaves. It returns its
// counters.
func (f *Fleet) Join(ctx context.Context, cfg WorkerConfig) (Stats, error) {
	if cfg.Slots < 1 || cfg.Name == "" || cfg.Work == nil {
		return Stats{}, fmt.Errorf("worker: slots %d (want >= 1), name %q (want one), work (want one)", cfg.Slots, cfg.Name)
	}
	return f.serve(ctx, cfg, nil)
}

// Dispatch runs one dispatcher until ctx ends (DispatcherConfig): it joins
// the fleet and owns its shards as a worker does, and sends what its looks
// find due instead of claiming it. When ctx ends it releases its shards and
// leaves. It returns its counters (Dispatched: jobs sent).
func (f *Fleet) Dispatch(ctx context.Context, dc DispatcherConfig) (Stats, error) {
	if dc.Name == "" || dc.Send == nil {
		return Stats{}, fmt.Errorf("dispatcher: name %q (want one), send (want one)", dc.Name)
	}
	dc.Page = cmp.Or(dc.Page, 100)
	dc.Resend = cmp.Or(dc.Resend, 30*time.Second)
	dc.Idle = cmp.Or(dc.Idle, 500*time.Millisecond)
	if dc.Page < 1 || dc.Resend < 0 || dc.Idle < 0 {
		return Stats{}, fmt.Errorf("dispatcher %s: page %d (want >= 1), resend %s and idle %s (want > 0)", dc.Name, dc.Page, dc.Resend, dc.Idle)
	}
	return f.serve(ctx, WorkerConfig{Name: dc.Name, Shards: dc.Shards, OnStats: dc.OnStats, StatsEvery: dc.StatsEvery}, &dc)
}

// serve runs a member of the fleet, a worker (disp nil) or a dispatcher:
// the shard ownership both share (membership, rebalancing, releases on
// leaving) and the role's loop.
func (f *Fleet) serve(ctx context.Context, cfg WorkerConfig, disp *DispatcherConfig) (Stats, error) {
	k, err := f.Shards(ctx)
	if err != nil {
		return Stats{}, err
	}
	if cfg.Shards != 0 && cfg.Shards != k {
		return Stats{}, &ShardCountError{Table: f.Table(), Want: k, Got: cfg.Shards}
	}
	cfg.Shards = k
	if cfg.StatsEvery <= 0 {
		cfg.StatsEvery = 250 * time.Millisecond
	}
	idle := f.opts.Poll
	if disp != nil {
		idle = disp.Idle
	}
	wk := &worker{f: f, cfg: cfg, disp: disp, idle: idle, shards: map[int]*owned{}, inflight: map[string]bool{},
		watch: map[string]seenLease{}, shardWatch: map[string]seenLease{}, sent: map[string]seenLease{}, cursors: map[int]cursor{}}
	wk.st.Name = cfg.Name
	// Final writes (ends of jobs in flight, releases) outlive ctx, briefly.
	final, cancelFinal := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFinal()

	g, gctx := errgroup.WithContext(ctx)
	var member *membership
	if !f.opts.PollAll {
		member = &membership{wk: wk}
		for { // the table answered just now (Shards): a join with no answer is sent again
			err := member.join(ctx, final)
			if err == nil {
				break
			}
			// Stopped while joining: a stop, not an error. Nothing is held;
			// a join that landed unseen leaves a MEMBER item its TTL removes.
			if ctx.Err() != nil {
				return wk.stats(), nil
			}
			if !noAnswer(err) {
				return Stats{}, err
			}
			if wait.Sleep(ctx, f.opts.Poll) != nil {
				return wk.stats(), nil
			}
		}
		g.Go(func() error { return member.keep(gctx, final) })
		g.Go(func() error { return wk.rebalance(gctx, final) })
	}
	cands := make(chan Job, cfg.Slots)
	g.Go(func() error { defer close(cands); return wk.poll(gctx, cands) })
	slotsDone := make(chan struct{})
	var slots sync.WaitGroup
	for range cfg.Slots {
		slots.Add(1)
		go func() {
			defer slots.Done()
			for j := range cands {
				wk.run(final, j)
			}
		}()
	}
	go func() { slots.Wait(); close(slotsDone) }()
	g.Go(func() error {
		t := time.NewTicker(cfg.StatsEvery)
		defer t.Stop()
		for {
			select {
			case <-gctx.Done():
				return nil
			case <-t.C:
				if cfg.OnStats != nil {
					cfg.OnStats(wk.stats())
				}
			}
		}
	})
	gerr := g.Wait()
	<-slotsDone
	// Leave: release the shards, end the membership.
	wk.mu.Lock()
	held := wk.shards
	wk.shards = map[int]*owned{}
	wk.mu.Unlock()
	for k, o := range held {
		// Released even when its keeper gave up on it: its renewals went
		// unanswered but may have landed, and a shard left held by a worker
		// that has gone would wait a whole lease for the next owner.
		o.keeper.Stop()
		wk.giveBack(final, k, o.hold) // no lock held across the call
	}
	if member != nil {
		member.leave(final)
	}
	st := wk.stats()
	if cfg.OnStats != nil {
		cfg.OnStats(st)
	}
	if ctx.Err() == nil && gerr != nil {
		return st, gerr
	}
	return st, nil
}

// membership is the worker's MEMBER lease. Lost (DynamoDB too slow to
// renew it in time, or the process paused), it is taken again under a new
// token: the worker's shards follow from the assignment either way.
type membership struct {
	wk     *worker
	mu     sync.Mutex
	hold   fence.Hold
	keeper *fence.Keeper
	live   context.Context
}

func (m *membership) join(ctx, life context.Context) error {
	f := m.wk.f
	var w writes
	h, since, err := f.join(ctx, &w, m.wk.cfg.Name) // no lock held across the call
	m.wk.merge(w)
	if err != nil {
		return err
	}
	k, live := fence.Keep(life, since, f.opts.ShardLease, m.wk.beat(func(w *writes) fence.Beat { return f.renewMember(w, h) }), m.wk.countCopies)
	m.mu.Lock()
	m.hold, m.keeper, m.live = h, k, live
	m.mu.Unlock()
	return nil
}

// keep joins again whenever the membership is lost, until ctx ends.
func (m *membership) keep(ctx, life context.Context) error {
	for {
		m.mu.Lock()
		live, k := m.live, m.keeper
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-live.Done():
		}
		_ = k.Stop()
		m.wk.add(func(st *Stats, _ *writes) { st.Rejoins++ })
		for {
			err := m.join(ctx, life)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			if !noAnswer(err) {
				return err
			}
			if wait.Sleep(ctx, m.wk.f.opts.Poll) != nil {
				return nil
			}
		}
	}
}

// leave ends the membership, if still held, so the others rebalance at
// their next look.
func (m *membership) leave(ctx context.Context) {
	m.mu.Lock()
	h, k := m.hold, m.keeper
	m.mu.Unlock()
	if k.Stop() == nil {
		var w writes
		_ = m.wk.f.leave(ctx, &w, h) // no lock held across the call
		m.wk.merge(w)
	}
}

// ShardCountError says that a worker was started with another K than the
// table's.
type ShardCountError struct {
	Table     string
	Want, Got int
}

func (e *ShardCountError) Error() string {
	return fmt.Sprintf("--shards %d: the fleet table %s was made for %d shards; start the worker with --shards %d", e.Got, e.Table, e.Want, e.Want)
}

// beat wraps a heartbeat built on the worker's write counters.
// countCopies makes a control-plane keeper count its hedged copies in
// Stats.HeartbeatCopies.
func (wk *worker) countCopies(o *fence.Options) {
	o.OnCopy = func() { wk.add(func(st *Stats, _ *writes) { st.HeartbeatCopies++ }) }
}

func (wk *worker) beat(mk func(w *writes) fence.Beat) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		var w writes
		err := mk(&w)(ctx, until)
		wk.merge(w)
		return err
	}
}

// rebalance keeps this worker's shards: every ShardLease/4 it reads the K
// shard items (one Query) and balances (see rebalanceOnce).
func (wk *worker) rebalance(ctx, life context.Context) error {
	f := wk.f
	t := time.NewTicker(f.opts.ShardLease / 4)
	defer t.Stop()
	for {
		if err := wk.rebalanceOnce(ctx, life); err != nil && ctx.Err() == nil {
			if !noAnswer(err) { // DynamoDB away or silent: the keepers stop what they cannot renew
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// rebalanceOnce is one look at the K shard items (the only read; MEMBER
// items are not read, so its cost is O(K) whatever the number of workers):
//
//   - a shard is live when its holder's (token, lease_until) changed within
//     the last ShardLease on this worker's clock, stale when seen unchanged
//     that long, free when nobody holds it;
//   - the live holders, this worker included, are the fleet that owns
//     shards: n of them, so each should own about target = ceil(K/n);
//   - a worker owning more than target, or a shard wanted by a worker owning
//     at least two fewer, gives shards back (release);
//   - one owning fewer takes free and stale shards up to target, and when
//     none is left, asks the busiest owner (two or more above it) for one
//     with a want mark; that owner gives it back at its next look.
//
// With more workers than shards, each of K workers owns one shard and the
// others wait for one to come free: ownership is for throughput.
func (wk *worker) rebalanceOnce(ctx, life context.Context) error {
	byShard, err := wk.readShards(ctx)
	if err != nil {
		return err
	}
	v := wk.sortShards(byShard)
	// A shard whose keeper gave up may still be held at our token (its
	// renewals landed, their replies did not come back): release it, so it
	// is free now rather than a lease from now (refused, and left alone, if
	// another worker took it meanwhile).
	for i, k := range v.lost {
		wk.giveBack(life, k, v.lostHolds[i]) // life: a stop now must not leave it held
	}
	target := (wk.cfg.Shards + len(v.load) - 1) / len(v.load)
	have := wk.giveBackExcess(life, byShard, v.mine, target)
	switch {
	case have >= target:
		return nil
	case len(v.takeable) > 0:
		return wk.takeShards(ctx, life, v.takeable, have, target)
	default:
		return wk.askBusiest(ctx, byShard, v.load, have)
	}
}

// readShards is the look's one read: the K shard items, by shard (a shard
// never written is free), counted in the worker's stats.
func (wk *worker) readShards(ctx context.Context) ([]ShardState, error) {
	states, cost, err := wk.f.shardStates(ctx)
	if err != nil {
		return nil, err
	}
	wk.add(func(st *Stats, _ *writes) {
		st.Rebalances++ // looks that read the shard items; failed reads are not counted
		st.ShardReads += cost.requests
		st.ShardReadUnits += cost.units
	})
	byShard := make([]ShardState, wk.cfg.Shards)
	for k := range byShard {
		byShard[k].Shard = k
	}
	for _, s := range states {
		if s.Shard >= 0 && s.Shard < len(byShard) {
			byShard[s.Shard] = s
		}
	}
	return byShard, nil
}

// shardView is what one look makes of the shard items: the shards this
// worker still owns (mine, sorted), those whose keeper gave up (lost, with
// the holds to release them by), each live owner's load (this worker's
// included) and the shards free or stale (takeable).
type shardView struct {
	mine      []int
	lost      []int
	lostHolds []fence.Hold
	load      map[string]int
	takeable  []ShardState
}

// sortShards drops the shards whose keeper gave up (ShardsLost) and sorts
// the others into the view, under the worker's lock.
func (wk *worker) sortShards(byShard []ShardState) shardView {
	me := wk.cfg.Name
	now := time.Now()
	wk.mu.Lock()
	defer wk.mu.Unlock()
	var v shardView
	for k, o := range wk.shards {
		if o.live.Err() != nil {
			v.lost = append(v.lost, k)
		}
	}
	v.lostHolds = make([]fence.Hold, len(v.lost))
	for i, k := range v.lost {
		v.lostHolds[i] = wk.shards[k].hold
		delete(wk.shards, k)
		wk.st.ShardsLost++
	}
	v.mine = make([]int, 0, len(wk.shards))
	for k := range wk.shards {
		v.mine = append(v.mine, k)
	}
	slices.Sort(v.mine)
	v.load = map[string]int{me: len(v.mine)}
	for _, s := range byShard {
		switch {
		case wk.shards[s.Shard] != nil:
		case s.Holder == "":
			v.takeable = append(v.takeable, s)
		case wk.f.stale(wk.shardWatch, strconv.Itoa(s.Shard), s.Token, s.UntilMS, wk.f.opts.ShardLease, now):
			v.takeable = append(v.takeable, s)
		case s.Holder != me:
			v.load[s.Holder]++
		}
	}
	return v
}

// giveBackExcess releases this worker's shards above target, and those
// wanted by a worker two or more below it, and returns how many it keeps.
func (wk *worker) giveBackExcess(life context.Context, byShard []ShardState, mine []int, target int) int {
	me := wk.cfg.Name
	var drop []int
	for i := len(mine) - 1; i >= 0; i-- {
		k := mine[i]
		s := byShard[k]
		if len(mine)-len(drop) > target || (s.WantedBy != "" && s.WantedBy != me && len(mine)-len(drop) >= s.WantLoad+2) {
			drop = append(drop, k)
		}
	}
	for _, k := range drop {
		wk.mu.Lock()
		o := wk.shards[k]
		delete(wk.shards, k) // stop polling it first
		wk.mu.Unlock()
		if o.keeper.Stop() != nil { // lost before it could be given back: released by its token all the same
			wk.add(func(st *Stats, _ *writes) { st.ShardsLost++ })
		}
		wk.giveBack(life, k, o.hold) // no longer ours to release at leave
	}
	return len(mine) - len(drop)
}

// takeShards acquires free and stale shards up to target, starting at a
// place of this worker's own so that workers do not all race for the same
// one, and keeps each it gets.
func (wk *worker) takeShards(ctx, life context.Context, takeable []ShardState, have, target int) error {
	f, me := wk.f, wk.cfg.Name
	off := ShardOf(me, "", len(takeable))
	for i := range takeable {
		if have >= target {
			break
		}
		s := takeable[(i+off)%len(takeable)]
		var w writes
		h, sent, err := f.acquireShard(ctx, &w, s.Shard, s, me)
		wk.merge(w)
		if fence.Refused(err) {
			continue
		}
		if err != nil {
			// No answer, or a stop that cancelled the call once sent: the
			// acquire may have landed with nobody keeping it. Give it back
			// by its token, so that it is free now and not held for a lease
			// by a worker that does not know it (a worker leaving now left
			// it so); one that never landed is refused and left alone.
			wk.giveBack(life, s.Shard, h)
			return err
		}
		k := s.Shard
		keeper, live := fence.Keep(life, sent, f.opts.ShardLease, wk.beat(func(w *writes) fence.Beat { return f.renewShard(w, k, h) }), wk.countCopies)
		wk.mu.Lock()
		wk.shards[k] = &owned{hold: h, keeper: keeper, live: live}
		wk.st.ShardsAcquired++
		wk.mu.Unlock()
		have++
	}
	return nil
}

// askBusiest, when there is nothing to take, asks the busiest owner (if it
// owns two or more more than this worker) for one of its shards with a
// want mark.
func (wk *worker) askBusiest(ctx context.Context, byShard []ShardState, load map[string]int, have int) error {
	me := wk.cfg.Name
	busiest, most := "", 0
	for name, c := range load {
		if name != me && (c > most || (c == most && name < busiest)) {
			busiest, most = name, c
		}
	}
	if busiest == "" || most < have+2 {
		return nil
	}
	for _, s := range byShard {
		if s.Holder == busiest && s.WantedBy == "" {
			var w writes
			err := wk.f.want(ctx, &w, s.Shard, s, me, have)
			wk.merge(w)
			if err == nil {
				wk.add(func(st *Stats, _ *writes) { st.Wants++ })
			}
			if err != nil && !fence.Refused(err) {
				return err
			}
			break
		}
	}
	return nil
}

// pollShards is the shards this worker polls now.
func (wk *worker) pollShards() []int {
	if wk.f.opts.PollAll {
		all := make([]int, wk.cfg.Shards)
		for i := range all {
			all[i] = i
		}
		return all
	}
	wk.mu.Lock()
	defer wk.mu.Unlock()
	var ks []int
	now := time.Now() // the keeper's clock (monotonic), not the skewable wall clock
	for k, o := range wk.shards {
		if o.usable(now, wk.f.opts.ShardLease) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// poll reads the due index of the polled shards, round robin, and hands
// jobs not already in this worker's hands to the slots.
func (wk *worker) poll(ctx context.Context, cands chan<- Job) error {
	f := wk.f
	next := 0
	idle := 0
	budget := -1 // a dispatcher's sends left this round (-1: no Room, no bound)
	for ctx.Err() == nil {
		shards := wk.pollShards()
		if len(shards) == 0 {
			if wait.Sleep(ctx, f.opts.Poll) != nil {
				return nil
			}
			continue
		}
		if wk.disp != nil && wk.disp.Room != nil && (next%len(shards) == 0 || budget == 0) {
			var ok bool
			if budget, ok = wk.room(ctx, len(shards)); !ok {
				continue
			}
		}
		k := shards[next%len(shards)]
		next++
		jobs, err := wk.due(ctx, k, budget)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if noAnswer(err) {
				if wait.Sleep(ctx, f.opts.Poll) != nil {
					return nil
				}
				continue
			}
			return err
		}
		if len(jobs) == 0 {
			idle++
			if idle >= len(shards) {
				idle = 0
				if wait.Sleep(ctx, wk.idle) != nil {
					return nil
				}
			}
			continue
		}
		idle = 0
		if wk.disp != nil {
			if wk.dispatch(ctx, jobs) && budget > 0 {
				budget = max(0, budget-len(jobs))
			}
			continue
		}
		for _, j := range jobs {
			select {
			case cands <- j:
			case <-ctx.Done():
				wk.done(j.JobID)
				return nil
			}
		}
	}
	return nil
}

// room asks the dispatcher's Room and returns this round's budget, its
// share for the polled shards (at least 1 when there is any room); with
// none it waits Idle (ok false: ask again), with an error Poll.
func (wk *worker) room(ctx context.Context, polled int) (budget int, ok bool) {
	n, err := wk.disp.Room(ctx)
	wk.mu.Lock()
	wk.st.RoomLooks++
	if err != nil {
		wk.st.DispatchErrors++
	} else if n <= 0 {
		wk.st.Full++
	}
	wk.mu.Unlock()
	switch {
	case err != nil:
		_ = wait.Sleep(ctx, wk.f.opts.Poll)
		return 0, false
	case n <= 0:
		_ = wait.Sleep(ctx, wk.idle)
		return 0, false
	}
	return max(1, (n*polled+wk.cfg.Shards-1)/wk.cfg.Shards), true
}

// dispatch hands jobs to the dispatcher's Dispatch and remembers them as
// sent at their tokens; a failed hand-over leaves them to the next look.
// It reports whether the hand-over went through.
func (wk *worker) dispatch(ctx context.Context, jobs []Job) bool {
	err := wk.disp.Send(ctx, jobs)
	now := time.Now()
	wk.mu.Lock()
	for _, j := range jobs {
		delete(wk.inflight, j.JobID)
		if err == nil {
			if s, ok := wk.sent[j.JobID]; ok && s.token == j.Token {
				wk.st.Resent++
			}
			wk.sent[j.JobID] = seenLease{token: j.Token, at: now}
		}
	}
	if err == nil {
		wk.st.Dispatched += len(jobs)
	} else {
		wk.st.DispatchErrors++
	}
	if len(wk.sent) > 4*wk.disp.Page*wk.cfg.Shards { // forget hand-overs past Resend
		for id, s := range wk.sent {
			if now.Sub(s.at) >= wk.disp.Resend {
				delete(wk.sent, id)
			}
		}
	}
	wk.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		_ = wait.Sleep(ctx, wk.f.opts.Poll)
	}
	return err == nil
}

func (wk *worker) done(id string) {
	wk.mu.Lock()
	delete(wk.inflight, id)
	wk.mu.Unlock()
}

// due is one Query of the due index: shard k's jobs claimable now, oldest
// first, without those already in this worker's hands (marked in flight).
// A dispatcher reads one page of at most Page entries and at most budget
// (when budget >= 0: its room this round).
func (wk *worker) due(ctx context.Context, k, budget int) ([]Job, error) {
	f := wk.f
	limit, pages := int32(2*wk.cfg.Slots), 4
	if wk.disp != nil { // one page a look (see DispatcherConfig)
		limit, pages = int32(wk.disp.Page), 1
		if budget >= 0 {
			limit = int32(max(1, min(wk.disp.Page, budget)))
		}
	}
	kc, err := expression.NewBuilder().WithKeyCondition(expression.Key(attrShard).Equal(expression.Value(k)).
		And(expression.Key(attrDue).LessThanEqual(expression.Value(f.now().UnixMilli())))).Build()
	if err != nil {
		return nil, fmt.Errorf("query shard %d of the due index: build the key condition: %w", k, err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), IndexName: aws.String(IndexDue), Limit: aws.Int32(limit),
		KeyConditionExpression: kc.KeyCondition(), ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values()}
	c, resume := wk.cursors[k]
	if resume && time.Since(c.since) < 4*wk.idle {
		in.ExclusiveStartKey = c.key
	} else {
		c = cursor{since: time.Now()}
	}
	var jobs []Job
	for page := 0; page < pages && len(jobs) == 0; page++ {
		out, err := dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.QueryOutput, error) { return f.client().Query(ctx, in) })
		if err != nil {
			return nil, fmt.Errorf("query shard %d of the due index: %w", k, err)
		}
		wk.add(func(st *Stats, _ *writes) { st.Queries++ })
		if wk.disp != nil && len(out.Items) > 0 { // the next look starts after this page
			last := out.Items[len(out.Items)-1]
			c.key = map[string]types.AttributeValue{AttrPK: last[AttrPK], AttrSK: last[AttrSK], attrShard: last[attrShard], attrDue: last[attrDue]}
			wk.cursors[k] = c
		}
		var got []Job
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &got); err != nil {
			return nil, err
		}
		now := time.Now()
		wk.mu.Lock()
		for _, j := range got {
			if wk.inflight[j.JobID] {
				continue
			}
			if s, ok := wk.sent[j.JobID]; ok && s.token == j.Token && now.Sub(s.at) < wk.disp.Resend {
				continue // handed over at this token, not yet claimed
			}
			// A job read while held is due by its holder's clock; it is
			// taken over once stale: seen unchanged for a lease on ours,
			// or MaxSkew past its end (the claim's condition then checks
			// it is still unchanged).
			if held(j) && !f.stale(wk.watch, j.JobID, j.Token, j.LeaseUntil, f.opts.Lease, now) {
				continue
			}
			delete(wk.watch, j.JobID)
			wk.inflight[j.JobID] = true
			jobs = append(jobs, j)
		}
		if len(wk.watch) > 4*int(limit)*wk.cfg.Shards { // forget old sightings
			for id, s := range wk.watch {
				if now.Sub(s.at) > 4*f.opts.Lease {
					delete(wk.watch, id)
				}
			}
		}
		wk.mu.Unlock()
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return jobs, nil
}

// run claims j and, when won, runs it with Attempt.Run, the one
// claim-run-end path the two-tier executors use too: its work under the
// lease (fence.Keep's heartbeats), then the end fenced by the claim's token.
func (wk *worker) run(ctx context.Context, j Job) {
	defer wk.done(j.JobID)
	f := wk.f
	var w writes
	got, h, sent, outcome, err := f.claim(ctx, &w, j, wk.cfg.Name)
	wk.merge(w)
	switch {
	case err != nil: // no answer: the claim may have landed, then the job comes back when its lease ends
		wk.add(func(st *Stats, _ *writes) { st.Lost++; st.ClaimErrors++ })
		return
	case outcome == claimLost:
		wk.add(func(st *Stats, _ *writes) { st.Lost++ })
		return
	case outcome == claimEnded:
		wk.add(func(st *Stats, _ *writes) { st.Fatal++ })
		return
	}
	wk.add(func(st *Stats, _ *writes) { st.Won++ })
	a := &Attempt{f: f, Job: got, hold: h, sent: sent, also: wk.merge}
	status, err := a.Run(ctx, wk.cfg.Work, wk.cfg.WorkLog)
	wk.add(func(st *Stats, _ *writes) {
		st.Ends.Count(status, err)
		if fence.Lost(err) {
			st.LastLoss = trim(err.Error())
		}
	})
}

// giveBack releases shard k, held under h, by its fence token: the
// release's condition is the token and the holder (fence Held), not the
// lease's end, so a shard whose keeper gave up on it (no renewal answered
// in time, though some may have landed and kept the lease alive) is
// released too, unless another worker took it since (the token moved on:
// refused, and left alone). A release that gets no answer is sent again,
// every poll, until answered or a shard lease has passed (the lease has
// ended by then); a retry refused by its own earlier landing is recognised
// by its nonce (releaseShard). It reports whether the shard was released.
func (wk *worker) giveBack(ctx context.Context, k int, h fence.Hold) bool {
	f := wk.f
	deadline := time.Now().Add(f.opts.ShardLease)
	for {
		var w writes
		err := f.releaseShard(ctx, &w, k, h)
		wk.merge(w)
		switch {
		case err == nil:
			wk.add(func(st *Stats, _ *writes) { st.ShardsReleased++ })
			return true
		case fence.Refused(err), errors.Is(err, fence.ErrFenced), ctx.Err() != nil, time.Now().After(deadline):
			return false
		}
		if wait.Sleep(ctx, f.opts.Poll) != nil {
			return false
		}
	}
}

// noAnswer reports whether err says that DynamoDB gave no answer: it is
// unreachable or too slow (catalog.UnreachableError), or the SDK spent its
// attempts on requests whose connection closed without a reply (a reply
// lost: the write may have landed). A worker rides these out, as it does
// an outage: its keepers give up what they cannot renew.
func noAnswer(err error) bool {
	var un *catalog.UnreachableError
	var send *smithyhttp.RequestSendError
	return errors.As(err, &un) || errors.As(err, &send)
}

// OpenWorkLog opens path for appending work-log lines (O_APPEND, so lines
// of several processes never interleave).
func OpenWorkLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}
