// Package queuekit is the domain shared by every part of the nightly job
// queue workshop: the queued batch Job as it is stored in the DynamoDB job
// catalog, the Night of jobs competing for one batch window, its Summary, and
// the queueing Params (lambda, mu, c, rho) derived from it.
//
// Data flows one way:
//
//	data/ (sample nights, embedded) ─┐
//	                                 ├─> queuekit.Night ─> Params ─> mmc (Erlang C)
//	DynamoDB (Query by batch_date) ──┘                  └─────────> sim ─> Result ─> chart / report
//
// queuekit imports no AWS and no chart code. Loading and validation live here
// so that a JSON Lines file and a DynamoDB item are checked by the same rules
// and fail with the same messages.
package queuekit

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TableName is the DynamoDB table of the job catalog.
const TableName = "db_batch_window_requests"

// Attribute names of a job item, as stored in DynamoDB and in JSON Lines.
const (
	AttrBatchDate       = "batch_date"    // partition key
	AttrWindowJobID     = "window_job_id" // sort key: <requested_window>#<job_id>
	AttrJobID           = "job_id"
	AttrRequestedWindow = "requested_window"
	AttrSubmittedAt     = "submitted_at"
	AttrWorkloadClass   = "workload_class"
	AttrRuntime         = "estimated_runtime_minutes"
	AttrPriority        = "priority"
	AttrExclusive       = "requires_exclusive_lock"
	AttrStatus          = "status"
)

// RequiredAttributes lists every attribute a job item must have, in the
// order of the catalog's documentation.
var RequiredAttributes = []string{
	AttrBatchDate, AttrWindowJobID, AttrJobID, AttrRequestedWindow, AttrSubmittedAt,
	AttrWorkloadClass, AttrRuntime, AttrPriority, AttrExclusive, AttrStatus,
}

// Workload classes of the catalog.
const (
	ClassETL              = "etl"
	ClassRefresh          = "refresh"
	ClassBackfill         = "backfill"
	ClassIndexMaintenance = "index_maintenance"
)

// WorkloadClasses lists the valid workload classes.
var WorkloadClasses = []string{ClassETL, ClassRefresh, ClassBackfill, ClassIndexMaintenance}

// HighPriority is the priority from which a job counts as high priority.
const HighPriority = 3

// MaxRuntimeMinutes bounds an estimated runtime: a week. Anything longer is a
// typo or a unit mistake, and unbounded values would overflow the sums the
// queueing parameters are built from.
const MaxRuntimeMinutes = 7 * 24 * 60

// Job is one queued batch job: one item of the job catalog table.
// The struct tags are the item's attribute names in JSON and DynamoDB.
type Job struct {
	BatchDate             string `json:"batch_date" dynamodbav:"batch_date"`
	WindowJobID           string `json:"window_job_id" dynamodbav:"window_job_id"`
	JobID                 string `json:"job_id" dynamodbav:"job_id"`
	RequestedWindow       string `json:"requested_window" dynamodbav:"requested_window"`
	SubmittedAt           string `json:"submitted_at" dynamodbav:"submitted_at"`
	WorkloadClass         string `json:"workload_class" dynamodbav:"workload_class"`
	RuntimeMinutes        int    `json:"estimated_runtime_minutes" dynamodbav:"estimated_runtime_minutes"`
	Priority              int    `json:"priority" dynamodbav:"priority"`
	RequiresExclusiveLock bool   `json:"requires_exclusive_lock" dynamodbav:"requires_exclusive_lock"`
	Status                string `json:"status" dynamodbav:"status"`
}

// SortKey returns the sort key the job must carry: <requested_window>#<job_id>.
func SortKey(window, jobID string) string { return window + "#" + jobID }

// Window is the batch window of a night, in minutes since midnight.
type Window struct {
	Start  int // first minute of the window, e.g. 60 for 01:00
	Cutoff int // minute by which the night's work should be done, e.g. 300 for 05:00
}

