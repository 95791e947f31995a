// Package sim is a discrete-event simulation of one night of the batch
// queue: jobs arrive at their requested window, wait, run on a pool of c
// workers and finish, possibly after the cutoff. It is event driven: the
// clock jumps from one event (an arrival or a finish, kept in a heap) to the
// next, never minute by minute.
//
// # Time
//
// Time is in minutes from the window start. A job arrives at
// max(0, requested_window − window start); its service time is its runtime
// (the estimate, unless a Task carries another actual runtime). Jobs still run
// after the cutoff until the queue drains.
//
// # Events
//
// At each event time the simulator first releases every job finishing at or
// before now, then adds every arrival at or before now to the waiting set,
// then dispatches by the Policy until it stops.
//
// # Policy "barrier" (the reference)
//
// Waiting jobs are ordered by priority (highest first), then arrival minute,
// then job id. Dispatching stops if no worker is free or a running job holds
// the exclusive lock. If any waiting job needs the exclusive lock: if anything
// is running, stop (nothing else may start, whatever its priority); otherwise
// start the first exclusive job in that order on all c workers. Otherwise
// start the first waiting job on one worker. No backfill, no preemption.
//
// # Policy "easy" (EASY backfilling; "backfill" is an alias)
//
// As in HPC batch schedulers (EASY: the Extensible Argonne Scheduling
// sYstem): only the first exclusive job in the order above holds a
// reservation, for the whole pool at the shadow time T, the moment the
// running jobs are estimated to drain (the latest start + estimated runtime
// among them, never earlier than now). While it waits, any waiting ordinary
// job, taken in the same order, may start on a free worker if now + its
// estimated runtime <= T, so it is done before the reservation and never
// delays the exclusive job when runtimes equal their estimates. Other waiting
// jobs hold no reservation, so a backfilled job may delay them. When nothing
// is running, the exclusive job starts on all c workers. With no exclusive
// job waiting, easy dispatches like barrier.
//
// # Policy "conservative" (conservative backfilling)
//
// Every waiting job holds a reservation. At each event the scheduler builds
// the pool's free-worker profile from the running jobs' estimated finishes
// (an overdue job is assumed to finish now) and walks the waiting jobs in the
// order above, giving each the earliest start at which its workers (one, or
// all c for an exclusive job) are free for its whole estimated runtime, given
// the reservations of the jobs before it; the reservation is then written
// into the profile. A job whose reservation is now, and whose workers are
// really free now, starts. So a job may overtake another only where it fits
// in a hole that no job earlier in the order can use: when runtimes equal
// their estimates, no job is delayed by a job behind it in the order.
// Reservations are recomputed at every event, so a job that arrives with a
// higher priority takes its place in the order ahead of those waiting.
// The profile is a Profile, exported so that the lease executor plans on
// the same code when it runs a night for real.
//
// # Metrics
//
// Average and p95 wait (nearest rank: the value at index ⌈0.95n⌉−1 of the
// sorted waits); time-average queue length over the window only (the area
// under the waiting-jobs curve clipped at the cutoff, divided by the window
// length) and the maximum queue length; worker utilisation (busy
// worker-minutes inside the window over c × window minutes; an exclusive job
// holds all c); overflow jobs (finishing after the cutoff) and their
// fraction; the minute the queue drained (the last finish). Two measures of
// what locks cost: worker-minutes held by exclusive jobs beyond the one they
// use, and worker-minutes left idle while jobs waited (the barrier's gaps).
package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
)

// Policy is a dispatch policy.
type Policy string

// The dispatch policies.
const (
	Barrier      Policy = "barrier"
	Easy         Policy = "easy"
	Conservative Policy = "conservative"
	// Backfill is the old name of Easy, kept so code written for it still
	// compiles; ParsePolicy("backfill") also gives Easy.
	Backfill = Easy
)

// Policies lists the available policies.
var Policies = []Policy{Barrier, Easy, Conservative}

// ParsePolicy turns a name into a Policy: barrier, easy or conservative, with
// backfill an alias of easy.
func ParsePolicy(s string) (Policy, error) {
	if s == "backfill" {
		return Easy, nil
	}
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown policy %q: use barrier, easy or conservative (backfill means easy)", s)
}

