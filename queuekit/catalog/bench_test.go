package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// BenchmarkSeed100k writes 100,000 generated items into a fresh table of
// DynamoDB Local, once with BatchWriteItem (Seed: 25 items a request, 4
// writers) and once with one PutItem after another (PutEach). Run it with
//
//	go test -run '^$' -bench Seed100k -benchtime 1x ./queuekit/catalog/
//
// and compare the items/s of the two; docs/bench-dynamodb.md has figures.
func BenchmarkSeed100k(b *testing.B) {
	const n = 100_000
	jobs, err := workload.Generate(workload.Config{Start: "2000-01-01", Nights: n / 8, Seed: 100})
	if err != nil {
		b.Fatal(err)
	}
	jobs = jobs[:n]
	for _, bc := range []struct {
		name  string
		write func(ctx context.Context, c *catalog.Catalog) (catalog.SeedReport, error)
	}{
		{"BatchWriteItem", func(ctx context.Context, c *catalog.Catalog) (catalog.SeedReport, error) { return c.Seed(ctx, jobs) }},
		{"PutItem", func(ctx context.Context, c *catalog.Catalog) (catalog.SeedReport, error) { return c.PutEach(ctx, jobs) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var items int
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				c := ddbtest.Catalog(b)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				b.StartTimer()
				rep, err := bc.write(ctx, c)
				b.StopTimer()
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				items += rep.Items
				elapsed += rep.Elapsed
				if err := c.DeleteTable(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(items)/elapsed.Seconds(), "items/s")
		})
	}
}
