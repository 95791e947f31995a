package queuekit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/data"
)

const goodLine = `{"batch_date":"2026-05-13","window_job_id":"01:00#JOB-20260513-001","job_id":"JOB-20260513-001","requested_window":"01:00","submitted_at":"2026-05-13T00:07:00Z","workload_class":"etl","estimated_runtime_minutes":25,"priority":2,"requires_exclusive_lock":false,"status":"queued"}`

// with returns goodLine with one attribute replaced (or removed when v is nil).
func with(attr string, v any) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(goodLine), &m)
	if v == nil {
		delete(m, attr)
	} else {
		m[attr] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Each bad input must fail with an error naming the file, the line, the
// field and the value, and nothing may be returned.
func TestReadJobsRejectsBadInput(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string // substrings of the error
	}{
		{"unknown workload class", []string{with(AttrWorkloadClass, "vacuum")},
			[]string{"jobs.jsonl:1", "workload_class", `"vacuum"`, "unknown workload class", "etl, refresh"}},
		{"runtime zero", []string{with(AttrRuntime, 0)}, []string{"jobs.jsonl:1", AttrRuntime, `"0"`, "positive"}},
		{"runtime negative", []string{with(AttrRuntime, -5)}, []string{AttrRuntime, `"-5"`}},
		{"runtime beyond a week", []string{with(AttrRuntime, 9223372036854775807)}, []string{AttrRuntime, "longer than a week"}},
		{"runtime not a whole number", []string{with(AttrRuntime, 2.5)}, []string{AttrRuntime, "2.5", "whole number"}},
		{"malformed window", []string{with(AttrRequestedWindow, "1am")}, []string{AttrRequestedWindow, `"1am"`, "HH:MM"}},
		{"window outside the batch window", []string{with(AttrRequestedWindow, "06:00")},
			[]string{AttrRequestedWindow, `"06:00"`, "outside the batch window 01:00-05:00"}},
		{"malformed date", []string{with(AttrBatchDate, "2026-13-01")}, []string{AttrBatchDate, `"2026-13-01"`, "YYYY-MM-DD"}},
		{"duplicate job_id", []string{goodLine, goodLine}, []string{"jobs.jsonl:2", AttrJobID, "duplicate", "line 1"}},
		{"sort key mismatch", []string{with(AttrWindowJobID, "02:00#JOB-20260513-001")},
			[]string{AttrWindowJobID, "02:00#JOB-20260513-001", "set it to 01:00#JOB-20260513-001"}},
		{"missing attribute", []string{with(AttrPriority, nil)}, []string{"jobs.jsonl:1", "priority", "missing attribute"}},
		{"malformed job id", []string{with(AttrJobID, "JOB-1")}, []string{AttrJobID, `"JOB-1"`}},
		{"job id of another night", []string{with(AttrJobID, "JOB-20260514-001")}, []string{AttrJobID, "does not match batch_date"}},
		{"bad timestamp", []string{with(AttrSubmittedAt, "yesterday")}, []string{AttrSubmittedAt, "RFC 3339"}},
		{"wrong type", []string{with(AttrExclusive, "no")}, []string{AttrExclusive, "true or false"}},
		{"not JSON", []string{goodLine, "{oops"}, []string{"jobs.jsonl:2", "not a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, err := ReadJobs(strings.NewReader(strings.Join(tt.lines, "\n")), "jobs.jsonl", DefaultWindow)
			if err == nil {
				t.Fatalf("no error; got %d jobs", len(jobs))
			}
			if jobs != nil {
				t.Errorf("returned %d jobs alongside the error: nothing may be half-loaded", len(jobs))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestReadJobsReportsSeveralProblemsAtOnce(t *testing.T) {
	in := strings.Join([]string{with(AttrRuntime, 0), goodLine, with(AttrWorkloadClass, "x")}, "\n")
	_, err := ReadJobs(strings.NewReader(in), "f", DefaultWindow)
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v carries no *FieldError", err)
	}
	if !strings.Contains(err.Error(), "f:1") || !strings.Contains(err.Error(), "f:3") {
		t.Errorf("error %q should name lines 1 and 3", err)
	}
}

func TestSampleNightsMatchSpec(t *testing.T) {
	nights, err := SampleNights()
	if err != nil {
		t.Fatal(err)
	}
	// Counts and totals from SPEC.md's lists.
	want := map[string]struct{ jobs, runtime, exclusive int }{
		"2026-05-11": {8, 210, 2}, "2026-05-12": {9, 262, 2}, "2026-05-13": {10, 270, 2}, "2026-05-14": {12, 620, 5},
	}
	if len(nights) != len(want) {
		t.Fatalf("%d nights, want %d", len(nights), len(want))
	}
	for _, n := range nights {
		s := n.Summarize()
		w := want[n.BatchDate]
		if s.Jobs != w.jobs || s.TotalRuntimeMinutes != w.runtime || s.ExclusiveJobs != w.exclusive {
			t.Errorf("%s: %d jobs, %d runtime minutes, %d exclusive; want %+v", n.BatchDate, s.Jobs, s.TotalRuntimeMinutes, s.ExclusiveJobs, w)
		}
		if _, err := NewNight(n.BatchDate, n.Window, n.Jobs); err != nil {
			t.Errorf("%s: %v", n.BatchDate, err)
		}
	}
	// submitted_at rule: hour(window)−1 (at least 0) : (seq·7) mod 60.
	n, _ := SampleNight("2026-05-13")
	if got := n.Jobs[9].SubmittedAt; got != "2026-05-13T02:10:00Z" {
		t.Errorf("job 10 submitted_at = %s, want 2026-05-13T02:10:00Z (03:00 window → hour 2, 70 mod 60 = 10)", got)
	}
	if _, err := SampleNight("2026-01-01"); err == nil || !strings.Contains(err.Error(), "2026-05-13") {
		t.Errorf("unknown sample night: error %v should list the sample nights", err)
	}
}

// Summary and Params by hand for the stable night: 10 jobs over 4 hours →
// lambda 2.5/h; runtimes sum to 270 → mean 27 min → mu = 60/27 = 2.2222/h;
// c = 3 → rho = 2.5/(3·2.2222) = 0.375.
func TestSummaryAndParams(t *testing.T) {
	n, _ := SampleNight("2026-05-13")
	s := n.Summarize()
	if fmt.Sprint(s.PerWindow) != "[{01:00 4} {02:00 3} {03:00 3}]" {
		t.Errorf("per window %v", s.PerWindow)
	}
	if fmt.Sprint(s.PerClass) != "[{etl 5} {refresh 3} {backfill 1} {index_maintenance 1}]" {
		t.Errorf("per class %v", s.PerClass)
	}
	if s.HighPriorityJobs != 2 || s.ExclusiveJobs != 2 || s.MeanRuntimeMinutes != 27 || s.ExclusiveRuntimeMinutes != 85 {
		t.Errorf("summary %+v", s)
	}
	p, err := n.Params(3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Lambda != 2.5 || fmt.Sprintf("%.6f", p.Mu) != "2.222222" || fmt.Sprintf("%.6f", p.Rho) != "0.375000" {
		t.Errorf("params %+v", p)
	}
	if _, err := n.Params(0); err == nil {
		t.Error("0 workers: no error")
	}
	if _, err := (Night{BatchDate: "2026-05-13", Window: DefaultWindow}).Params(3); err == nil {
		t.Error("empty night: no error")
	}
}

func TestLoadFileNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "night.jsonl")
	if err := os.WriteFile(path, []byte(goodLine+"\n"+with(AttrRuntime, 0)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path, DefaultWindow)
	if err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Errorf("error %v should name %s:2", err, path)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.jsonl"), DefaultWindow); err == nil {
		t.Error("missing file: no error")
	}
}

// FuzzReadJobs: whatever the input, ReadJobs returns either valid jobs or an
// error, never both, and never panics; every job it accepts passes Validate.
func FuzzReadJobs(f *testing.F) {
	f.Add(data.SampleNights)
	f.Add([]byte(goodLine))
	f.Add([]byte(with(AttrRuntime, 1e300)))
	f.Add([]byte("{}\n\n{\"batch_date\":null}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		jobs, err := ReadJobs(bytes.NewReader(in), "fuzz", DefaultWindow)
		if err != nil && jobs != nil {
			t.Fatal("jobs and an error")
		}
		for _, j := range jobs {
			if verr := j.Validate(DefaultWindow); verr != nil {
				t.Fatalf("accepted an invalid job: %v", verr)
			}
		}
	})
}

func ExampleSampleNight() {
	n, err := SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := n.Params(3)
	fmt.Printf("%s: %d jobs, lambda %.2f/h, mu %.2f/h, rho %.3f with 3 workers\n", n.BatchDate, len(n.Jobs), p.Lambda, p.Mu, p.Rho)
	// Output: 2026-05-13: 10 jobs, lambda 2.50/h, mu 2.22/h, rho 0.375 with 3 workers
}

func ExampleReadJobs() {
	bad := `{"batch_date":"2026-05-13","window_job_id":"01:00#JOB-20260513-001","job_id":"JOB-20260513-001","requested_window":"01:00","submitted_at":"2026-05-13T00:07:00Z","workload_class":"vacuum","estimated_runtime_minutes":25,"priority":2,"requires_exclusive_lock":false,"status":"queued"}`
	_, err := ReadJobs(strings.NewReader(bad), "tonight.jsonl", DefaultWindow)
	fmt.Println(err)
	// Output: tonight.jsonl:1: field workload_class = "vacuum": unknown workload class; use one of etl, refresh, backfill, index_maintenance
}
