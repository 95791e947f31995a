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
//     latest estimated finish, never before the start).
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
		if s, ok := first[e.JobID]; !ok || e.Start < s {
			first[e.JobID] = e.Start
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
	// Capacity, by a sweep with releases before claims at one instant.
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, e := range entries {
		evs = append(evs, ev{e.Start, e.Workers}, ev{e.Finish, -e.Workers})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].d < evs[b].d
	})
	busy := 0
	for _, x := range evs {
		busy += x.d
		if busy > c {
			bad("minute %.3f: %d slots busy, more than c = %d", x.t, busy, c)
		}
	}
	overlap := func(a, b Entry) bool { return a.Start < b.Finish-Eps && b.Start < a.Finish-Eps }
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			switch {
			case !overlap(a, b):
			case a.JobID == b.JobID:
				bad("job %s: attempts %d and %d overlap", a.JobID, a.Attempt, b.Attempt)
			case a.Exclusive || b.Exclusive:
				bad("exclusive job not alone: %s [%.3f, %.3f] overlaps %s [%.3f, %.3f]", a.JobID, a.Start, a.Finish, b.JobID, b.Start, b.Finish)
			}
		}
	}
	// Rules at each start, against the waiting set and the running set then.
	for _, e := range entries {
		if e.Attempt != 1 {
			continue
		}
		t := e.Start
		j := jobs[e.JobID]
		var ex *queuekit.Job
		var ordinary []queuekit.Job
		for _, w := range waitingAt(t) {
			if w.JobID == e.JobID {
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
				running += r.Workers
				shadow = math.Max(shadow, r.Start+float64(jobs[r.JobID].RuntimeMinutes))
			}
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
