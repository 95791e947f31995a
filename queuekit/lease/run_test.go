package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

func TestStableNightInProcess(t *testing.T) {
	n := sample(t, "2026-05-13")
	ex, _ := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := ex.Run(ctx, n, lease.Config{Workers: 3, Policy: sim.Barrier}, 3, nil, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, e := range rep.Schedule {
		t.Logf("%s a%d start %.2f finish %.2f w%v", e.JobID, e.Attempt, e.Start, e.Finish, e.WorkerIDs)
	}
	for _, s := range rep.Forecast.Schedule {
		t.Logf("sim %s start %.2f finish %.2f", s.ID, s.Start, s.Finish)
	}
	t.Logf("won %d lost %d elapsed %s statuses %v", rep.Won, rep.Lost, rep.Elapsed, rep.Statuses)
}
