package catalog_test

import (
	"testing"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// Every sample item is under 1 KB, so each put is one write unit (a write
// unit covers 1 KB) whether it travels in a BatchWriteItem of 25 or alone:
// batching saves requests, not units. 39 items: 2 batches of 25 and 14,
// against 39 PutItem requests; 39 write units either way.
func TestBatchingSavesRequestsNotWriteUnits(t *testing.T) {
	jobs := sampleJobs(t)
	batched := ddbtest.Catalog(t)
	b, err := batched.Seed(ctxT(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	single := ddbtest.Catalog(t)
	s, err := single.PutEach(ctxT(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(jobs))
	if b.WriteUnits != n || s.WriteUnits != n {
		t.Errorf("write units: BatchWriteItem %v, PutItem %v; want %v each (one per item under 1 KB)", b.WriteUnits, s.WriteUnits, n)
	}
	if want := (len(jobs) + catalog.BatchSize - 1) / catalog.BatchSize; b.Requests != want || s.Requests != len(jobs) {
		t.Errorf("requests: BatchWriteItem %d, PutItem %d; want %d and %d", b.Requests, s.Requests, want, len(jobs))
	}
	if b.IndexWriteUnits != 0 {
		t.Errorf("index write units %v on a table without an index, want 0", b.IndexWriteUnits)
	}
	// 39 units at $0.625 per million.
	if got, want := b.Cost(), n*0.625/1e6; got != want {
		t.Errorf("cost %v, want %v", got, want)
	}
}

// With the job_id index every put is written twice, to the table and to the
// index (all attributes projected): twice the write units. The lookup by id
// is then one Query of the index reading one item (0.5 RCU, eventually
// consistent, under 4 KB), where without the index it is a Query of the
// whole night with a filter: the night's 10 items read (10 × ~0.3 KB, one
// 4 KB block: 0.5 RCU too, but ScannedCount 10).
func TestJobIndexDoublesWritesAndReadsOneItem(t *testing.T) {
	jobs := sampleJobs(t)
	idx := ddbtest.Catalog(t, catalog.WithJobIndex())
	rep, err := idx.Seed(ctxT(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(jobs))
	if rep.WriteUnits != 2*n || rep.IndexWriteUnits != n {
		t.Errorf("write units %v (index %v), want %v (index %v): one for the table and one for the index per item", rep.WriteUnits, rep.IndexWriteUnits, 2*n, n)
	}
	j, r, err := idx.LookupJob(ctxT(t), "JOB-20260513-007")
	if err != nil {
		t.Fatal(err)
	}
	if j.JobID != "JOB-20260513-007" || r.Method != "Query "+catalog.JobIndex || r.Count != 1 || r.ScannedCount != 1 || r.ConsumedRCU != 0.5 {
		t.Errorf("lookup through the index: job %s, report %+v; want the job, 1 of 1 scanned, 0.5 RCU", j.JobID, r)
	}
	plain := ddbtest.Catalog(t)
	if _, err := plain.Seed(ctxT(t), jobs); err != nil {
		t.Fatal(err)
	}
	_, r, err = plain.LookupJob(ctxT(t), "JOB-20260513-007")
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "Query + filter" || r.Count != 1 || r.ScannedCount != 10 {
		t.Errorf("lookup without the index: %+v; want 1 of 10 scanned (the whole night)", r)
	}
	// A table created without the index is refused by a catalog that wants it.
	again, err := catalog.New(ctxT(t), catalog.WithEndpoint(plain.Endpoint()), catalog.WithTable(plain.Table()), catalog.WithJobIndex())
	if err != nil {
		t.Fatal(err)
	}
	if err := again.CreateTable(ctxT(t)); err == nil {
		t.Errorf("CreateTable with WithJobIndex on a table without the index: no error")
	}
}

// A Scan reads at most 1 MB before it filters: with 1 KB items a year of
// nights is several pages, and the pages that hold none of the night's
// items return nothing yet carry a LastEvaluatedKey.
func TestScanPagesCanBeEmptyAndHaveANextPage(t *testing.T) {
	c := ddbtest.Catalog(t)
	jobs, err := workload.Generate(workload.Config{Nights: 120, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seed(ctxT(t), jobs, catalog.WithPadding(4096)); err != nil {
		t.Fatal(err)
	}
	_, rep, err := c.ScanNight(ctxT(t), jobs[0].BatchDate, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PerPage) != rep.Pages || rep.Pages < 3 {
		t.Fatalf("%d pages, %d described; want at least 3 pages for %d items of 4 KB", rep.Pages, len(rep.PerPage), len(jobs))
	}
	if rep.EmptyPagesWithMore() == 0 {
		t.Errorf("no empty page with a next page among %+v", rep.PerPage)
	}
	last := rep.PerPage[len(rep.PerPage)-1]
	if last.More {
		t.Errorf("last page says there is more: %+v", last)
	}
	sum := 0
	for _, p := range rep.PerPage {
		sum += p.ScannedCount
	}
	if sum != len(jobs) || rep.ScannedCount != len(jobs) {
		t.Errorf("pages scanned %d in all (report %d), want every item: %d", sum, rep.ScannedCount, len(jobs))
	}
}
