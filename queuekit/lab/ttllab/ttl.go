package ttllab

import (
	"fmt"
	"github.com/nightqueue/workshop/queuekit/lab"
	"slices"
	"sort"
	"strings"
	"time"
)

// TTLJob is a job a team wants to schedule: how far ahead it is set, how
// late it may start without harm and whether readers must stop seeing it at
// its due time.
type TTLJob struct {
	Name        string
	What        string
	MayBeLate   time.Duration // how late a start is harmless
	DueIn       time.Duration // how far ahead of its due time it is scheduled
	ReadersStop bool          // readers must not see it once it is due
}

// TTLLateness is the lateness a TTL timer must tolerate on AWS: expired
// items are deleted "typically within a few days" (Developer Guide, Time to
// Live; the UpdateTimeToLive reference says within two days), a typical
// figure, not a bound, so a job suits TTL only if a week late is harmless.
const TTLLateness = 7 * 24 * time.Hour

// TTLJobs are notebook 06's candidates.
var TTLJobs = []TTLJob{
	{"archive-finished-jobs", "move a night's finished job records to cold storage 90 days after the night", 30 * 24 * time.Hour, 90 * 24 * time.Hour, false},
	{"start-etl-0100", "start the ETL at 01:00 every night", 5 * time.Minute, 24 * time.Hour, false},
	{"retry-in-5-minutes", "retry a failed job 5 minutes after its failure", time.Minute, 5 * time.Minute, false},
	{"drop-attempt-records", "delete a night's attempt records after 30 days", 60 * 24 * time.Hour, 30 * 24 * time.Hour, false},
	{"deadline-reminder", "remind the owner 24 hours before a job's deadline (set when the job is, days ahead)", time.Hour, 3 * 24 * time.Hour, false},
	{"expire-share-link", "end a report's share link after 7 days", 14 * 24 * time.Hour, 7 * 24 * time.Hour, true},
}

// TTLRows is a row per candidate: name, what it does, how far ahead it is
// set, how late it may start, whether readers must stop seeing it when due.
func TTLRows(jobs []TTLJob) [][]string {
	rows := make([][]string, 0, len(jobs))
	for _, j := range jobs {
		stop := "no"
		if j.ReadersStop {
			stop = "yes"
		}
		rows = append(rows, []string{j.Name, j.What, lateness(j.DueIn), lateness(j.MayBeLate), stop})
	}
	return rows
}

// The mechanisms notebook 06's decision chooses among.
const (
	ViaTTL        = "ttl"         // an item whose TTL attribute is the due time, fired from the stream
	ViaTTLFilter  = "ttl+filter"  // the same, and every reader filters on the TTL attribute
	ViaDelayQueue = "delay-queue" // an SQS message sent with a delay (DelaySeconds)
	ViaScheduler  = "scheduler"   // EventBridge Scheduler, cron: a start at a given time
)

// MaxSQSDelay is the longest SQS holds a message back, on a delay queue or
// with a message timer: 15 minutes (SQS Developer Guide, "Amazon SQS delay
// queues").
const MaxSQSDelay = 15 * time.Minute

// TimerPlanVerdict counts, rule by rule, the jobs of a plan that break it.
type TimerPlanVerdict struct {
	Unknown      int // no mechanism, or one not among the four
	TTLTooLate   int // on TTL, yet it cannot start TTLLateness late
	NotOnTTL     int // may start TTLLateness late, yet given a schedule or a message to run
	Unfiltered   int // readers must stop at the due time: on TTL without the filter
	DelayTooLong int // on a delay queue, yet set more than MaxSQSDelay ahead
}

// OK says whether the plan breaks no rule.
func (v TimerPlanVerdict) OK() bool { return v == TimerPlanVerdict{} }

// JudgeTimerPlan checks plan (job name to mechanism) against the rules of
// notebook 06: TTL deletes expired items typically within days, so it
// carries only jobs that may start TTLLateness late, and those ride on it (a
// put, nothing else to run); an expired item stays readable until deleted, so
// a job whose readers must stop is TTL with the filter; SQS holds a message
// back at most MaxSQSDelay. A scheduler may start anything else (a
// 5-minute retry too). A job missing from plan counts as Unknown.
func JudgeTimerPlan(jobs []TTLJob, plan map[string]string) TimerPlanVerdict {
	var v TimerPlanVerdict
	for _, j := range jobs {
		m := plan[j.Name]
		onTTL := m == ViaTTL || m == ViaTTLFilter
		switch {
		case !onTTL && m != ViaDelayQueue && m != ViaScheduler:
			v.Unknown++
			continue
		case onTTL && j.MayBeLate < TTLLateness:
			v.TTLTooLate++
		case !onTTL && j.MayBeLate >= TTLLateness:
			v.NotOnTTL++
		}
		if m == ViaTTL && j.ReadersStop {
			v.Unfiltered++
		}
		if m == ViaDelayQueue && j.DueIn > MaxSQSDelay {
			v.DelayTooLong++
		}
	}
	return v
}

func lateness(d time.Duration) string {
	if d >= 24*time.Hour {
		return lab.Plural(int(d/(24*time.Hour)), "day", "days")
	}
	if d >= time.Hour {
		return lab.Plural(int(d/time.Hour), "hour", "hours")
	}
	return lab.Plural(int(d/time.Minute), "minute", "minutes")
}

// TTLSuits is the names of the candidates a TTL timer serves on AWS: those
// that may start TTLLateness late or more, sorted.
func TTLSuits(jobs []TTLJob) []string {
	var out []string
	for _, j := range jobs {
		if j.MayBeLate >= TTLLateness {
			out = append(out, j.Name)
		}
	}
	sort.Strings(out)
	return out
}

// CheckTTLChoice says whether chosen is exactly the candidates TTL serves,
// naming how many are missing and how many do not belong, never which.
func CheckTTLChoice(chosen []string) bool {
	want := TTLSuits(TTLJobs)
	got := slices.Clone(chosen)
	sort.Strings(got)
	got = slices.Compact(got)
	var extra, missing int
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra++
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing++
		}
	}
	detail := fmt.Sprintf("%s chosen", lab.Plural(len(got), "job", "jobs"))
	if extra == 0 && missing == 0 {
		return lab.Report(true, "the jobs a TTL timer serves on AWS", detail, "")
	}
	var parts []string
	if missing > 0 {
		parts = append(parts, lab.Plural(missing, "job that may be days late is missing", "jobs that may be days late are missing"))
	}
	if extra > 0 {
		parts = append(parts, lab.Plural(extra, "job cannot wait days", "jobs cannot wait days"))
	}
	return lab.Report(false, "the jobs a TTL timer serves on AWS", detail+": "+strings.Join(parts, "; "),
		"TTL deletes expired items typically within a few days, a typical figure, not a bound: a job suits TTL if a week late is harmless")
}
