package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Entry is one attempt in the real schedule, on the night's clock (minutes
// from the window start): the slot it held, as the simulator's schedule has
// it (sim.Slot: Start is when the attempt took its pool slots, the claim;
// Finish when it gave them back; Workers the slot ids; Class, Priority,
// Arrival and Wait from the night, Wait counted from arrival to this
// attempt's start), and which attempt, process and outcome it was.
type Entry struct {
	sim.Slot
	Attempt int
	Worker  string          // the worker process that held it
	Outcome queuekit.Status // SUCCESS, RETRIABLE_FAILURE, FATAL_FAILURE, LEASE_EXPIRED; "" while running
	// The attempt in the table's own orders, which no clock writes (0
	// where not recorded): ClaimToken is the job's fence token its claim
	// set and EndToken the one its end set; PoolVersion is the pool
	// version its claim transaction made and PoolBusy the slots busy once
	// that transaction committed. Start and Finish come from the clocks
	// of the hosts that claimed and ended it; these do not.
	ClaimToken, EndToken, PoolVersion int64
	PoolBusy                          int
}

// entryJSON is an Entry as run --json and status --json write it (a
// contract: these keys stay), minutes rounded to 0.001.
type entryJSON struct {
	JobID     string  `json:"job_id"`
	Attempt   int     `json:"attempt"`
	Start     float64 `json:"start_minute"`
	Finish    float64 `json:"finish_minute"`
	Workers   int     `json:"workers"`
	Exclusive bool    `json:"exclusive"`
	WorkerIDs []int   `json:"worker_ids"`
}

