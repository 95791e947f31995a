package nightlab

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// Night reads one night from the job catalog with Query (batch_date = :d),
// the way every notebook does: the endpoint comes from
// AWS_ENDPOINT_URL_DYNAMODB (the workshop sets it), opts can name another
// table or endpoint. A night with no jobs is an error that says how to seed.
func Night(ctx context.Context, date string, opts ...catalog.Option) (queuekit.Night, catalog.AccessReport, error) {
	cat, err := catalog.New(ctx, opts...)
	if err != nil {
		return queuekit.Night{}, catalog.AccessReport{}, err
	}
	n, rep, err := cat.QueryNight(ctx, date, "")
	if err != nil {
		return queuekit.Night{}, rep, err
	}
	if len(n.Jobs) == 0 {
		return queuekit.Night{}, rep, fmt.Errorf("night %s is not in table %s: run notebook 00 (or `go run ./queuekit/cmd/queuekit seed --sample`)", date, cat.Table())
	}
	return n, rep, nil
}

// MustNight is Night for a notebook cell that needs only the night: it
// reads it with Query from the catalog of AWS_ENDPOINT_URL_DYNAMODB and
// stops the cell with Stop's one-line error if that fails. A cell that calls
// it depends on no declaration of another cell.
func MustNight(date string) queuekit.Night {
	n, _, err := Night(context.Background(), date)
	lab.Stop(err)
	return n
}

// MustCatalog opens the workshop's catalog (db_batch_window_requests at
// AWS_ENDPOINT_URL_DYNAMODB) for a notebook cell, or stops the cell with
// Stop's one-line error. Tables of other demonstrations derive from its name
// (the fleet's is its name + "_fleet"). A cell that calls it depends on no
// declaration of another cell, so it runs after a kernel restart.
func MustCatalog() *catalog.Catalog {
	cat, err := catalog.New(context.Background())
	lab.Stop(err)
	return cat
}

// MustSampleJobs returns the workshop's sample jobs (queuekit.SampleJobs),
// or stops the cell with the error.
func MustSampleJobs() []queuekit.Job {
	jobs, err := queuekit.SampleJobs()
	lab.Stop(err)
	return jobs
}
