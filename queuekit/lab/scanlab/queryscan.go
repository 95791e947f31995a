package scanlab

import (
	"context"

	"github.com/janpfeifer/gonb/cache"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// queryVsScanKey names notebook 02's saved measurement in GoNB's cache.
const queryVsScanKey = "query-vs-scan-rounds"

// QueryVsScanStudy is notebook 02's experiment: a week, a month, a quarter
// and a year of nights, 1 KB items, each read in 5 interleaved rounds
// (Query, Scan, Query, Scan, ...). Progress, when not nil, gets its updates.
func QueryVsScanStudy(progress func(queuekit.Progress)) access.Study {
	return access.Study{Sizes: []int{7, 30, 90, 365}, PadBytes: 1024, Repeats: 5, Progress: progress}
}

// MeasureQueryVsScan runs the experiment with progress and saves its
// points where QueryVsScanPoints finds them (GoNB's cache in the temporary
// directory: a kernel restart keeps them).
func MeasureQueryVsScan(ctx context.Context, progress func(queuekit.Progress)) ([]access.Point, error) {
	ps, err := QueryVsScanStudy(progress).Run(ctx)
	if err != nil {
		return nil, err
	}
	c, err := cache.NewInTmp()
	if err != nil {
		return nil, err
	}
	return ps, c.Save(queryVsScanKey, ps)
}

// QueryVsScanPoints returns the experiment's points as MeasureQueryVsScan
// saved them, or measures them now (a minute or so) when none are saved, so
// a cell that calls it runs on its own after a kernel restart. It stops the
// cell with Stop's one-line error when the measurement fails.
func QueryVsScanPoints(ctx context.Context) []access.Point {
	return cache.CacheWith(cache.MustNewInTmp(), queryVsScanKey, func() []access.Point {
		ps, err := MeasureQueryVsScan(ctx, nil)
		lab.Stop(err)
		return ps
	})
}