// MarshalJSON writes the entry with its job_id, attempt, start_minute,
// finish_minute, workers (how many slots), exclusive and worker_ids.
func (e Entry) MarshalJSON() ([]byte, error) {
	ids := e.Workers
	if ids == nil {
		ids = []int{}
	}
	return json.Marshal(entryJSON{JobID: e.ID, Attempt: e.Attempt, Start: round3(e.Start), Finish: round3(e.Finish),
		Workers: len(e.Workers), Exclusive: e.Exclusive, WorkerIDs: ids})
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Report is what a run did, read back from DynamoDB, beside the forecast.
type Report struct {
	BatchDate string
	Workers   int
	Policy    sim.Policy
	MinuteMS  float64
	Realised  sim.Result // metrics and schedule computed from the attempts
	Forecast  sim.Result // the simulator, same night, pool and policy
	Won, Lost int        // claims, over every worker process (a killed process's last second of counts is lost with it)
	Retries   int        // sum of current_retry over the jobs: their own failures
	// LostAttempts is the sum of lost_attempts over the jobs: attempts
	// whose lease expired (a worker killed, paused, cut off), not failures.
	LostAttempts int
	DeadLetters  []DeadLetter
	Schedule     []Entry                 // every attempt, in start order
	Statuses     map[queuekit.Status]int // jobs per execution_status
	Elapsed      time.Duration           // wall time from minute 0 to the last finish
	// The pool item as the run left it: busy slots, jobs ended of all, the
	// retries allowed, and the jobs still recorded as running.
	PoolBusy, PoolEnded, PoolJobs, MaxRetry, MaxLost, PoolRunning int
	PoolExclusive                                                 string
	// Fenced counts late ends refused by their fencing condition, over
	// every worker process (as flushed to the table).
	Fenced int
	// Jobs is every job item as the run left it (its state, holder,
	// attempt and fence token), by job id.
	Jobs []JobState
	// MaxSkew is the bound on the clock skew between any two hosts of
	// the run that Verify assumes where it compares times that different
	// hosts wrote (the executor's, WithMaxSkew; DefaultMaxSkew unless set).
	MaxSkew time.Duration
	// TableWU and IndexWU are the write units DynamoDB reported consumed by
	// the workers' writes (see WorkerStats), over every worker process as
	// flushed to the table; the per-job figures divide them by the night's
	// jobs (0 when it has none).
	TableWU, IndexWU             float64
	TableWUPerJob, IndexWUPerJob float64
}

// nightState is every item of a night's execution state.
type nightState struct {
	pool     poolItem
	havePool bool
	jobs     []jobItem
	attempts []attemptItem
	dead     []DeadLetter
	workers  []workerItem
}

func (e *Executor) state(ctx context.Context, date string) (nightState, error) {
	items, err := e.nightItems(ctx, date, "")
	if err != nil {
		return nightState{}, err
	}
	var s nightState
	for _, it := range items {
		sk, _ := it[attrSK].(*types.AttributeValueMemberS)
		if sk == nil {
			continue
		}
		var err error
		switch k := sk.Value; {
		case k == skPool:
			s.havePool = true
			err = attributevalue.UnmarshalMap(it, &s.pool)
		case strings.HasPrefix(k, prefixJob):
			var j jobItem
			err = attributevalue.UnmarshalMap(it, &j)
			s.jobs = append(s.jobs, j)
		case strings.HasPrefix(k, prefixAttempt):
			var a attemptItem
			err = attributevalue.UnmarshalMap(it, &a)
			s.attempts = append(s.attempts, a)
		case strings.HasPrefix(k, prefixDLQ):
			var d DeadLetter
			err = attributevalue.UnmarshalMap(it, &d)
			s.dead = append(s.dead, d)
		case strings.HasPrefix(k, prefixWorker):
			var w workerItem
			err = attributevalue.UnmarshalMap(it, &w)
			s.workers = append(s.workers, w)
		}
		if err != nil {
			return nightState{}, fmt.Errorf("decode item %s of night %s: %w", sk.Value, date, err)
		}
	}
	return s, nil
}

// schedule turns attempt items into entries on the night's clock; an
// attempt still running ends at now.
func (s nightState) schedule(now time.Time) []Entry {
	out := make([]Entry, 0, len(s.attempts))
	minute := func(ms int64) float64 { return float64(ms-s.pool.T0) / s.pool.MinuteMS }
	for _, a := range s.attempts {
		fin := a.FinishedMS
		if fin == 0 {
			fin = now.UnixMilli()
		}
		out = append(out, Entry{Slot: sim.Slot{ID: a.JobID, Start: minute(a.ClaimedMS), Finish: minute(fin),
			Exclusive: a.Exclusive, Workers: a.Slots}, Attempt: a.Attempt, Worker: a.Worker, Outcome: a.Outcome,
			ClaimToken: a.ClaimToken, EndToken: a.EndToken, PoolVersion: a.PoolVersion, PoolBusy: a.PoolBusy})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// placed fills each entry's job fields from night n: class, priority,
// arrival, and the wait from arrival to that attempt's start.
func placed(n queuekit.Night, entries []Entry) {
	byID := make(map[string]queuekit.Job, len(n.Jobs))
	for _, j := range n.Jobs {
		byID[j.JobID] = j
	}
	for i := range entries {
		if j, ok := byID[entries[i].ID]; ok {
			e := &entries[i]
			e.Class, e.Priority, e.Arrival = j.WorkloadClass, j.Priority, float64(j.ArrivalMinute(n.Window))
			e.Wait = e.Start - e.Arrival
		}
	}
}

// Report reads a night's execution state back with one Query and computes
// the realised metrics beside the simulator's forecast for pool size c.
func (e *Executor) Report(ctx context.Context, n queuekit.Night, c int) (Report, error) {
	s, err := e.state(ctx, n.BatchDate)
	if err != nil {
		return Report{}, err
	}
	if !s.havePool {
		return Report{}, &NoRunError{BatchDate: n.BatchDate}
	}
	pol := sim.Policy(s.pool.Policy)
	r := Report{BatchDate: n.BatchDate, Workers: c, Policy: pol, MinuteMS: s.pool.MinuteMS,
		DeadLetters: s.dead, Statuses: map[queuekit.Status]int{}}
	for _, j := range s.jobs {
		r.Statuses[j.Status]++
		r.Retries += j.CurrentRetry
		r.LostAttempts += j.LostAttempts
		r.Jobs = append(r.Jobs, JobState{JobID: j.JobID, Status: j.Status, Worker: j.Worker, Attempt: j.Attempt, Token: j.Token, Retries: j.CurrentRetry, LostAttempts: j.LostAttempts})
	}
	sort.Slice(r.Jobs, func(a, b int) bool { return r.Jobs[a].JobID < r.Jobs[b].JobID })
	r.MaxSkew = e.maxSkew
	for _, w := range s.workers {
		if w.RunID != s.pool.RunID {
			continue
		}
		r.Won += w.Won
		r.Lost += w.Lost
		r.Fenced += w.Fenced
		r.TableWU += w.TableWU
		r.IndexWU += w.IndexWU
	}
	if len(s.jobs) > 0 {
		r.TableWUPerJob, r.IndexWUPerJob = r.TableWU/float64(len(s.jobs)), r.IndexWU/float64(len(s.jobs))
	}
	r.PoolBusy, r.PoolEnded, r.PoolJobs, r.MaxRetry, r.MaxLost = s.pool.Busy, s.pool.Ended, s.pool.Jobs, s.pool.MaxRetry, s.pool.maxLost()
	r.PoolRunning, r.PoolExclusive = len(s.pool.Running), s.pool.Exclusive
	r.Schedule = s.schedule(e.now())
	placed(n, r.Schedule)
	r.Realised = Realise(n, r.Schedule, c, pol)
	r.Forecast, err = sim.Run(n, sim.Config{Workers: c, Policy: pol})
	if err != nil {
		return Report{}, err
	}
	var last int64
	for _, a := range s.attempts {
		last = max(last, a.FinishedMS)
	}
	if last > 0 {
		r.Elapsed = time.Duration(last-s.pool.T0) * time.Millisecond
	}
	sort.Slice(r.DeadLetters, func(i, j int) bool { return r.DeadLetters[i].JobID < r.DeadLetters[j].JobID })
	return r, nil
}

// Realise computes a night's metrics, as sim defines them, from a real
// schedule of attempts on a pool of c: a job waits from its arrival to its
// first start, and again between a failed attempt and the next; its wait is
// first start − arrival; it finishes when its last attempt does. The result
// has the same Metrics, Schedule (one Slot per attempt), QueueLength and
// BusyWorkers as a sim.Result, so charts draw it like a forecast.
func Realise(n queuekit.Night, attempts []Entry, c int, policy sim.Policy) sim.Result {
	cutoff := float64(n.Window.Minutes())
	res := sim.Result{Metrics: sim.Metrics{Policy: policy, Workers: c, Jobs: len(n.Jobs), CutoffMinute: cutoff}}
	attempts = append([]Entry(nil), attempts...)
	placed(n, attempts)
	last := map[string]int{}      // job -> its last attempt number
	first := map[string]float64{} // job -> first start
	final := map[string]float64{} // job -> last finish
	for _, a := range attempts {
		last[a.ID] = max(last[a.ID], a.Attempt)
		if s, ok := first[a.ID]; !ok || a.Start < s {
			first[a.ID] = a.Start
		}
		final[a.ID] = math.Max(final[a.ID], a.Finish)
	}
	type event struct {
		t            float64
		kind         int // 0 finish, 1 arrival, 2 start (sim's order at one time)
		dBusy, dWait int
	}
	var ev []event
	for _, j := range n.Jobs {
		ev = append(ev, event{t: float64(j.ArrivalMinute(n.Window)), kind: 1, dWait: 1})
	}
	for _, a := range attempts {
		res.Schedule = append(res.Schedule, a.Slot)
		ev = append(ev, event{t: a.Start, kind: 2, dBusy: len(a.Workers), dWait: -1})
		back := 0
		if a.Attempt < last[a.ID] {
			back = 1 // a failed attempt: the job waits again
		}
		ev = append(ev, event{t: a.Finish, kind: 0, dBusy: -len(a.Workers), dWait: back})
		if a.Exclusive {
			res.LockHeldWorkerMinutes += float64(len(a.Workers)-1) * (a.Finish - a.Start)
		}
	}
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].t != ev[j].t {
			return ev[i].t < ev[j].t
		}
		return ev[i].kind < ev[j].kind
	})
	var busy, waiting int
	var prev, queueArea, busyArea float64
	res.QueueLength = []sim.Step{{T: 0, N: 0}}
	res.BusyWorkers = []sim.Step{{T: 0, N: 0}}
	for i := 0; i < len(ev); {
		now := ev[i].t
		if dt := math.Min(now, cutoff) - math.Min(prev, cutoff); dt > 0 {
			queueArea += float64(waiting) * dt
			busyArea += float64(busy) * dt
		}
		if waiting > 0 {
			res.BlockedWorkerMinutes += float64(max(c-busy, 0)) * (now - prev)
		}
		prev = now
		for ; i < len(ev) && ev[i].t == now; i++ {
			busy += ev[i].dBusy
			waiting += ev[i].dWait
		}
		res.MaxQueueLength = max(res.MaxQueueLength, waiting)
		if k := len(res.QueueLength) - 1; res.QueueLength[k].T == now {
			res.QueueLength[k].N, res.BusyWorkers[k].N = waiting, busy
		} else {
			res.QueueLength = append(res.QueueLength, sim.Step{T: now, N: waiting})
			res.BusyWorkers = append(res.BusyWorkers, sim.Step{T: now, N: busy})
		}
	}
	var waits []float64
	for _, j := range n.Jobs {
		s, ok := first[j.JobID]
		if !ok {
			continue
		}
		waits = append(waits, s-float64(j.ArrivalMinute(n.Window)))
		if final[j.JobID] > cutoff {
			res.OverflowJobs++
		}
		res.DrainedMinute = math.Max(res.DrainedMinute, final[j.JobID])
	}
	if len(waits) > 0 {
		sum := 0.0
		for _, w := range waits {
			sum += w
		}
		res.AverageWait = sum / float64(len(waits))
		res.P95Wait, _ = queuekit.Quantile(waits, 0.95) // some waits: always ok
		res.OverflowFraction = float64(res.OverflowJobs) / float64(len(n.Jobs))
	}
	res.AverageQueueLength = queueArea / cutoff
	res.Utilization = busyArea / (float64(c) * cutoff)
	return res
}