// DefaultWindow is the workshop's batch window: 01:00 to the 05:00 cutoff.
var DefaultWindow = Window{Start: 60, Cutoff: 300}

// Minutes is the length of the window in minutes.
func (w Window) Minutes() int { return w.Cutoff - w.Start }

// Hours is the length of the window in hours.
func (w Window) Hours() float64 { return float64(w.Minutes()) / 60 }

// String formats the window as "01:00-05:00".
func (w Window) String() string { return FormatClock(w.Start) + "-" + FormatClock(w.Cutoff) }

// FormatClock formats minutes since midnight as HH:MM.
func FormatClock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

var (
	clockRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)
	jobIDRE = regexp.MustCompile(`^JOB-([0-9]{8})-([0-9]{3})$`)
)

// ParseClock parses HH:MM (24-hour, two digits each) into minutes since midnight.
func ParseClock(s string) (int, error) {
	m := clockRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a time of day in HH:MM form", s)
	}
	h, _ := strconv.Atoi(m[1])
	mm, _ := strconv.Atoi(m[2])
	return h*60 + mm, nil
}

// ParseBatchDate checks a batch date in YYYY-MM-DD form.
func ParseBatchDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return time.Time{}, fmt.Errorf("%q is not a date in YYYY-MM-DD form", s)
	}
	return t, nil
}

// ArrivalMinute is the minute, counted from the window start, at which the
// job joins the queue: max(0, requested_window - window start).
func (j Job) ArrivalMinute(w Window) int {
	m, err := ParseClock(j.RequestedWindow)
	if err != nil {
		return 0
	}
	return max(0, m-w.Start)
}

