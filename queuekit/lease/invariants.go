package lease

import (
	"errors"
	"fmt"
	"sort"

	"github.com/nightqueue/workshop/queuekit"
)

// Eps is the slack, in job-minutes, of the checks on a recorded schedule
// (floating point of minute conversions; times themselves are whole ms).
const Eps = 1e-6

// Verify checks what a finished run promises, on what it read back from
// DynamoDB, and returns every broken promise (nil when all hold). No check
// compares a time one host wrote with a time another host wrote, except
// within the stated skew bound r.MaxSkew:
//
//   - every job of the night ended exactly once: its status is SUCCESS or
//     FATAL_FAILURE, its attempts are numbered 1..k, each finished, every
//     one but the last failed (RETRIABLE_FAILURE or LEASE_EXPIRED), and the
//     last one's outcome is the job's end;
//   - a job had at most 1 + max_retry attempts;
//   - one holder at a time, in fence tokens (no clock): each attempt's end
//     moved the job's token past its claim's, each attempt was claimed at
//     a token past the previous attempt's end, and an ended job is held by
//     nobody, its token the one its last attempt's end set;
//   - the pool, in its own versions (no clock): each claim transaction made
//     one pool version, no two claims made the same one, at most c slots
//     were busy after each claim, and an exclusive job was claimed on an
//     empty pool;
//   - on the recorded schedule (times written by the hosts that claimed and
//     ended each attempt), never more than c slots busy, an exclusive job
//     alone, and no two attempts of a job at once, where each attempt's
//     finish is taken MaxSkew earlier: an overlap shorter than the skew
//     bound may be the clocks', not the night's, so only longer ones count
//     (the token and version checks catch the short ones);
//   - the pool ends clean: busy 0, no job running, no exclusive holder, and
//     ended = jobs = the night's jobs.
//
// The order rules of the policies are package lease/poolrules's (Check),
// for nights without retries, on one clock: not the run's verdict.
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
	state := map[string]JobState{}
	for _, j := range r.Jobs {
		state[j.JobID] = j
	}
	for _, j := range n.Jobs {
		as := byJob[j.JobID]
		sort.Slice(as, func(a, b int) bool { return as[a].Attempt < as[b].Attempt })
		if len(as) == 0 {
			bad("job %s: no attempt", j.JobID)
			continue
		}
		failed, lost := 0, 0 // attempts that ended in the job's own failure, and lease expiries
		for _, a := range as {
			switch a.Outcome {
			case queuekit.StatusRetriableFailure, queuekit.StatusFatalFailure:
				failed++
			case LeaseExpired:
				lost++
			}
		}
		if failed > 1+r.MaxRetry || lost > 1+r.MaxLost {
			bad("job %s: %d attempts failed and %d lost, more than 1 + max_retry = %d and 1 + max_lost = %d", j.JobID, failed, lost, 1+r.MaxRetry, 1+r.MaxLost)
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
			// A last RETRIABLE_FAILURE is final only when no retry was left,
			// a last LEASE_EXPIRED only past max_lost.
			if last.Outcome == queuekit.StatusRetriableFailure && failed < 1+r.MaxRetry || last.Outcome == LeaseExpired && lost < 1+r.MaxLost {
				bad("job %s: last attempt %d ended %s with retries left, yet nothing followed", j.JobID, last.Attempt, last.Outcome)
			}
		}
		for _, err := range checkTokens(j.JobID, as, state) {
			bad("%v", err)
		}
	}
	if got := r.Statuses[queuekit.StatusSuccess] + r.Statuses[queuekit.StatusFatalFailure]; got != len(n.Jobs) {
		bad("%d jobs ended (SUCCESS or FATAL_FAILURE) of %d; statuses %v", got, len(n.Jobs), r.Statuses)
	}
	if err := checkPoolVersions(r.Schedule, r.Workers); err != nil {
		errs = append(errs, err)
	}
	skew := 0.0
	if r.MinuteMS > 0 {
		skew = float64(r.MaxSkew.Milliseconds()) / r.MinuteMS
	}
	if err := CheckOccupancy(r.Schedule, r.Workers, skew); err != nil {
		errs = append(errs, fmt.Errorf("on the hosts' clocks, skew up to %s allowed: %w", r.MaxSkew, err))
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

// checkTokens checks one job's holders in its fence tokens, which only
// DynamoDB's conditional writes move (a claim from the token it read to
// the next, an end from the attempt's token to the next): as are the
// job's attempts in order, state the job items by id. Attempts written
// before their tokens were recorded (ClaimToken 0) are not checked.
func checkTokens(id string, as []Entry, state map[string]JobState) []error {
	var errs []error
	for i, a := range as {
		if a.ClaimToken == 0 {
			return nil
		}
		if a.Outcome != "" && a.EndToken <= a.ClaimToken {
			errs = append(errs, fmt.Errorf("job %s: attempt %d ended at fence token %d, not past its claim's %d", id, a.Attempt, a.EndToken, a.ClaimToken))
		}
		if i > 0 {
			if p := as[i-1]; p.Outcome != "" && a.ClaimToken <= p.EndToken {
				errs = append(errs, fmt.Errorf("job %s: attempt %d was claimed at fence token %d, before attempt %d's end moved the token to %d: two holders at once",
					id, a.Attempt, a.ClaimToken, p.Attempt, p.EndToken))
			}
		}
	}
	last := as[len(as)-1]
	j, ok := state[id]
	if !ok || last.Outcome == "" || (j.Status != queuekit.StatusSuccess && j.Status != queuekit.StatusFatalFailure) {
		return errs
	}
	if j.Worker != "" {
		errs = append(errs, fmt.Errorf("job %s ended %s but is still held by %s at fence token %d: two holders", id, j.Status, j.Worker, j.Token))
	}
	if j.Token != last.EndToken {
		errs = append(errs, fmt.Errorf("job %s: fence token %d, but its last attempt %d ended at %d: the job changed hands after its end", id, j.Token, last.Attempt, last.EndToken))
	}
	return errs
}

// checkPoolVersions checks the night's occupancy in the pool's own order:
// every claim transaction is conditioned on the pool version it read and
// bumps it, so it makes exactly one version, and its attempts record that
// version and the slots busy once it committed. No two claims may have
// made one version (that would be two decisions on one pool state), no
// claim may have left more than c slots busy, and an exclusive job is
// claimed alone, on an empty pool. Attempts written before these were
// recorded (PoolVersion 0) are not checked.
func checkPoolVersions(entries []Entry, c int) error {
	type claim struct {
		worker string
		start  float64
		busy   int
		slots  int
		jobs   []Entry
	}
	byVersion := map[int64]*claim{}
	var versions []int64
	var errs []error
	bad := func(format string, a ...any) {
		if len(errs) < 10 {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	for _, e := range entries {
		if e.PoolVersion == 0 {
			continue
		}
		cl := byVersion[e.PoolVersion]
		if cl == nil {
			cl = &claim{worker: e.Worker, start: e.Start, busy: e.PoolBusy}
			byVersion[e.PoolVersion] = cl
			versions = append(versions, e.PoolVersion)
		} else if cl.worker != e.Worker || cl.start != e.Start || cl.busy != e.PoolBusy {
			bad("pool version %d was made by two claims: %s (attempt %d) by %s and %s (attempt %d) by %s",
				e.PoolVersion, cl.jobs[0].ID, cl.jobs[0].Attempt, cl.worker, e.ID, e.Attempt, e.Worker)
		}
		cl.slots += len(e.Workers)
		cl.jobs = append(cl.jobs, e)
	}
	sort.Slice(versions, func(a, b int) bool { return versions[a] < versions[b] })
	for _, v := range versions {
		cl := byVersion[v]
		if cl.busy > c || cl.busy < cl.slots {
			bad("pool version %d: %d slots busy after the claim of %s, outside %d..c = %d", v, cl.busy, cl.jobs[0].ID, cl.slots, c)
		}
		for _, e := range cl.jobs {
			if e.Exclusive && (len(cl.jobs) > 1 || cl.busy != len(e.Workers)) {
				bad("pool version %d: exclusive job %s claimed with %d other slots busy: not alone", v, e.ID, cl.busy-len(e.Workers))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckOccupancy checks a recorded schedule, retries included: never more
// than c slots busy (releases before claims at one instant), an exclusive
// attempt alone, no two attempts of one job at once. skew (job-minutes)
// is how far apart the clocks that wrote the times may be: each attempt's
// finish is taken skew earlier, so an overlap is reported only if it holds
// whatever the clocks' offsets within the bound (0: the times come from
// one clock).
//
// Why finish − skew: let every host's offset from true time lie in
// [a, a+skew]. A start written at s by one host happened at or before
// s − a; a finish written at f by another happened at or after f − a − skew.
// So the attempt certainly held its slots over [s, f − skew], shifted by
// the common a, which moves no overlap.
func CheckOccupancy(entries []Entry, c int, skew float64) error {
	type ev struct {
		t float64
		d int
	}
	var evs []ev
	for _, e := range entries {
		if e.Finish-skew > e.Start {
			evs = append(evs, ev{e.Start, len(e.Workers)}, ev{e.Finish - skew, -len(e.Workers)})
		}
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
			if !(a.Start < b.Finish-skew-Eps && b.Start < a.Finish-skew-Eps) || len(errs) >= 20 {
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