// Status is a night's execution state at a glance.
type Status struct {
	BatchDate    string                  `json:"batch_date"`
	State        string                  `json:"state"` // WAITING, RUNNING, DONE, or "" when never run
	Jobs         int                     `json:"jobs"`
	Ended        int                     `json:"ended"`
	Statuses     map[queuekit.Status]int `json:"statuses"`
	Retries      int                     `json:"retries"`       // sum of current_retry: the jobs' own failures
	LostAttempts int                     `json:"lost_attempts"` // sum of lost_attempts: leases that expired
	ClaimsWon    int                     `json:"claims_won"`
	ClaimsLost   int                     `json:"claims_lost"`
	DeadLetters  []DeadLetter            `json:"dead_letters"`
}

// Status reads a night's execution state with one Query.
func (e *Executor) Status(ctx context.Context, date string) (Status, error) {
	s, err := e.state(ctx, date)
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) { // never run against this catalog
		err = nil
	}
	if err != nil {
		return Status{}, err
	}
	st := Status{BatchDate: date, Statuses: map[queuekit.Status]int{}, DeadLetters: s.dead}
	if st.DeadLetters == nil {
		st.DeadLetters = []DeadLetter{}
	}
	for _, k := range queuekit.Status("").Values() {
		st.Statuses[k] = 0
	}
	if s.havePool {
		st.State, st.Jobs, st.Ended = s.pool.State, s.pool.Jobs, s.pool.Ended
	}
	for _, j := range s.jobs {
		st.Statuses[j.Status]++
		st.Retries += j.CurrentRetry
		st.LostAttempts += j.LostAttempts
	}
	for _, w := range s.workers {
		if w.RunID != s.pool.RunID {
			continue
		}
		st.ClaimsWon += w.Won
		st.ClaimsLost += w.Lost
	}
	return st, nil
}

