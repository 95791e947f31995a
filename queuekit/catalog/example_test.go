package catalog_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// The examples reach DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB, as a
// notebook does (TestMain sets it); each uses a table of its own.

func ExampleCatalog_Seed() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := catalog.New(ctx, catalog.WithTable("example_seed"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.DeleteTable(ctx)
	if err := cat.CreateTable(ctx); err != nil {
		fmt.Println(err)
		return
	}
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := cat.Seed(ctx, jobs, catalog.WithProgress(func(done, total int) {
		if done == total {
			fmt.Printf("progress: %d/%d\n", done, total)
		}
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("items written:", rep.Items)
	// Output:
	// progress: 39/39
	// items written: 39
}

func ExampleCatalog_QueryNight() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := catalog.New(ctx, catalog.WithTable("example_query_night"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cat.DeleteTable(ctx)
	jobs, _ := queuekit.SampleJobs()
	if err := cat.CreateTable(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := cat.Seed(ctx, jobs); err != nil {
		fmt.Println(err)
		return
	}

	night, rep, err := cat.QueryNight(ctx, "2026-05-13", "02:00")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range night.Jobs {
		fmt.Println(j.WindowJobID, j.WorkloadClass, j.RuntimeMinutes)
	}
	fmt.Printf("returned %d, scanned %d, pages %d\n", rep.Count, rep.ScannedCount, rep.Pages)

	_, scan, err := cat.ScanNight(ctx, "2026-05-13", "02:00", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("scan: returned %d, scanned %d\n", scan.Count, scan.ScannedCount)
	// Output:
	// 02:00#JOB-20260513-005 etl 25
	// 02:00#JOB-20260513-006 refresh 20
	// 02:00#JOB-20260513-007 index_maintenance 35
	// returned 3, scanned 3, pages 1
	// scan: returned 3, scanned 39
}
