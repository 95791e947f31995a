package access_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// The sample night 2026-05-13: 10 jobs of about 300 bytes, 2 of them
// exclusive, 3 in the 02:00 window; all of it fits in one 4 KB block.
// Expected read units (eventually consistent = ½ per 4 KB, rounded up per
// item for GetItem and per response for Query):
//
//	Query                      0.5 (one 4 KB block for all 10 items)
//	Query, ConsistentRead      1.0
//	GetItem × 10               5.0 (each item rounded up to 4 KB: 10 × 0.5)
//	Query + filter             0.5, 2 returned of 10 scanned, fewer bytes
//	Query of the 02:00 window  0.5, 3 of 3
func TestNightReadsMeasureRoundingConsistencyAndFilters(t *testing.T) {
	c := ddbtest.Catalog(t)
	if _, err := c.Seed(ctxFor(t), sampleJobs(t)); err != nil {
		t.Fatal(err)
	}
	reads, err := access.NightReads(ctxFor(t), "2026-05-13", "02:00", catalog.WithEndpoint(c.Endpoint()), catalog.WithTable(c.Table()))
	if err != nil {
		t.Fatal(err)
	}
	if len(reads) != 5 {
		t.Fatalf("%d reads, want 5", len(reads))
	}
	want := []struct {
		requests, returned, scanned int
		rcu                         float64
	}{{1, 10, 10, 0.5}, {1, 10, 10, 1}, {10, 10, 10, 5}, {1, 2, 10, 0.5}, {1, 3, 3, 0.5}}
	for i, w := range want {
		r := reads[i]
		if r.Requests != w.requests || r.Report.Count != w.returned || r.Report.ScannedCount != w.scanned || r.Report.ConsumedRCU != w.rcu {
			t.Errorf("%s: %d requests, %d of %d, %v RCU; want %d, %d of %d, %v", r.Label, r.Requests, r.Report.Count, r.Report.ScannedCount,
				r.Report.ConsumedRCU, w.requests, w.returned, w.scanned, w.rcu)
		}
		if r.ResponseBytes <= 0 {
			t.Errorf("%s: %d response bytes counted", r.Label, r.ResponseBytes)
		}
	}
	// The filter saves no capacity but does save transfer: 2 items back, not 10.
	if f, q := reads[3].ResponseBytes, reads[0].ResponseBytes; f >= q/2 {
		t.Errorf("filtered Query returned %d bytes, unfiltered %d: want well under half", f, q)
	}
}

func TestKeyAttributesCannotBeUpdated(t *testing.T) {
	c := ddbtest.Catalog(t)
	if _, err := c.Seed(ctxFor(t), sampleJobs(t)); err != nil {
		t.Fatal(err)
	}
	err := access.UpdateKey(ctxFor(t), c, "2026-05-13", "01:00#JOB-20260513-003", "02:00#JOB-20260513-003")
	var ve interface{ ErrorCode() string }
	if !errors.As(err, &ve) || ve.ErrorCode() != "ValidationException" || !strings.Contains(err.Error(), "key") {
		t.Fatalf("updating the sort key: %v; want DynamoDB's ValidationException about the key", err)
	}
	if _, _, err := c.GetByKey(ctxFor(t), "2026-05-13", "01:00#JOB-20260513-003"); err != nil {
		t.Errorf("the item moved or vanished: %v", err)
	}
}

func sampleJobs(t *testing.T) []queuekit.Job {
	t.Helper()
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// 39 sample items of about 300 bytes plus 1 KB of padding are 2 KB each:
// 2 write units per item, 78 in all, for 2 BatchWriteItem requests of 25
// and 14 or for 39 PutItem requests.
func TestWriteCostsBatchingSavesRequestsNotUnits(t *testing.T) {
	jobs := sampleJobs(t)
	tmp := ddbtest.NewCatalog(t, catalog.WithTable(access.WritesTable))
	batch, single, err := access.WriteCosts(ctxFor(t), jobs, 1024, catalog.WithEndpoint(tmp.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}
	n := len(jobs)
	if batch.Requests != 2 || single.Requests != n {
		t.Errorf("requests %d and %d, want 2 and %d", batch.Requests, single.Requests, n)
	}
	if batch.WriteUnits != float64(2*n) || single.WriteUnits != batch.WriteUnits {
		t.Errorf("write units %v and %v, want %d each", batch.WriteUnits, single.WriteUnits, 2*n)
	}
}

// First write of the 39 sample items (each under 1 KB): 39 units for the
// table and 39 for the index. Writing the same items again: 39 for the
// table, 0 for the index (measured on DynamoDB Local: nothing it holds
// changed).
func TestJobIndexWritesTwiceThenOnlyTheTable(t *testing.T) {
	jobs := sampleJobs(t)
	tmp := ddbtest.NewCatalog(t, catalog.WithTable(access.JobIndexTable))
	first, again, err := access.JobIndexWrites(ctxFor(t), jobs, catalog.WithEndpoint(tmp.Endpoint()))
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(jobs))
	if first.WriteUnits != 2*n || first.IndexWriteUnits != n || again.WriteUnits != n || again.IndexWriteUnits != 0 {
		t.Errorf("first %v (index %v), again %v (index %v); want %v (%v), %v (0)", first.WriteUnits, first.IndexWriteUnits,
			again.WriteUnits, again.IndexWriteUnits, 2*n, n, n)
	}
}
