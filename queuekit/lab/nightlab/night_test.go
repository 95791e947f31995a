package nightlab

import (
	"context"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// Night reads the stable night from a real DynamoDB Local with Query, and
// an unseeded night says how to seed.
func TestNightReadsWithQuery(t *testing.T) {
	cat := ddbtest.Catalog(t)
	ctx := context.Background()
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Seed(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	opts := []catalog.Option{catalog.WithEndpoint(cat.Endpoint()), catalog.WithTable(cat.Table())}
	n, rep, err := Night(ctx, "2026-05-13", opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Jobs) != 10 || rep.Method != "Query" || rep.ScannedCount != 10 {
		t.Errorf("%d jobs by %s scanning %d, want 10 by Query scanning 10", len(n.Jobs), rep.Method, rep.ScannedCount)
	}
	if _, _, err := Night(ctx, "2030-01-01", opts...); err == nil || !strings.Contains(err.Error(), "seed --sample") {
		t.Errorf("empty night: error %v should say how to seed", err)
	}
}
