package leaselab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// A night where job 002's first lease expired and its second attempt
// succeeded ended every job once; the sentence names the expiry as a pause,
// and a night with two SUCCESS ends of one job did not end once.
func TestEndedOnceAndLeaseExpiries(t *testing.T) {
	rep := lease.Report{Statuses: map[queuekit.Status]int{queuekit.StatusSuccess: 2}, Schedule: []lease.Entry{
		{Slot: sim.Slot{ID: "JOB-1-001"}, Attempt: 1, Outcome: queuekit.StatusSuccess},
		{Slot: sim.Slot{ID: "JOB-1-002"}, Attempt: 1, Outcome: lease.LeaseExpired},
		{Slot: sim.Slot{ID: "JOB-1-002"}, Attempt: 2, Outcome: queuekit.StatusSuccess},
	}}
	if !EndedOnce(rep, 2) {
		t.Error("a retried job that succeeded once: not ended once")
	}
	if s := LeaseExpiries(rep, 10*time.Second); !strings.Contains(s, "1 lease expired") || !strings.Contains(s, "job 002 (attempt 1)") || !strings.Contains(s, "10 s") {
		t.Errorf("sentence %q", s)
	}
	rep.Schedule = append(rep.Schedule, lease.Entry{Slot: sim.Slot{ID: "JOB-1-001"}, Attempt: 2, Outcome: queuekit.StatusSuccess})
	if EndedOnce(rep, 2) {
		t.Error("a job with two SUCCESS ends counted as ended once")
	}
	if s := LeaseExpiries(lease.Report{}, 2*time.Second); !strings.HasPrefix(s, "No lease expired") {
		t.Errorf("no expiry: %q", s)
	}
}

// The order sentence names the first job out of the forecast's place, and
// says "the forecast's order" only when every start matches.
func TestForecastAgreement(t *testing.T) {
	fc := []sim.Slot{{ID: "J-003"}, {ID: "J-001"}, {ID: "J-007"}}
	rep := lease.Report{Forecast: sim.Result{Schedule: fc}, Realised: sim.Result{Schedule: []sim.Slot{{ID: "J-003"}, {ID: "J-007"}, {ID: "J-001"}}}}
	rep.Forecast.DrainedMinute, rep.Realised.DrainedMinute = 160, 163.5
	s := ForecastAgreement(rep)
	if !strings.Contains(s, "job 007 started 2nd here, 3rd in the forecast") || !strings.Contains(s, "163.5") || !strings.Contains(s, "**160**") {
		t.Errorf("%q", s)
	}
	rep.Realised.Schedule = fc
	if s := ForecastAgreement(rep); !strings.Contains(s, "in the forecast's order") {
		t.Errorf("%q", s)
	}
}

// The sentence notebook 05 prints under the Gantt charts, from a run's
// report: here the real night started job 007 before job 001.
func ExampleForecastAgreement() {
	rep := lease.Report{
		Forecast: sim.Result{Schedule: []sim.Slot{{ID: "J-003"}, {ID: "J-001"}, {ID: "J-007"}}},
		Realised: sim.Result{Schedule: []sim.Slot{{ID: "J-003"}, {ID: "J-007"}, {ID: "J-001"}}},
	}
	rep.Forecast.DrainedMinute, rep.Realised.DrainedMinute = 160, 162.4
	fmt.Println(ForecastAgreement(rep))
	fmt.Println(LeaseExpiries(rep, 10*time.Second))
	// Output:
	// The jobs started **in a different order**: job 007 started 2nd here, 3rd in the forecast (a start a few milliseconds late lets another due job's claim commit first). The night drained at minute **162.4**, the forecast at **160**.
	// No lease expired: every holder's heartbeats landed within its 10 s lease.
}
