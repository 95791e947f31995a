package queuekit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nightqueue/workshop/data"
)

// MaxReportedErrors caps how many input problems one load reports at once.
const MaxReportedErrors = 10

// ReadJobs reads job items in JSON Lines form (one JSON object per line, the
// catalog's attribute names) from r. source names the input in errors, e.g.
// the file name. Every job is validated for window w; job ids must be unique.
// On any problem ReadJobs returns no jobs and an error listing up to
// MaxReportedErrors problems, each naming source, line, field and value.
func ReadJobs(r io.Reader, source string, w Window) ([]Job, error) {
	br := bufio.NewReader(r)
	var (
		jobs []Job
		errs []error
		seen = map[string]int{}
		line int
	)
	for {
		raw, rerr := br.ReadBytes('\n')
		if len(raw) > 0 {
			line++
			if text := bytes.TrimSpace(raw); len(text) > 0 {
				loc := fmt.Sprintf("%s:%d", source, line)
				j, err := parseJobLine(text)
				if err == nil {
					err = j.Validate(w)
				}
				if err == nil {
					if first, dup := seen[j.JobID]; dup {
						err = &FieldError{Field: AttrJobID, Value: fmt.Sprintf("%q", j.JobID),
							Problem: fmt.Sprintf("duplicate job_id (first on line %d)", first),
							Fix:     "give each job its own sequence number"}
					} else {
						seen[j.JobID] = line
					}
				}
				if err != nil {
					errs = append(errs, locate(err, loc))
				} else {
					jobs = append(jobs, j)
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("%s: line %d: %w", source, line+1, rerr)
		}
		if len(errs) >= MaxReportedErrors {
			errs = append(errs, fmt.Errorf("%s: stopped after %d problems; fix these first", source, len(errs)))
			break
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return jobs, nil
}

// locate sets the location of a *FieldError, or prefixes any other error.
func locate(err error, loc string) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.Location = loc
		return fe
	}
	return fmt.Errorf("%s: %w", loc, err)
}

// parseJobLine decodes one JSON object into a Job, checking that every
// required attribute is present and has the right JSON type.
func parseJobLine(text []byte) (Job, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(text, &fields); err != nil {
		return Job{}, fmt.Errorf("not a JSON object (%v); each line must be one job item such as %s", err, exampleItem)
	}
	var missing []string
	for _, a := range RequiredAttributes {
		if v, ok := fields[a]; !ok || string(v) == "null" {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return Job{}, &FieldError{Field: strings.Join(missing, ", "), Problem: "missing attribute",
			Fix: "every job item needs " + strings.Join(RequiredAttributes, ", ")}
	}
	var j Job
	targets := map[string]any{
		AttrBatchDate: &j.BatchDate, AttrWindowJobID: &j.WindowJobID, AttrJobID: &j.JobID,
		AttrRequestedWindow: &j.RequestedWindow, AttrSubmittedAt: &j.SubmittedAt,
		AttrWorkloadClass: &j.WorkloadClass, AttrRuntime: &j.RuntimeMinutes, AttrPriority: &j.Priority,
		AttrExclusive: &j.RequiresExclusiveLock, AttrStatus: &j.Status,
	}
	for _, a := range RequiredAttributes {
		if err := json.Unmarshal(fields[a], targets[a]); err != nil {
			return Job{}, &FieldError{Field: a, Value: string(fields[a]), Problem: "wrong type: want " + attrKind(a),
				Fix: "see " + data.SampleNightsFile + " for the format"}
		}
	}
	return j, nil
}

const exampleItem = `{"batch_date":"2026-05-13","window_job_id":"01:00#JOB-20260513-001",...}`

func attrKind(a string) string {
	switch a {
	case AttrRuntime, AttrPriority:
		return "a whole number"
	case AttrExclusive:
		return "true or false"
	}
	return "a string"
}

// LoadFile reads and validates a JSON Lines file of jobs.
func LoadFile(path string, w Window) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open job file: %w", err)
	}
	defer f.Close()
	return ReadJobs(f, path, w)
}

// SampleJobs returns the embedded sample nights' jobs (data/sample_nights.jsonl).
func SampleJobs() ([]Job, error) {
	return ReadJobs(bytes.NewReader(data.SampleNights), data.SampleNightsFile, DefaultWindow)
}

// SampleNight returns one embedded sample night by batch date (YYYY-MM-DD).
func SampleNight(batchDate string) (Night, error) {
	nights, err := SampleNights()
	if err != nil {
		return Night{}, err
	}
	var dates []string
	for _, n := range nights {
		if n.BatchDate == batchDate {
			return n, nil
		}
		dates = append(dates, n.BatchDate)
	}
	return Night{}, fmt.Errorf("no sample night %q; the sample nights are %s", batchDate, strings.Join(dates, ", "))
}

// SampleNights returns all embedded sample nights in date order.
func SampleNights() ([]Night, error) {
	jobs, err := SampleJobs()
	if err != nil {
		return nil, err
	}
	return GroupNights(jobs, DefaultWindow), nil
}
