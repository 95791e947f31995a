// Package poolrules checks a recorded schedule of the night executor (the
// attempts of a lease.Report) against the pool's rules and each policy's
// order rules (barrier, EASY backfilling, conservative backfilling), for a
// night without retries whose times come from one clock: notebook 05 and
// the tests judge a run with it. It is a checker of package lease's
// output, kept out of lease: the run's own verdict, on any night and on
// several hosts' clocks, is lease.Report.Verify, whose occupancy sweep
// (lease.CheckOccupancy) Check runs too.
package poolrules

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Check checks a recorded schedule of a night without retries
// against the pool's rules and returns every violation found (nil when the
// rules held):
//
//   - never more than c slots busy at once (a slot is busy from the claim to
//     the release; at one instant releases count before claims);
//   - an exclusive job alone: no other attempt overlaps it;
//   - no attempt of a job overlaps another attempt of the same job;
//   - order: an exclusive job starts only on an empty pool and is the first
//     waiting exclusive job (priority, arrival, job id); an ordinary job
//     starts only when no ordinary job before it in that order was waiting,
//     except that under backfill it is the first one that fits;
//   - barrier: while an exclusive job waits (arrived, not started) nothing
//     else starts;
//   - backfill: an ordinary job started while an exclusive job waits ends,
//     by its estimate, no later than the reservation T (the running jobs'
//     latest estimated finish, never before the start);
//   - conservative: a job (of either kind) starts at t only if t is its
//     earliest reservation behind every job before it in the order that
//     was waiting at t, which is to say it delays none of their earliest
//     starts (the barrier and easy order rules do not apply; see
//     conservativeAt for the derivation).
//
// The start of an attempt is the instant its claim was decided, and the
// finish is taken before its release is written, so causally ordered events
// keep their order in the record.
func Check(n queuekit.Night, entries []lease.Entry, c int, policy sim.Policy) error {
	s := newSchedule(n, entries, c)
	// Capacity, exclusivity and one attempt of a job at a time: the sweep
	// Verify runs on every report.
	if err := lease.CheckOccupancy(entries, c, 0); err != nil {
		s.errs = append(s.errs, err)
	}
	// Rules at each start, against the waiting set and the running set then.
	for _, e := range entries {
		if e.Attempt == 1 {
			s.checkStart(e, policy)
		}
	}
	return errors.Join(s.errs...)
}

// schedule is a recorded schedule with its night, indexed for the checks,
// and the violations found so far.
type schedule struct {
	night   queuekit.Night
	entries []lease.Entry
	c       int
	jobs    map[string]queuekit.Job // by id
	first   map[string]float64      // each job's first start
	errs    []error
}

func newSchedule(n queuekit.Night, entries []lease.Entry, c int) *schedule {
	s := &schedule{night: n, entries: entries, c: c, jobs: map[string]queuekit.Job{}, first: map[string]float64{}}
	for _, j := range n.Jobs {
		s.jobs[j.JobID] = j
	}
	for _, e := range entries {
		if f, ok := s.first[e.ID]; !ok || e.Start < f {
			s.first[e.ID] = e.Start
		}
	}
	return s
}

// bad records a violation; the first 20 are kept.
func (s *schedule) bad(format string, a ...any) {
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Errorf(format, a...))
	}
}

func (s *schedule) arrival(id string) float64 {
	return float64(s.jobs[id].ArrivalMinute(s.night.Window))
}

// before is the dispatch order: priority, then arrival, then job id.
func (s *schedule) before(a, b queuekit.Job) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if aa, ba := s.arrival(a.JobID), s.arrival(b.JobID); aa != ba {
		return aa < ba
	}
	return a.JobID < b.JobID
}

// waitingAt returns the jobs arrived and not started at t, in dispatch
// order.
func (s *schedule) waitingAt(t float64) []queuekit.Job {
	var w []queuekit.Job
	for _, j := range s.night.Jobs {
		f, started := s.first[j.JobID]
		if s.arrival(j.JobID) <= t+lease.Eps && (!started || f > t+lease.Eps) {
			w = append(w, j)
		}
	}
	sort.Slice(w, func(a, b int) bool { return s.before(w[a], w[b]) })
	return w
}

