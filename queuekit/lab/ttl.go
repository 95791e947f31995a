package lab

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// TTLJob is a job a team wants to schedule, with how late it may start
// without harm and whether readers must stop seeing it at its due time.
type TTLJob struct {
	Name      string
	What      string
	MayBeLate time.Duration // how late a start is harmless
}

// TTLLateness is the lateness a TTL timer must tolerate on AWS: expired
// items are deleted "typically within a few days" (Developer Guide, Time to
// Live; the UpdateTimeToLive reference says within two days), a typical
// figure, not a bound, so a job suits TTL only if a week late is harmless.
const TTLLateness = 7 * 24 * time.Hour

// TTLJobs are notebook 06's candidates.
var TTLJobs = []TTLJob{
	{"archive-finished-jobs", "move a night's finished job records to cold storage 90 days after the night", 30 * 24 * time.Hour},
	{"start-etl-0100", "start the 01:00 ETL of the night", 5 * time.Minute},
	{"retry-in-5-minutes", "retry a failed job 5 minutes after its failure", time.Minute},
	{"drop-attempt-records", "delete a night's attempt records after 30 days", 60 * 24 * time.Hour},
	{"deadline-reminder", "remind the owner 24 hours before a job's deadline", time.Hour},
	{"expire-share-link", "end a report's share link after 7 days (readers must not use it after that)", 14 * 24 * time.Hour},
}

// TTLRows is a row per candidate: name, what it does, how late it may start.
func TTLRows(jobs []TTLJob) [][]string {
	rows := make([][]string, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, []string{j.Name, j.What, lateness(j.MayBeLate)})
	}
	return rows
}

func lateness(d time.Duration) string {
	if d >= 24*time.Hour {
		return Plural(int(d/(24*time.Hour)), "day", "days")
	}
	if d >= time.Hour {
		return Plural(int(d/time.Hour), "hour", "hours")
	}
	return Plural(int(d/time.Minute), "minute", "minutes")
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
	detail := fmt.Sprintf("%s chosen", Plural(len(got), "job", "jobs"))
	if extra == 0 && missing == 0 {
		return report(true, "the jobs a TTL timer serves on AWS", detail, "")
	}
	var parts []string
	if missing > 0 {
		parts = append(parts, Plural(missing, "job that may be days late is missing", "jobs that may be days late are missing"))
	}
	if extra > 0 {
		parts = append(parts, Plural(extra, "job cannot wait days", "jobs cannot wait days"))
	}
	return report(false, "the jobs a TTL timer serves on AWS", detail+": "+strings.Join(parts, "; "),
		"TTL deletes expired items typically within a few days, a typical figure, not a bound: a job suits TTL if a week late is harmless")
}
