package results_test

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/results"
)

// A sleeper (token 1) wakes up after a rescuer (token 3) has written the
// job's result: the store refuses the sleeper's late write.
func ExampleStore_Put() {
	ctx := context.Background()
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	cat, err := catalog.New(ctx, catalog.WithEndpoint(ep), catalog.WithTable("example_results_put"))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := results.Open(ctx, cat)
	if err == nil {
		err = s.CreateTable(ctx)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.DeleteTable(ctx)
	_ = s.Put(ctx, results.Result{BatchDate: "2031-01-01", JobID: "JOB-20310101-001", Token: 3, Worker: "rescuer", Attempt: 2, Value: "42 rows"})
	err = s.Put(ctx, results.Result{BatchDate: "2031-01-01", JobID: "JOB-20310101-001", Token: 1, Worker: "sleeper", Attempt: 1, Value: "41 rows"})
	fmt.Println(err)
	r, _, _ := s.Get(ctx, "2031-01-01", "JOB-20310101-001")
	fmt.Println("stored:", r.Value, "from", r.Worker)
	// Output:
	// result of job JOB-20310101-001 from worker sleeper (attempt 1, token 1) refused: the store holds the result of worker rescuer (attempt 2, token 3), a newer token
	// stored: 42 rows from rescuer
}