// othersWaiting splits waiting, less job id, into the first exclusive job
// in order (nil if none) and the ordinary jobs, in order.
func othersWaiting(waiting []queuekit.Job, id string) (ex *queuekit.Job, ordinary []queuekit.Job) {
	for _, w := range waiting {
		if w.JobID == id {
			continue
		}
		if w.RequiresExclusiveLock {
			if ex == nil {
				w := w
				ex = &w
			}
		} else {
			ordinary = append(ordinary, w)
		}
	}
	return ex, ordinary
}

// runningAt returns the slots busy at t (attempts started before t and
// finishing after it) and the reservation T: their latest estimated
// finish, never before t.
func (s *schedule) runningAt(t float64) (running int, shadow float64) {
	shadow = t
	for _, r := range s.entries {
		if r.Start < t-lease.Eps && r.Finish > t+lease.Eps {
			running += len(r.Workers)
			shadow = math.Max(shadow, r.Start+float64(s.jobs[r.ID].RuntimeMinutes))
		}
	}
	return running, shadow
}

// checkStart checks the rules at the start of a first attempt e under
// policy, against the jobs waiting and running then.
func (s *schedule) checkStart(e lease.Entry, policy sim.Policy) {
	t, j := e.Start, s.jobs[e.ID]
	waiting := s.waitingAt(t)
	ex, ordinary := othersWaiting(waiting, e.ID)
	running, shadow := s.runningAt(t)
	switch {
	case policy == sim.Conservative:
		if j.RequiresExclusiveLock && running > 0 {
			s.bad("exclusive job %s started at %.3f with %d slots busy", j.JobID, t, running)
		}
		if err := s.conservativeAt(j, t, waiting); err != nil {
			s.bad("conservative: %v", err)
		}
	case j.RequiresExclusiveLock:
		s.checkExclusiveStart(j, t, running, ex)
	case ex != nil: // an exclusive job was waiting, whatever its priority
		s.checkStartBesideExclusive(j, t, policy, ex, ordinary, shadow)
	default:
		s.checkOrder(j, t, ordinary)
	}
}

// checkExclusiveStart: an exclusive job starts on an empty pool, and no
// waiting exclusive job comes before it.
func (s *schedule) checkExclusiveStart(j queuekit.Job, t float64, running int, ex *queuekit.Job) {
	if running > 0 {
		s.bad("exclusive job %s started at %.3f with %d slots busy", j.JobID, t, running)
	}
	if ex != nil && s.before(*ex, j) {
		s.bad("exclusive job %s started at %.3f before %s, which comes first", j.JobID, t, ex.JobID)
	}
}

// checkStartBesideExclusive judges an ordinary job started while exclusive
// job ex waited: never under barrier; under backfill only if it ends, by
// its estimate, by the reservation shadow and no ordinary job before it
// in the order also fitted.
func (s *schedule) checkStartBesideExclusive(j queuekit.Job, t float64, policy sim.Policy, ex *queuekit.Job, ordinary []queuekit.Job, shadow float64) {
	if policy == sim.Barrier {
		s.bad("barrier: %s started at %.3f while exclusive job %s waited", j.JobID, t, ex.JobID)
		return
	}
	if t+float64(j.RuntimeMinutes) > shadow+lease.Eps {
		s.bad("backfill: %s started at %.3f ends by estimate at %.3f, after the reservation of %s at %.3f",
			j.JobID, t, t+float64(j.RuntimeMinutes), ex.JobID, shadow)
	}
	for _, o := range ordinary {
		if s.before(o, j) && t+float64(o.RuntimeMinutes) <= shadow+lease.Eps {
			s.bad("backfill: %s started at %.3f although %s, earlier in order, also fit", j.JobID, t, o.JobID)
			return
		}
	}
}

