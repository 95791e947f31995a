package leaselab

import (
	"fmt"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// EndedOnce reports whether every job of a run ended SUCCESS exactly once
// (one SUCCESS attempt a job, every job SUCCESS), whatever attempts a
// lease expiry added before it.
func EndedOnce(rep lease.Report, jobs int) bool {
	ok := map[string]int{}
	for _, a := range rep.Schedule {
		if a.Outcome == queuekit.StatusSuccess {
			ok[a.ID]++
		}
	}
	for _, n := range ok {
		if n != 1 {
			return false
		}
	}
	return len(ok) == jobs && rep.Statuses[queuekit.StatusSuccess] == jobs
}

// LeaseExpiries says, from a run's attempts, whether any lease expired:
// none, or which jobs lost a lease, read as what it is on a busy machine,
// a holder whose heartbeats did not land for longer than the lease.
func LeaseExpiries(rep lease.Report, leaseLen time.Duration) string {
	var ids []string
	for _, a := range rep.Schedule {
		if a.Outcome == lease.LeaseExpired {
			ids = append(ids, fmt.Sprintf("job %s (attempt %d)", shortID(a.ID), a.Attempt))
		}
	}
	if len(ids) == 0 {
		return fmt.Sprintf("No lease expired: every holder's heartbeats landed within its %s s lease.", format.Num(leaseLen.Seconds()))
	}
	return fmt.Sprintf("%s expired on this run: %s. Its holder was alive, but no heartbeat of it landed for more than a "+
		"whole lease (%s s): this machine paused the process or its DynamoDB for that long. A reaper took the job over "+
		"and it ran again: the lease did its job, and the work ran at least once, not exactly once.",
		lab.Plural(len(ids), "lease", "leases"), strings.Join(ids, ", "), format.Num(leaseLen.Seconds()))
}

// ForecastAgreement compares a run's realised schedule with the forecast,
// from the values: whether the jobs started in the forecast's order (the
// first job that did not, if any) and when each drained.
func ForecastAgreement(rep lease.Report) string {
	real, fc := rep.Realised.Schedule, rep.Forecast.Schedule
	s := "The jobs started **in the forecast's order**"
	for i := range min(len(real), len(fc)) {
		if real[i].ID != fc[i].ID {
			at := -1
			for k := range fc {
				if fc[k].ID == real[i].ID {
					at = k
				}
			}
			s = fmt.Sprintf("The jobs started **in a different order**: job %s started %s here, %s in the forecast "+
				"(a start a few milliseconds late lets another due job's claim commit first)",
				shortID(real[i].ID), ordinal(i+1), ordinal(at+1))
			break
		}
	}
	return s + fmt.Sprintf(". The night drained at minute **%s**, the forecast at **%s**.",
		format.Num(rep.Realised.DrainedMinute), format.Num(rep.Forecast.DrainedMinute))
}

func ordinal(n int) string {
	switch {
	case n <= 0:
		return "nowhere"
	case n%10 == 1 && n%100 != 11:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2 && n%100 != 12:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3 && n%100 != 13:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