// FieldError is a problem with one field of one job: what the value is, why it
// is wrong, and what to do about it. Location gives where the job came from.
type FieldError struct {
	Location string // "data/x.jsonl:3" or "dynamodb item batch_date=..., window_job_id=..."
	Field    string
	Value    string
	Problem  string
	Fix      string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Location != "" {
		b.WriteString(e.Location)
		b.WriteString(": ")
	}
	b.WriteString("field ")
	b.WriteString(e.Field)
	if e.Value != "" {
		fmt.Fprintf(&b, " = %s", e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// Validate checks one job against the catalog's rules for the batch window w.
// It returns a *FieldError (without Location) for the first broken rule.
func (j Job) Validate(w Window) error {
	bad := func(field string, value any, problem, fix string) error {
		return &FieldError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Problem: problem, Fix: fix}
	}
	date, err := ParseBatchDate(j.BatchDate)
	if err != nil {
		return bad(AttrBatchDate, j.BatchDate, "not a date", "write it as YYYY-MM-DD, e.g. 2026-05-13")
	}
	m := jobIDRE.FindStringSubmatch(j.JobID)
	if m == nil {
		return bad(AttrJobID, j.JobID, "malformed job id", "write it as JOB-<yyyymmdd>-<3-digit seq>, e.g. JOB-20260513-001")
	}
	if m[1] != date.Format("20060102") {
		return bad(AttrJobID, j.JobID, "job id date does not match batch_date "+j.BatchDate,
			"use JOB-"+date.Format("20060102")+"-<seq> or move the job to its own night")
	}
	win, err := ParseClock(j.RequestedWindow)
	if err != nil {
		return bad(AttrRequestedWindow, j.RequestedWindow, "not a time of day", "write it as HH:MM, e.g. 02:00")
	}
	if win < w.Start || win >= w.Cutoff {
		return bad(AttrRequestedWindow, j.RequestedWindow, "outside the batch window "+w.String(),
			fmt.Sprintf("use a window from %s to before %s", FormatClock(w.Start), FormatClock(w.Cutoff)))
	}
	if want := SortKey(j.RequestedWindow, j.JobID); j.WindowJobID != want {
		return bad(AttrWindowJobID, j.WindowJobID, "sort key does not match requested_window and job_id",
			"set it to "+want)
	}
	if _, err := time.Parse(time.RFC3339, j.SubmittedAt); err != nil || !strings.HasSuffix(j.SubmittedAt, "Z") {
		return bad(AttrSubmittedAt, j.SubmittedAt, "not an RFC 3339 UTC timestamp", "write it as e.g. 2026-05-13T00:07:00Z")
	}
	if !validClass(j.WorkloadClass) {
		return bad(AttrWorkloadClass, j.WorkloadClass, "unknown workload class",
			"use one of "+strings.Join(WorkloadClasses, ", "))
	}
	if j.RuntimeMinutes <= 0 {
		return bad(AttrRuntime, j.RuntimeMinutes, "runtime must be a positive whole number of minutes", "estimate at least 1 minute")
	}
	if j.RuntimeMinutes > MaxRuntimeMinutes {
		return bad(AttrRuntime, j.RuntimeMinutes, fmt.Sprintf("runtime longer than a week (%d minutes)", MaxRuntimeMinutes),
			"give the estimate in minutes, e.g. 90 for an hour and a half")
	}
	if j.Priority < 0 {
		return bad(AttrPriority, j.Priority, "priority must not be negative", "use 0 or more (higher runs first)")
	}
	if strings.TrimSpace(j.Status) == "" {
		return bad(AttrStatus, j.Status, "status is empty", `use "queued" for a job waiting to run`)
	}
	return nil
}

func validClass(c string) bool {
	for _, k := range WorkloadClasses {
		if c == k {
			return true
		}
	}
	return false
}

// Night is the set of jobs of one batch date competing for one batch window.
type Night struct {
	BatchDate string
	Window    Window
	Jobs      []Job // in catalog order (sort key order when read from DynamoDB)
	// OnlyWindow is the requested window (HH:MM) the night was restricted to
	// by Only, or "" for the whole night.
	OnlyWindow string
}

// NewNight validates jobs for batch window w and returns them as a night.
// Every job must carry batchDate, and job ids must be unique.
func NewNight(batchDate string, w Window, jobs []Job) (Night, error) {
	if w.Start < 0 || w.Cutoff <= w.Start || w.Cutoff > 48*60 {
		return Night{}, fmt.Errorf("batch window start %d, cutoff %d (minutes after midnight): need 0 <= start < cutoff <= 2880", w.Start, w.Cutoff)
	}
	if _, err := ParseBatchDate(batchDate); err != nil {
		return Night{}, fmt.Errorf("batch date: %w", err)
	}
	seen := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		if err := j.Validate(w); err != nil {
			return Night{}, fmt.Errorf("night %s: job %d: %w", batchDate, i+1, err)
		}
		if j.BatchDate != batchDate {
			return Night{}, fmt.Errorf("night %s: job %s belongs to batch date %s", batchDate, j.JobID, j.BatchDate)
		}
		if seen[j.JobID] {
			return Night{}, fmt.Errorf("night %s: duplicate job_id %q", batchDate, j.JobID)
		}
		seen[j.JobID] = true
	}
	return Night{BatchDate: batchDate, Window: w, Jobs: append([]Job(nil), jobs...)}, nil
}

// Only returns the night restricted to the jobs of one requested window
// (HH:MM). An empty window returns the night unchanged.
func (n Night) Only(window string) Night {
	if window == "" {
		return n
	}
	out := n
	out.Jobs = nil
	out.OnlyWindow = window
	for _, j := range n.Jobs {
		if j.RequestedWindow == window {
			out.Jobs = append(out.Jobs, j)
		}
	}
	return out
}

// GroupNights groups validated jobs by batch date into nights, in date order.
func GroupNights(jobs []Job, w Window) []Night {
	by := map[string][]Job{}
	var dates []string
	for _, j := range jobs {
		if _, ok := by[j.BatchDate]; !ok {
			dates = append(dates, j.BatchDate)
		}
		by[j.BatchDate] = append(by[j.BatchDate], j)
	}
	sort.Strings(dates)
	nights := make([]Night, len(dates))
	for i, d := range dates {
		nights[i] = Night{BatchDate: d, Window: w, Jobs: by[d]}
	}
	return nights
}