// JobState is one job's execution item, as a notebook shows it.
type JobState struct {
	JobID   string
	Status  queuekit.Status // execution_status
	Worker  string          // the holder ("" when nobody holds the lease)
	Attempt int
	Token   int64 // the fencing token: how many times the lease changed hands
	Retries int   // current_retry: the job's own failures
	// LostAttempts is lost_attempts: attempts whose lease expired.
	LostAttempts int
	// LeaseUntilMS is lease_until, the holder's lease end on its own clock
	// (0 when nobody holds the lease); a new value means a renewal landed.
	LeaseUntilMS int64
}

// Job reads one job's execution item with a strongly consistent read.
func (e *Executor) Job(ctx context.Context, date, id string) (JobState, error) {
	out, err := dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return e.db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.db.Name()),
			Key: key(date, jobSK(id)), ConsistentRead: aws.Bool(true)})
	})
	if err != nil {
		return JobState{}, fmt.Errorf("read job %s of night %s: %w", id, date, err)
	}
	if out.Item == nil {
		return JobState{}, fmt.Errorf("night %s has no job %s in %s", date, id, e.db.Name())
	}
	var j jobItem
	if err := attributevalue.UnmarshalMap(out.Item, &j); err != nil {
		return JobState{}, fmt.Errorf("decode job %s: %w", id, err)
	}
	return JobState{JobID: j.JobID, Status: j.Status, Worker: j.Worker, Attempt: j.Attempt, Token: j.Token, Retries: j.CurrentRetry, LostAttempts: j.LostAttempts, LeaseUntilMS: j.LeaseUntil}, nil
}

