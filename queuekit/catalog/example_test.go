package catalog_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// The examples reach DynamoDB Local through AWS_ENDPOINT_URL_DYNAMODB, as a
// notebook does (TestMain sets it); each uses a table of its own, with a
// random suffix so that two runs sharing a server do not collide.

// exampleTable returns a fresh table name such as "example_seed_3f2a1c9e".
func exampleTable(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + "_" + hex.EncodeToString(b[:])
}

func ExampleCatalog_Seed() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := catalog.New(ctx, catalog.WithTable(exampleTable("example_seed")))
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
	rep, err := cat.Seed(ctx, jobs, catalog.WithProgress(func(p queuekit.Progress) {
		if p.Done == p.Total {
			fmt.Printf("progress: %d/%d\n", p.Done, p.Total)
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
	cat, err := catalog.New(ctx, catalog.WithTable(exampleTable("example_query_night")))
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

// A table keyed by job_id alone answers "get job X" with one GetItem, but
// reading a night takes a Scan of the whole table.
func ExampleWithKeySchema() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	poor, err := catalog.New(ctx, catalog.WithTable(exampleTable("example_by_job_id")), catalog.WithKeySchema(catalog.KeyByJobID))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer poor.DeleteTable(ctx)
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := poor.CreateTable(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := poor.Seed(ctx, jobs); err != nil {
		fmt.Println(err)
		return
	}
	j, err := poor.GetJob(ctx, "JOB-20260513-007")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(j.JobID, j.WorkloadClass, j.RuntimeMinutes)
	_, rep, err := poor.ScanNight(ctx, "2026-05-13", "", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("night by Scan: returned %d, scanned %d\n", rep.Count, rep.ScannedCount)
	// Output:
	// JOB-20260513-007 index_maintenance 35
	// night by Scan: returned 10, scanned 39
}