// Task is one job as the simulator sees it.
type Task struct {
	ID        string
	Class     string
	Arrival   float64 // minutes from window start
	Estimate  float64 // estimated runtime: what the scheduler plans with
	Runtime   float64 // actual runtime: how long the job really runs
	Priority  int
	Exclusive bool
}

// Tasks turns a night into tasks whose runtime equals their estimate.
func Tasks(n queuekit.Night) []Task {
	ts := make([]Task, len(n.Jobs))
	for i, j := range n.Jobs {
		rt := float64(j.RuntimeMinutes)
		ts[i] = Task{ID: j.JobID, Class: j.WorkloadClass, Arrival: float64(j.ArrivalMinute(n.Window)),
			Estimate: rt, Runtime: rt, Priority: j.Priority, Exclusive: j.RequiresExclusiveLock}
	}
	return ts
}

// Config sets up one run.
type Config struct {
	Workers int     // c, at least 1
	Policy  Policy  // "" means Barrier
	Cutoff  float64 // window length in minutes; the cutoff is this many minutes after the start
	// NoTrace skips the per-job schedule and the time series, for Monte Carlo.
	NoTrace bool
}

// Slot is one job's place in the schedule.
type Slot struct {
	ID        string  `json:"job_id"`
	Class     string  `json:"workload_class"`
	Priority  int     `json:"priority"`
	Exclusive bool    `json:"requires_exclusive_lock"`
	Arrival   float64 `json:"arrival_minute"`
	Start     float64 `json:"start_minute"`
	Finish    float64 `json:"finish_minute"`
	Wait      float64 `json:"wait_minutes"`
	Workers   []int   `json:"worker_ids"` // the workers it held (all of them when exclusive)
	// ReservedFor and ReservedUntil are set on a job started ahead of a job
	// that holds a reservation: by easy, the waiting exclusive job and its
	// reserved start (the backfilled job is due to finish by then); by
	// conservative, the first job in reservation order that could not start
	// and its reserved start.
	ReservedFor   string  `json:"backfilled_before,omitempty"`
	ReservedUntil float64 `json:"reservation_minute,omitempty"`
}

// Step is a point of a step function: from T on, the value is N.
type Step struct {
	T float64 `json:"minute"`
	N int     `json:"value"`
}

// Metrics are one run's figures, as SPEC.md defines them, plus two
// measures of what exclusive locks cost.
type Metrics struct {
	Policy             Policy  `json:"policy"`
	Workers            int     `json:"workers"`
	Jobs               int     `json:"jobs"`
	CutoffMinute       float64 `json:"cutoff_minute"`
	AverageWait        float64 `json:"average_wait_minutes"`
	P95Wait            float64 `json:"p95_wait_minutes"`
	AverageQueueLength float64 `json:"average_queue_length"`
	MaxQueueLength     int     `json:"max_queue_length"`
	Utilization        float64 `json:"worker_utilization"`
	OverflowJobs       int     `json:"overflow_jobs"`
	OverflowFraction   float64 `json:"overflow_fraction"`
	DrainedMinute      float64 `json:"queue_drained_minute"`
	// LockHeldWorkerMinutes is the capacity exclusive jobs held without using
	// it: (c − 1) × runtime for each exclusive job, over the whole run.
	LockHeldWorkerMinutes float64 `json:"lock_held_worker_minutes"`
	// BlockedWorkerMinutes is the capacity left idle while jobs were
	// waiting: free worker-minutes during which the queue was not empty.
	BlockedWorkerMinutes float64 `json:"blocked_worker_minutes"`
}

// Result holds one run's metrics and, unless NoTrace, its trace.
type Result struct {
	Metrics
	Schedule    []Slot `json:"schedule,omitempty"`     // in start order
	QueueLength []Step `json:"queue_length,omitempty"` // waiting jobs after each event
	BusyWorkers []Step `json:"busy_workers,omitempty"` // busy workers after each event
}

// Overflowed reports whether the night's work finished after the cutoff.
func (r Result) Overflowed() bool { return r.DrainedMinute > r.CutoffMinute }

// Run simulates a night with the given workers and policy; the cutoff comes
// from the night's window.
func Run(n queuekit.Night, cfg Config) (Result, error) {
	if cfg.Cutoff == 0 {
		cfg.Cutoff = float64(n.Window.Minutes())
	}
	var e Engine
	return e.Run(Tasks(n), cfg)
}

