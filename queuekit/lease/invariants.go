package lease

import (
	"errors"
	"fmt"
	"sort"

	"github.com/nightqueue/workshop/queuekit"
)

// Verify checks what a finished run promises, on what it read back from
// DynamoDB, and returns every broken promise (nil when all hold):
//
//   - every job of the night ended exactly once: its status is SUCCESS or
//     FATAL_FAILURE, its attempts are numbered 1..k, each finished, every
//     one but the last failed (RETRIABLE_FAILURE or LEASE_EXPIRED), and the
//     last one's outcome is the job's end;
//   - a job had at most 1 + max_retry attempts;
//   - on the recorded schedule, never more than c slots busy, an exclusive
//     job alone, and no two attempts of a job at once;
//   - the pool ends clean: busy 0, no job running, no exclusive holder, and
//     ended = jobs = the night's jobs.
//
// The order rules of the policies are CheckSchedule's, for nights without
// retries.
func (r Report) Verify(n queuekit.Night) error {
	var errs []error
	bad := func(format string, a ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	byJob := map[string][]Entry{}
	for _, e := range r.Schedule {
		byJob[e.ID] = append(byJob[e.ID], e)
	}
	for _, j := range n.Jobs {
		as := byJob[j.JobID]
		sort.Slice(as, func(a, b int) bool { return as[a].Attempt < as[b].Attempt })
		if len(as) == 0 {
			bad("job %s: no attempt", j.JobID)
			continue
		}
		if len(as) > 1+r.MaxRetry {
			bad("job %s: %d attempts, more than 1 + max_retry = %d", j.JobID, len(as), 1+r.MaxRetry)
		}
		for i, a := range as {
			switch {
			case a.Attempt != i+1:
				bad("job %s: attempt %d where %d was due (attempts %d)", j.JobID, a.Attempt, i+1, len(as))
			case a.Outcome == "":
				bad("job %s: attempt %d never ended", j.JobID, a.Attempt)
			case i < len(as)-1 && a.Outcome != queuekit.StatusRetriableFailure && a.Outcome != LeaseExpired:
				bad("job %s: attempt %d ended %s but attempt %d followed: ended twice", j.JobID, a.Attempt, a.Outcome, a.Attempt+1)
			}
		}
		switch last := as[len(as)-1]; last.Outcome {
		case queuekit.StatusSuccess, queuekit.StatusFatalFailure, queuekit.StatusRetriableFailure, LeaseExpired:
			// A last RETRIABLE_FAILURE or LEASE_EXPIRED is final only when no retry was left.
			if (last.Outcome == queuekit.StatusRetriableFailure || last.Outcome == LeaseExpired) && len(as) < 1+r.MaxRetry {
				bad("job %s: last attempt %d ended %s with retries left, yet nothing followed", j.JobID, last.Attempt, last.Outcome)
			}
		}
	}
	if got := r.Statuses[queuekit.StatusSuccess] + r.Statuses[queuekit.StatusFatalFailure]; got != len(n.Jobs) {
		bad("%d jobs ended (SUCCESS or FATAL_FAILURE) of %d; statuses %v", got, len(n.Jobs), r.Statuses)
	}
	if err := checkOccupancy(r.Schedule, r.Workers); err != nil {
		errs = append(errs, err)
	}
	if r.PoolBusy != 0 || r.PoolRunning != 0 || r.PoolExclusive != "" || r.PoolEnded != r.PoolJobs || r.PoolJobs != len(n.Jobs) {
		bad("pool left busy %d, running %d, exclusive %q, ended %d of %d (night of %d jobs): want 0, 0, none, all",
			r.PoolBusy, r.PoolRunning, r.PoolExclusive, r.PoolEnded, r.PoolJobs, len(n.Jobs))
	}
	if len(errs) > 0 {
		return fmt.Errorf("night %s broke its promises: %w", r.BatchDate, errors.Join(errs...))
	}
	return nil
}

// checkOccupancy checks a recorded schedule, retries included: never more
// than c slots busy (releases before claims at one instant), an exclusive
// attempt alone, no two attempts of one job at once.
func checkOccupancy(entries []Entry, c int) error {
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, e := range entries {
		evs = append(evs, ev{e.Start, len(e.Workers)}, ev{e.Finish, -len(e.Workers)})
	}
	sort.Slice(evs, func(a, b int) bool {
		if evs[a].t != evs[b].t {
			return evs[a].t < evs[b].t
		}
		return evs[a].d < evs[b].d
	})
	var errs []error
	busy := 0
	for _, x := range evs {
		busy += x.d
		if (busy > c || busy < 0) && len(errs) < 10 {
			errs = append(errs, fmt.Errorf("minute %.3f: %d slots busy, outside 0..c = %d", x.t, busy, c))
		}
	}
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			if !(a.Start < b.Finish-Eps && b.Start < a.Finish-Eps) || len(errs) >= 20 {
				continue
			}
			switch {
			case a.ID == b.ID:
				errs = append(errs, fmt.Errorf("job %s: attempts %d and %d overlap", a.ID, a.Attempt, b.Attempt))
			case a.Exclusive || b.Exclusive:
				errs = append(errs, fmt.Errorf("exclusive job not alone: %s [%.3f, %.3f] overlaps %s [%.3f, %.3f]", a.ID, a.Start, a.Finish, b.ID, b.Start, b.Finish))
			}
		}
	}
	return errors.Join(errs...)
}
