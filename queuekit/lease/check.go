package lease

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Eps is the slack, in job-minutes, of the checks on a recorded schedule
// (floating point of minute conversions; times themselves are whole ms).
const Eps = 1e-6

// CheckSchedule checks a recorded schedule of a night without retries
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
func CheckSchedule(n queuekit.Night, entries []Entry, c int, policy sim.Policy) error {
	jobs := map[string]queuekit.Job{}
	for _, j := range n.Jobs {
		jobs[j.JobID] = j
	}
	arrival := func(id string) float64 { return float64(jobs[id].ArrivalMinute(n.Window)) }
	first := map[string]float64{}
	for _, e := range entries {
		if s, ok := first[e.ID]; !ok || e.Start < s {
			first[e.ID] = e.Start
		}
	}
	before := func(a, b queuekit.Job) bool { // dispatch order
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		if aa, ba := arrival(a.JobID), arrival(b.JobID); aa != ba {
			return aa < ba
		}
		return a.JobID < b.JobID
	}
	waitingAt := func(t float64) []queuekit.Job {
		var w []queuekit.Job
		for _, j := range n.Jobs {
			s, started := first[j.JobID]
			if arrival(j.JobID) <= t+Eps && (!started || s > t+Eps) {
				w = append(w, j)
			}
		}
		sort.Slice(w, func(a, b int) bool { return before(w[a], w[b]) })
		return w
	}
	var errs []error
	bad := func(format string, a ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	// Capacity, exclusivity and one attempt of a job at a time: the sweep
	// Verify runs on every report.
	if err := checkOccupancy(entries, c, 0); err != nil {
		errs = append(errs, err)
	}
	// Rules at each start, against the waiting set and the running set then.
	for _, e := range entries {
		if e.Attempt != 1 {
			continue
		}
		t := e.Start
		j := jobs[e.ID]
		var ex *queuekit.Job
		var ordinary []queuekit.Job
		for _, w := range waitingAt(t) {
			if w.JobID == e.ID {
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
		shadow, running := t, 0
		for _, r := range entries {
			if r.Start < t-Eps && r.Finish > t+Eps {
				running += len(r.Workers)
				shadow = math.Max(shadow, r.Start+float64(jobs[r.ID].RuntimeMinutes))
			}
		}
		if policy == sim.Conservative {
			if j.RequiresExclusiveLock && running > 0 {
				bad("exclusive job %s started at %.3f with %d slots busy", j.JobID, t, running)
			}
			if err := conservativeAt(j, t, waitingAt(t), entries, jobs, c, before); err != nil {
				bad("conservative: %v", err)
			}
			continue
		}
		if j.RequiresExclusiveLock {
			if running > 0 {
				bad("exclusive job %s started at %.3f with %d slots busy", j.JobID, t, running)
			}
			if ex != nil && before(*ex, j) {
				bad("exclusive job %s started at %.3f before %s, which comes first", j.JobID, t, ex.JobID)
			}
			continue
		}
		if ex != nil { // an exclusive job was waiting, whatever its priority
			if policy == sim.Barrier {
				bad("barrier: %s started at %.3f while exclusive job %s waited", j.JobID, t, ex.JobID)
				continue
			}
			if t+float64(j.RuntimeMinutes) > shadow+Eps {
				bad("backfill: %s started at %.3f ends by estimate at %.3f, after the reservation of %s at %.3f",
					j.JobID, t, t+float64(j.RuntimeMinutes), ex.JobID, shadow)
			}
			for _, o := range ordinary {
				if before(o, j) && t+float64(o.RuntimeMinutes) <= shadow+Eps {
					bad("backfill: %s started at %.3f although %s, earlier in order, also fit", j.JobID, t, o.JobID)
					break
				}
			}
			continue
		}
		for _, o := range ordinary {
			if before(o, j) {
				bad("order: %s started at %.3f while %s, earlier in order, waited", j.JobID, t, o.JobID)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// conservativeAt checks conservative backfilling's rule at the start t of
// job j (c slots; waiting, the jobs arrived and not started at t, in the
// dispatch order given by before).
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
func conservativeAt(j queuekit.Job, t float64, waiting []queuekit.Job, entries []Entry,
	jobs map[string]queuekit.Job, c int, before func(a, b queuekit.Job) bool) error {
	est := func(id string) float64 { return float64(jobs[id].RuntimeMinutes) }
	need := func(x queuekit.Job) int {
		if x.RequiresExclusiveLock {
			return c
		}
		return 1
	}
	var earlier []queuekit.Job
	for _, w := range waiting {
		if w.JobID != j.JobID && before(w, j) {
			earlier = append(earlier, w)
		}
	}
	// plan builds the profile at t and reserves the earlier jobs in order,
	// after j at t when jFirst; it returns their reservations and j's fit.
	var p sim.Profile
	plan := func(jFirst bool) ([]float64, float64) {
		p.Reset(t, c)
		for _, r := range entries {
			if r.ID == j.JobID || r.Start > t+Eps {
				continue
			}
			if end := math.Min(r.Finish, r.Start+est(r.ID)); end > t+Eps {
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
	if fit <= t+Eps {
		return nil
	}
	moved, _ := plan(true)
	for i, w := range earlier {
		if moved[i] > at[i]+Eps {
			return fmt.Errorf("%s started at %.3f, but its earliest reservation was %.3f: it pushes %s, earlier in order, from %.3f to %.3f",
				j.JobID, t, fit, w.JobID, at[i], moved[i])
		}
	}
	return fmt.Errorf("%s started at %.3f, but its earliest reservation was %.3f", j.JobID, t, fit)
}