// Difference is one metric, forecast beside realised.
type Difference struct {
	Metric             string
	Forecast, Realised float64
}

// Compare lists the metrics of simulate --json that a run realises, the
// simulator's forecast beside what happened.
func Compare(forecast, realised sim.Metrics) []Difference {
	return []Difference{
		{"average wait (min)", forecast.AverageWait, realised.AverageWait},
		{"p95 wait (min)", forecast.P95Wait, realised.P95Wait},
		{"average queue length", forecast.AverageQueueLength, realised.AverageQueueLength},
		{"max queue length", float64(forecast.MaxQueueLength), float64(realised.MaxQueueLength)},
		{"worker utilization", forecast.Utilization, realised.Utilization},
		{"overflow jobs", float64(forecast.OverflowJobs), float64(realised.OverflowJobs)},
		{"queue drained (minute)", forecast.DrainedMinute, realised.DrainedMinute},
	}
}

// Lag is how late each job's first real start came after its simulated
// start, in job-minutes: the mean and the largest over the night's jobs.
type Lag struct{ Mean, Max float64 }

// StartLag compares a run's first starts with the forecast's.
func StartLag(rep Report) Lag {
	first := map[string]float64{}
	for _, e := range rep.Schedule {
		if s, ok := first[e.ID]; !ok || e.Start < s {
			first[e.ID] = e.Start
		}
	}
	var l Lag
	n := 0
	for _, s := range rep.Forecast.Schedule {
		r, ok := first[s.ID]
		if !ok {
			continue
		}
		d := r - s.Start
		l.Mean += d
		l.Max = max(l.Max, d)
		n++
	}
	if n > 0 {
		l.Mean /= float64(n)
	}
	return l
}

// Attempts lists one job's attempts from a report, in order.
func (r Report) Attempts(jobID string) []Entry {
	var out []Entry
	for _, e := range r.Schedule {
		if e.ID == jobID {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Attempt < out[b].Attempt })
	return out
}
