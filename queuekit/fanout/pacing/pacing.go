// Package pacing compares fan-out pool sizes against a rate-limited source
// (notebook 07's stampede): the same run of package fanout once per pool
// size, each on fresh queues. It is an experiment on fanout, kept out of it.
package pacing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout"
)

// Row is one run of a pacing comparison.
type Row struct {
	Workers   int
	Elapsed   time.Duration
	Processed int
	Dead      int // healthy slices lost to the dead-letter queue
	Throttled int // source requests refused
	Received  int // messages received (each throttle costs one)
}

// Compare runs the same fan-out once per entry of workers, each with a
// fresh source rate limit (fanout.Limited(src, perSecond, burst)) and fresh queues,
// and reports what each pool size cost. base gives the queues, results
// table, keys, source and retry settings; its Run, Workers and Resume are
// set per row. The queues of every row are deleted at the end.
func Compare(ctx context.Context, base fanout.Config, perSecond float64, burst int, workers []int, progress func(row Row)) ([]Row, error) {
	var rows []Row
	for _, w := range workers {
		cfg := base
		var b [4]byte
		_, _ = rand.Read(b[:])
		cfg.Run = fmt.Sprintf("pace%d-%s", w, hex.EncodeToString(b[:]))
		cfg.Workers, cfg.Resume, cfg.Redrive, cfg.Keep = w, false, false, false
		cfg.Source = fanout.Limited(base.Source, perSecond, burst)
		out, err := fanout.Execute(ctx, cfg)
		if err != nil {
			return rows, fmt.Errorf("pacing with %d workers: %w", w, err)
		}
		if len(out.DeadLettered) > 0 { // kept for a redrive by fanout.Execute; not needed here
			if err := base.Queues.Delete(ctx, out.Queues.Work); err != nil {
				return rows, err
			}
			if err := base.Queues.Delete(ctx, out.Queues.Dead); err != nil {
				return rows, err
			}
		}
		row := Row{Workers: w, Elapsed: out.Elapsed, Processed: out.Processed, Dead: len(out.DeadLettered),
			Throttled: out.Stats.Throttled, Received: out.Stats.Received}
		rows = append(rows, row)
		if progress != nil {
			progress(row)
		}
	}
	return rows, nil
}
