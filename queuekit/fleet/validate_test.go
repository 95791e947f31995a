package fleet_test

import (
	"errors"
	"testing"

	"github.com/nightqueue/workshop/queuekit/fleet"
)

// A schedule that would give a negative or absurd due_at (before 2000,
// after 9999, not RFC 3339), or a repeat_until before the schedule, is an
// input error naming the field, found before anything is written.
func TestBadSchedulesAreInputErrors(t *testing.T) {
	ok := fleet.Job{UserID: "u", JobID: "j", JobType: "report", ScheduledAt: "2026-11-23T20:00:00Z", IntervalS: 60}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good job: %v", err)
	}
	for _, c := range []struct{ at, until, field string }{
		{"0001-01-01T00:00:00Z", "", "scheduled_job_execution_time"},
		{"1969-12-31T23:59:59Z", "", "scheduled_job_execution_time"},
		{"tomorrow", "", "scheduled_job_execution_time"},
		{"2026-11-23T20:00:00Z", "0001-01-01T00:00:00Z", "repeat_until"},
		{"2026-11-23T20:00:00Z", "2026-11-23T19:00:00Z", "repeat_until"},
	} {
		j := ok
		j.ScheduledAt, j.RepeatUntil = c.at, c.until
		var ie *fleet.InputError
		if err := j.Validate(); !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("at %q until %q: %v, want an input error on %s", c.at, c.until, err, c.field)
		}
	}
}
