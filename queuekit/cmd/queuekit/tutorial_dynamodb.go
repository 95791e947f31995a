package main

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// dynamoSource reads each night from the job catalog with Query
// (batch_date = :d, and begins_with on the sort key for --window) and notes
// the read capacity it consumed. It opens one catalog client, on the first
// night, and reads every scenario through it.
func dynamoSource(df *dynamoFlags) nightSource {
	var c *catalog.Catalog
	return func(ctx context.Context, date, window string) (queuekit.Night, string, error) {
		if c == nil {
			var err error
			if c, err = df.open(ctx); err != nil {
				return queuekit.Night{}, "", err
			}
		}
		n, rep, err := c.QueryNight(ctx, date, window)
		if err != nil {
			return queuekit.Night{}, "", err
		}
		if len(n.Jobs) == 0 {
			return queuekit.Night{}, "", fmt.Errorf("%s has no jobs for night %s%s: seed it with: go run ./queuekit/cmd/queuekit seed --sample",
				describeTarget(c), date, inWindow(window))
		}
		note := fmt.Sprintf("Read from %s with Query: %d items returned, %d scanned, %.1f read units, %d page(s), %d ms.",
			describeTarget(c), rep.Count, rep.ScannedCount, rep.ConsumedRCU, rep.Pages, rep.Elapsed.Milliseconds())
		return n, note, nil
	}
}

func inWindow(w string) string {
	if w == "" {
		return ""
	}
	return " in window " + w
}
