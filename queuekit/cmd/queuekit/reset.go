package main

import (
	"context"
	"fmt"
	"io"

	"github.com/nightqueue/workshop/queuekit"
)

func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reset")
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	c, err := df.open(ctx)
	if err != nil {
		return err
	}
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		return err
	}
	if err := c.DeleteTable(ctx); err != nil {
		return err
	}
	rep, err := seedCatalog(ctx, stderr, c, jobs, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reset %s: dropped, recreated, seeded the %d sample jobs\n", describeTarget(c), rep.Items)
	return nil
}
