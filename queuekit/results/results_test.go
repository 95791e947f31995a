package results_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/results"
)

func store(t *testing.T, cat *catalog.Catalog) *results.Store {
	t.Helper()
	s, err := results.Open(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DeleteTable(context.Background()) })
	return s
}

// The store's rule, write by write: a first write lands; an older token is
// refused (naming both tokens) and changes nothing; the same token may write
// again; a newer token overwrites.
func TestStoreRefusesStaleToken(t *testing.T) {
	ctx := context.Background()
	s := store(t, ddbtest.NewCatalog(t))
	put := func(token int64, worker string) error {
		return s.Put(ctx, results.Result{BatchDate: "2027-01-01", JobID: "J", Token: token, Worker: worker, Value: worker})
	}
	if err := put(3, "rescuer"); err != nil {
		t.Fatalf("first write: %v", err)
	}
	err := put(1, "sleeper")
	var stale *results.StaleError
	if !errors.Is(err, results.ErrStale) || !errors.As(err, &stale) || stale.Token != 1 || stale.Stored != 3 || stale.StoredWorker != "rescuer" {
		t.Fatalf("write with token 1 over token 3: %v; want a StaleError naming tokens 1 and 3", err)
	}
	if err := put(3, "rescuer"); err != nil {
		t.Fatalf("the same token again (a retried write): %v", err)
	}
	if err := put(5, "later"); err != nil {
		t.Fatalf("a newer token: %v", err)
	}
	r, ok, err := s.Get(ctx, "2027-01-01", "J")
	if err != nil || !ok || r.Token != 5 || r.Value != "later" {
		t.Fatalf("stored %+v ok %v err %v; want token 5 from later", r, ok, err)
	}
}

func night(t *testing.T, date string, n int) queuekit.Night {
	t.Helper()
	var jobs []queuekit.Job
	for i := range n {
		id := fmt.Sprintf("JOB-%s-%03d", date[:4]+date[5:7]+date[8:], i+1)
		jobs = append(jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: queuekit.SortKey("01:00", id),
			RequestedWindow: "01:00", SubmittedAt: date + "T00:00:00Z", WorkloadClass: queuekit.ClassETL, RuntimeMinutes: 1, Status: "queued"})
	}
	nt, err := queuekit.NewNight(date, queuekit.DefaultWindow, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

// The token reaches the store, unique across runs: a night run twice, its
// work writing each job's result through Store.Work, stores in the second
// run tokens newer than the first run's (the run's number is in the token),
// and a write with a first-run token is refused.
func TestTokensReachTheStoreAcrossRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cat := ddbtest.Catalog(t)
	n := night(t, "2027-09-01", 6)
	if _, err := cat.Seed(ctx, n.Jobs); err != nil {
		t.Fatal(err)
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.DeleteTable(context.Background()) })
	s := store(t, cat)
	cfg := lease.RunConfig{Config: lease.Config{Workers: 2, Minute: 10 * time.Millisecond}, Slots: 2, Work: s.Work(n.BatchDate, nil, nil)}
	first := map[string]results.Result{}
	for run := 1; run <= 2; run++ {
		if _, err := ex.Run(ctx, n, cfg); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for _, j := range n.Jobs {
			r, ok, err := s.Get(ctx, n.BatchDate, j.JobID)
			if err != nil || !ok {
				t.Fatalf("run %d: result of %s: ok %v, %v", run, j.JobID, ok, err)
			}
			if run == 1 {
				first[j.JobID] = r
				continue
			}
			if r.Token <= first[j.JobID].Token || r.Run == first[j.JobID].Run {
				t.Fatalf("job %s: run 2 stored token %d of run %s, run 1 token %d of run %s: want a newer token from another run",
					j.JobID, r.Token, r.Run, first[j.JobID].Token, first[j.JobID].Run)
			}
			old := first[j.JobID]
			if err := s.Put(ctx, old); !errors.Is(err, results.ErrStale) {
				t.Fatalf("job %s: a late write of run 1's result (token %d): %v, want refused", j.JobID, old.Token, err)
			}
		}
	}
}

// Sleep's rule, without timing: work whose time has passed is done even if
// its context has ended (a process woken past its lease), and work whose
// time has not passed returns the context's error.
func TestSleepCountsWorkDoneOnceItsTimeHasPassed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := results.Sleep(ctx, lease.Job{}, 0); err != nil {
		t.Fatalf("cancelled context, no time left: %v; want nil (the work is done)", err)
	}
	if err := results.Sleep(ctx, lease.Job{}, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context, an hour left: %v; want context.Canceled", err)
	}
}
