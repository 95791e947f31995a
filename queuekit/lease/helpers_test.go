package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// setup seeds a catalog table of the test's own with jobs and returns an
// executor on it; both tables are deleted when the test ends.
func setup(t testing.TB, jobs []queuekit.Job, opts ...catalog.Option) (*lease.Executor, *catalog.Catalog) {
	t.Helper()
	cat := ddbtest.Catalog(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if len(jobs) > 0 {
		if _, err := cat.Seed(ctx, jobs); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ex.DeleteTable(ctx); err != nil {
			t.Errorf("delete %s: %v", ex.Table(), err)
		}
	})
	return ex, cat
}

func sample(t *testing.T, date string) queuekit.Night {
	t.Helper()
	n, err := queuekit.SampleNight(date)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