// checkOrder: with no exclusive job waiting, an ordinary job starts only
// when no ordinary job before it in the order was waiting.
func (s *schedule) checkOrder(j queuekit.Job, t float64, ordinary []queuekit.Job) {
	for _, o := range ordinary {
		if s.before(o, j) {
			s.bad("order: %s started at %.3f while %s, earlier in order, waited", j.JobID, t, o.JobID)
			return
		}
	}
}

// conservativeAt checks conservative backfilling's rule at the start t of
// job j (c slots; waiting, the jobs arrived and not started at t, in the
// dispatch order given by s.before).
//
// Derivation. The decision that started j was taken at t (an attempt's start
// is the instant its claim was decided) on a pool at one version. Its
// free-slot profile held every job claimed before it, each until its
// estimated finish start + estimate, or not at all once that is past: a job
// released before the read had finished, and a job cannot finish before
// start + estimate, so the profile is the same whether the decider saw the
// release or not. The recorded schedule gives exactly these jobs: the other
// attempts started by t, until min(finish, start + estimate) (a job whose
// work ended early is taken as released at its finish). Jobs claimed at the
// same instant are included too: one claimed after j in the same plan was
// fitted around j's reservation, so holding it first moves neither j's nor
// an earlier job's earliest fit (a smaller profile cannot give an earlier
// fit, and every placement still fits in the profile holding them all).
// Then each job before j in the order that waited at t reserves at its
// earliest fit, in order, and j's own earliest fit must be t.
//
// That is the rule "j delays none of the jobs before it": if j's earliest
// fit behind them is t, their reservations were made without j and j fits
// around them, so none of them moves; conversely if reserving j at t first
// moves none of them, the profile holding all of them is never negative, so
// j fits at t behind them. When the rule is broken, the message names the
// first job that j's start pushes back and by how much, by estimates.
func (s *schedule) conservativeAt(j queuekit.Job, t float64, waiting []queuekit.Job) error {
	jobs, c, entries := s.jobs, s.c, s.entries
	est := func(id string) float64 { return float64(jobs[id].RuntimeMinutes) }
	need := func(x queuekit.Job) int {
		if x.RequiresExclusiveLock {
			return c
		}
		return 1
	}
	var earlier []queuekit.Job
	for _, w := range waiting {
		if w.JobID != j.JobID && s.before(w, j) {
			earlier = append(earlier, w)
		}
	}
	// plan builds the profile at t and reserves the earlier jobs in order,
	// after j at t when jFirst; it returns their reservations and j's fit.
	var p sim.Profile
	plan := func(jFirst bool) ([]float64, float64) {
		p.Reset(t, c)
		for _, r := range entries {
			if r.ID == j.JobID || r.Start > t+lease.Eps {
				continue
			}
			if end := math.Min(r.Finish, r.Start+est(r.ID)); end > t+lease.Eps {
				p.Reserve(t, end, len(r.Workers))
			}
		}
		if jFirst {
			p.Reserve(t, t+est(j.JobID), need(j))
		}
		at := make([]float64, len(earlier))
		for i, w := range earlier {
			at[i] = p.EarliestFit(est(w.JobID), need(w))
			p.Reserve(at[i], at[i]+est(w.JobID), need(w))
		}
		return at, p.EarliestFit(est(j.JobID), need(j))
	}
	at, fit := plan(false)
	if fit <= t+lease.Eps {
		return nil
	}
	moved, _ := plan(true)
	for i, w := range earlier {
		if moved[i] > at[i]+lease.Eps {
			return fmt.Errorf("%s started at %.3f, but its earliest reservation was %.3f: it pushes %s, earlier in order, from %.3f to %.3f",
				j.JobID, t, fit, w.JobID, at[i], moved[i])
		}
	}
	return fmt.Errorf("%s started at %.3f, but its earliest reservation was %.3f", j.JobID, t, fit)
}
