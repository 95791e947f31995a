package limits_test

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/lease/poolrules"
	"github.com/nightqueue/workshop/queuekit/limits"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// What the night executor does when its pool item is held by another
// transaction: every claim and every end is a TransactWriteItems on the
// night's POOL item, so two of them in flight at once conflict, and on AWS
// the later one is cancelled with TransactionConflict
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
// Through the layer, with each transaction held 25 ms so that they
// overlap, the executor still ends every job exactly once, after one
// attempt, within the pool's rules (poolrules.Check), and the layer
// counts the conflicts it answered: lease reads a conflict-cancelled claim
// as a lost race (fence.Conflict) and claims again, and an end cancelled
// by a conflict is sent again.
func TestNightExecutorSurvivesPoolConflicts(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := limits.Start(context.Background(), ep, "", limits.WithTransactionHold(holdForTest))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() }) // after the tables' cleanups, which run first
	n, err := queuekit.SampleNight("2026-05-11")
	if err != nil {
		t.Fatal(err)
	}
	cat := ddbtest.Catalog(t, catalog.WithEndpoint(s.URL))
	if _, err := cat.Seed(ctx, n.Jobs); err != nil {
		t.Fatalf("seed: %v", err)
	}
	ex, err := lease.New(cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.DeleteTable(context.Background()) })
	const c = 4
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: lease.Config{Workers: c, Policy: sim.Barrier, Minute: 10 * time.Millisecond, MaxRetry: lease.DefaultMaxRetry}, Slots: c})
	if err != nil {
		t.Fatalf("run through the layer: %v; layer counters %+v", err, limits.Totals(s.Stats(), ex.Table(), ""))
	}
	if err := poolrules.Check(n, rep.Schedule, c, sim.Barrier); err != nil {
		t.Fatalf("pool rules broken:\n%v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || len(rep.Schedule) != len(n.Jobs) {
		t.Fatalf("statuses %v, %d attempts; want %d jobs each SUCCESS after one attempt", rep.Statuses, len(rep.Schedule), len(n.Jobs))
	}
	conflicts := limits.Totals(s.Stats(), ex.Table(), "").Throttled["TransactionConflict"]
	if conflicts == 0 {
		t.Fatalf("no transaction conflict on %s: the test did not exercise what it is about", ex.Table())
	}
	t.Logf("%d jobs, %d claims won, %d lost; %d transaction conflicts answered by the layer", len(n.Jobs), rep.Won, rep.Lost, conflicts)
}

// holdForTest keeps each transaction in flight long enough that the
// executor's transactions on the pool item overlap (tens of conflicts a run).
var holdForTest = 15 * time.Millisecond