// Engine runs simulations, reusing its memory from one run to the next. The
// zero value is ready. An Engine is not safe for concurrent use; give each
// goroutine its own.
type Engine struct {
	tasks   []Task
	order   []int // task indices by arrival
	waiting []int // task indices in dispatch order
	running finishHeap
	freeIDs []bool
	waits   []float64
	res     Result
	free    Profile // conservative: the free-worker profile
	pending []int   // conservative: waiting jobs in reservation order
	st      runState
	// Tests only: reserve exclusive jobs first in conservative, and watch
	// every reservation it makes.
	exclusiveFirst bool
	onReserve      func(task int, at float64)
}

type running struct {
	task      int
	start     float64
	finish    float64
	estFinish float64
	workers   int
	slot      int // index into Schedule, or -1
}

// finishHeap is a binary min-heap of running jobs by finish time. It is
// typed, not container/heap: that one boxes every pushed and popped element
// in an interface, an allocation per job in the hot loop of Monte Carlo.
type finishHeap []running

// push adds r and restores the heap order.
func (h *finishHeap) push(r running) {
	*h = append(*h, r)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].finish <= s[i].finish {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// pop removes and returns the earliest finish; the heap must not be empty.
func (h *finishHeap) pop() running {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].finish < s[l].finish {
			m = r
		}
		if s[i].finish <= s[m].finish {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

func (h finishHeap) peek() (running, bool) {
	if len(h) == 0 {
		return running{}, false
	}
	return h[0], true
}

// Validate checks a configuration and tasks before a run.
func validate(tasks []Task, cfg Config) error {
	if cfg.Workers < 1 {
		return fmt.Errorf("workers = %d: need at least 1 worker", cfg.Workers)
	}
	if _, err := ParsePolicy(string(cfg.Policy)); err != nil {
		return err
	}
	if !(cfg.Cutoff > 0) || math.IsInf(cfg.Cutoff, 0) {
		return fmt.Errorf("cutoff = %v minutes: the window must be a positive length", cfg.Cutoff)
	}
	for _, t := range tasks {
		if !(t.Arrival >= 0) || math.IsInf(t.Arrival, 0) {
			return fmt.Errorf("job %s: arrival %v: must be a finite minute >= 0", t.ID, t.Arrival)
		}
		if !(t.Runtime > 0) || !(t.Estimate > 0) || math.IsInf(t.Runtime, 0) || math.IsInf(t.Estimate, 0) {
			return fmt.Errorf("job %s: runtime %v (estimate %v): must be finite and > 0", t.ID, t.Runtime, t.Estimate)
		}
	}
	return nil
}

// Run simulates the tasks. The tasks slice is not modified.
func (e *Engine) Run(tasks []Task, cfg Config) (Result, error) {
	if cfg.Policy == "" {
		cfg.Policy = Barrier
	}
	if err := validate(tasks, cfg); err != nil {
		return Result{}, fmt.Errorf("simulate: %w", err)
	}
	cfg.Policy, _ = ParsePolicy(string(cfg.Policy)) // validated above; maps aliases
	e.reset(tasks, cfg)
	e.st = runState{cfg: cfg, c: cfg.Workers, trace: !cfg.NoTrace}
	st := &e.st
	for st.done < len(tasks) {
		now, ok := e.nextEvent()
		if !ok {
			// Unreachable by the rules (an idle pool always starts a job); guard anyway.
			return Result{}, fmt.Errorf("simulate: %d jobs could not be dispatched", len(tasks)-st.done)
		}
		e.advance(now)
		e.finishDue()
		e.arriveDue()
		e.dispatch()
		e.res.MaxQueueLength = max(e.res.MaxQueueLength, len(e.waiting))
		e.record()
	}
	e.summarise(len(tasks))
	out := e.res
	if st.trace {
		// The caller owns the trace; the engine must not reuse it.
		e.res.Schedule, e.res.QueueLength, e.res.BusyWorkers = nil, nil, nil
	}
	return out, nil
}

// runState is the state of the run in progress, apart from the queues.
type runState struct {
	cfg             Config
	c               int  // workers
	trace           bool // record the schedule and the time series
	now, prev       float64
	next            int // next arrival in e.order
	busy, done      int
	exclusiveActive bool
	queueArea       float64 // areas under the queue and busy curves, to the cutoff
	busyArea        float64
}

// nextEvent is the time of the next event: the earlier of the next
// arrival and the next finish; false when there is neither.
func (e *Engine) nextEvent() (float64, bool) {
	now := math.Inf(1)
	if e.st.next < len(e.order) {
		now = e.tasks[e.order[e.st.next]].Arrival
	}
	if r, ok := e.running.peek(); ok && r.finish < now {
		now = r.finish
	}
	return now, !math.IsInf(now, 1)
}

// advance moves the clock to now, adding the time since the last event to
// the areas under the queue and busy curves (clipped at the cutoff) and to
// the blocked worker-minutes.
func (e *Engine) advance(now float64) {
	st := &e.st
	st.now = now
	if dt := math.Min(now, st.cfg.Cutoff) - math.Min(st.prev, st.cfg.Cutoff); dt > 0 {
		st.queueArea += float64(len(e.waiting)) * dt
		st.busyArea += float64(st.busy) * dt
	}
	if len(e.waiting) > 0 {
		e.res.BlockedWorkerMinutes += float64(st.c-st.busy) * (now - st.prev)
	}
	st.prev = now
}

// finishDue ends every running job whose finish has come, freeing its
// workers.
func (e *Engine) finishDue() {
	st, res := &e.st, &e.res
	for len(e.running) > 0 && e.running[0].finish <= st.now {
		r := e.running.pop()
		st.busy -= r.workers
		st.done++
		if e.tasks[r.task].Exclusive {
			st.exclusiveActive = false
		}
		if r.slot >= 0 {
			for _, id := range res.Schedule[r.slot].Workers {
				e.freeIDs[id] = true
			}
		}
		if r.finish > st.cfg.Cutoff {
			res.OverflowJobs++
		}
		res.DrainedMinute = math.Max(res.DrainedMinute, r.finish)
	}
}

// arriveDue queues every job whose arrival has come.
func (e *Engine) arriveDue() {
	st := &e.st
	for st.next < len(e.order) && e.tasks[e.order[st.next]].Arrival <= st.now {
		e.enqueue(e.order[st.next])
		st.next++
	}
}

// record appends the queue length and busy workers after an event (one
// point per instant: a later event at the same time overwrites it).
func (e *Engine) record() {
	st, res := &e.st, &e.res
	if !st.trace {
		return
	}
	q := len(e.waiting)
	if n := len(res.QueueLength); n > 0 && res.QueueLength[n-1].T == st.now {
		res.QueueLength[n-1].N = q
		res.BusyWorkers[n-1].N = st.busy
		return
	}
	res.QueueLength = append(res.QueueLength, Step{st.now, q})
	res.BusyWorkers = append(res.BusyWorkers, Step{st.now, st.busy})
}

// start starts task ti now on workers workers; reservedFor and
// reservedUntil name the reservation it was backfilled around, if any.
func (e *Engine) start(ti, workers int, reservedFor string, reservedUntil float64) {
	st, res := &e.st, &e.res
	t := &e.tasks[ti]
	now := st.now
	r := running{task: ti, start: now, finish: now + t.Runtime, estFinish: now + t.Estimate, workers: workers, slot: -1}
	wait := now - t.Arrival
	e.waits = append(e.waits, wait)
	if st.trace {
		ids := make([]int, 0, workers)
		for id := range e.freeIDs {
			if len(ids) == workers {
				break
			}
			if e.freeIDs[id] {
				e.freeIDs[id] = false
				ids = append(ids, id)
			}
		}
		r.slot = len(res.Schedule)
		res.Schedule = append(res.Schedule, Slot{ID: t.ID, Class: t.Class, Priority: t.Priority,
			Exclusive: t.Exclusive, Arrival: t.Arrival, Start: now, Finish: r.finish, Wait: wait,
			Workers: ids, ReservedFor: reservedFor, ReservedUntil: reservedUntil})
	}
	st.busy += workers
	if t.Exclusive {
		st.exclusiveActive = true
		res.LockHeldWorkerMinutes += float64(workers-1) * t.Runtime
	}
	e.running.push(r)
}

// removeWaiting takes the k-th waiting job out of the queue.
func (e *Engine) removeWaiting(k int) int {
	ti := e.waiting[k]
	e.waiting = append(e.waiting[:k], e.waiting[k+1:]...)
	return ti
}

// dispatch starts what the policy allows now.
func (e *Engine) dispatch() {
	st := &e.st
	if st.cfg.Policy == Conservative {
		e.conservative(st.now, st.c, st.busy, st.exclusiveActive)
		return
	}
	for st.busy < st.c && !st.exclusiveActive && len(e.waiting) > 0 {
		ex := -1
		for k, ti := range e.waiting {
			if e.tasks[ti].Exclusive {
				ex = k
				break
			}
		}
		switch {
		case ex < 0:
			e.start(e.removeWaiting(0), 1, "", 0)
		case len(e.running) == 0:
			e.start(e.removeWaiting(ex), st.c, "", 0)
		case st.cfg.Policy == Barrier:
			return
		default:
			if !e.backfillEasy(ex) {
				return
			}
		}
	}
}

// backfillEasy is EASY's step while the exclusive job waiting[ex] waits
// for the pool: it starts the first ordinary job whose estimate ends by
// that job's reservation (the latest estimated finish of the running jobs),
// and reports whether one started.
func (e *Engine) backfillEasy(ex int) bool {
	now := e.st.now
	shadow := now
	for _, r := range e.running {
		shadow = math.Max(shadow, r.estFinish)
	}
	fit := -1
	for k, ti := range e.waiting {
		if !e.tasks[ti].Exclusive && now+e.tasks[ti].Estimate <= shadow {
			fit = k
			break
		}
	}
	if fit < 0 {
		return false
	}
	holder := e.tasks[e.waiting[ex]].ID
	e.start(e.removeWaiting(fit), 1, holder, shadow)
	return true
}

// summarise computes the run's metrics from the waits and the areas.
func (e *Engine) summarise(n int) {
	st, res := &e.st, &e.res
	res.Jobs = n
	if n > 0 {
		slices.Sort(e.waits)
		sum := 0.0
		for _, w := range e.waits {
			sum += w
		}
		res.AverageWait = sum / float64(n)
		res.P95Wait, _ = queuekit.Quantile(e.waits, 0.95) // n > 0: always ok; sorted: no copy
		res.OverflowFraction = float64(res.OverflowJobs) / float64(n)
	}
	res.AverageQueueLength = st.queueArea / st.cfg.Cutoff
	res.Utilization = st.busyArea / (float64(st.c) * st.cfg.Cutoff)
}

func (e *Engine) reset(tasks []Task, cfg Config) {
	e.tasks = append(e.tasks[:0], tasks...)
	e.order = e.order[:0]
	for i := range tasks {
		e.order = append(e.order, i)
	}
	slices.SortStableFunc(e.order, func(a, b int) int { return cmp.Compare(e.tasks[a].Arrival, e.tasks[b].Arrival) })
	e.waiting = e.waiting[:0]
	e.running = e.running[:0]
	e.waits = e.waits[:0]
	if cap(e.freeIDs) < cfg.Workers {
		e.freeIDs = make([]bool, cfg.Workers)
	}
	e.freeIDs = e.freeIDs[:cfg.Workers]
	for i := range e.freeIDs {
		e.freeIDs[i] = true
	}
	e.res = Result{Metrics: Metrics{Policy: cfg.Policy, Workers: cfg.Workers, CutoffMinute: cfg.Cutoff}}
	if !cfg.NoTrace {
		e.res.QueueLength = []Step{{0, 0}}
		e.res.BusyWorkers = []Step{{0, 0}}
	}
}

// enqueue inserts a task into the waiting set in dispatch order: priority
// (highest first), then arrival, then job id.
func (e *Engine) enqueue(ti int) {
	t := &e.tasks[ti]
	k := sort.Search(len(e.waiting), func(k int) bool {
		u := &e.tasks[e.waiting[k]]
		if u.Priority != t.Priority {
			return u.Priority < t.Priority
		}
		if u.Arrival != t.Arrival {
			return u.Arrival > t.Arrival
		}
		return strings.Compare(u.ID, t.ID) > 0
	})
	e.waiting = append(e.waiting, 0)
	copy(e.waiting[k+1:], e.waiting[k:])
	e.waiting[k] = ti
}

// Profile is a pool's free-worker profile, the plan conservative
// backfilling reserves on: a step function giving, from a start instant on,
// how many of the pool's c workers are free. Reset starts it with all c free
// from now on; each running job and each reservation then takes its workers
// out over [from, to). Every reservation ends, so from the last step on
// every worker is free again and EarliestFit always finds a start.
//
// The simulator and the lease executor both plan with it, so a night run
// for real reserves exactly as the simulator does. The zero value is empty
// (call Reset first); a Profile reuses its memory from one Reset to the
// next, and is not safe for concurrent use.
type Profile struct {
	steps []freeStep
}

// freeStep is a step of the free-worker profile: from T until the next
// step's T (for ever, for the last), Free workers are free.
type freeStep struct {
	T    float64
	Free int
}

// Reset empties the profile and starts it at now with c workers free.
func (p *Profile) Reset(now float64, c int) {
	p.steps = append(p.steps[:0], freeStep{T: now, Free: c})
}

// EarliestFit is the earliest time, at or after the profile's start, from
// which need workers are free for dur minutes. The profile's last step frees
// every reserved worker, so a fit always exists when need <= c; when need is
// more than the pool's c workers it never fits, and EarliestFit returns
// +Inf (math.IsInf(at, 1) reads "never").
func (p *Profile) EarliestFit(dur float64, need int) float64 {
	if need > p.steps[len(p.steps)-1].Free {
		return math.Inf(1)
	}
	for i := range p.steps {
		at := p.steps[i].T
		ok := true
		for j := i; j < len(p.steps) && p.steps[j].T < at+dur; j++ {
			if p.steps[j].Free < need {
				ok = false
				break
			}
		}
		if ok {
			return at
		}
	}
	return p.steps[len(p.steps)-1].T // unreachable for need <= c: the last step has every worker free
}

// Reserve takes need workers out of the profile over [from, to); from must
// be at or after the profile's start.
func (p *Profile) Reserve(from, to float64, need int) {
	p.split(from)
	p.split(to)
	for i := range p.steps {
		if p.steps[i].T >= from && p.steps[i].T < to {
			p.steps[i].Free -= need
		}
	}
}

// split makes sure a step begins at t (t at or after the profile's start).
func (p *Profile) split(t float64) {
	i := len(p.steps)
	for i > 0 && p.steps[i-1].T > t {
		i--
	}
	if i > 0 && p.steps[i-1].T == t {
		return
	}
	// i > 0 here: the first step is at the start <= t.
	p.steps = slices.Insert(p.steps, i, freeStep{T: t, Free: p.steps[i-1].Free})
}

// conservative dispatches by conservative backfilling (see the package doc):
// every waiting job, in dispatch order, gets the earliest reservation that
// fits the profile left by the running jobs and the reservations before it;
// those whose reservation is now and whose workers are free now start.
func (e *Engine) conservative(now float64, c, busy int, exclusiveActive bool) {
	if len(e.waiting) == 0 {
		return
	}
	// The profile starts with every worker free from now on, then each running
	// job is taken out until its estimated finish (an overdue job, whose
	// estimate has passed, until now: it is assumed about to finish).
	e.free.Reset(now, c)
	for _, r := range e.running {
		if r.estFinish > now {
			e.free.Reserve(now, r.estFinish, r.workers)
		}
	}
	actual := c - busy
	if exclusiveActive {
		actual = 0
	}
	// The reservation order: the dispatch order, or (exclusiveFirst, tests
	// only) every exclusive job before every ordinary one, as barrier and
	// easy treat them.
	e.pending = e.pending[:0]
	for pass := range 2 {
		for _, ti := range e.waiting {
			if !e.exclusiveFirst && pass == 0 || e.exclusiveFirst && e.tasks[ti].Exclusive == (pass == 0) {
				e.pending = append(e.pending, ti)
			}
		}
	}
	first := "" // the first job, in reservation order, that did not start now
	var firstAt float64
	for _, ti := range e.pending {
		t := &e.tasks[ti]
		need := 1
		if t.Exclusive {
			need = c
		}
		at := e.free.EarliestFit(t.Estimate, need)
		e.free.Reserve(at, at+t.Estimate, need)
		if e.onReserve != nil {
			e.onReserve(ti, at)
		}
		if at == now && need <= actual {
			actual -= need
			e.waiting = slices.Delete(e.waiting, slices.Index(e.waiting, ti), slices.Index(e.waiting, ti)+1)
			e.start(ti, need, first, firstAt)
			continue
		}
		if first == "" {
			first, firstAt = t.ID, at
		}
	}
}
