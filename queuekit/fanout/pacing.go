package fanout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// PacingRow is one run of a pacing comparison.
type PacingRow struct {
	Workers   int
	Elapsed   time.Duration
	Processed int
	Dead      int // healthy slices lost to the dead-letter queue
	Throttled int // source requests refused
	Received  int // messages received (each throttle costs one)
}

// ComparePacing runs the same fan-out once per entry of workers, each with a
// fresh source rate limit (Limited(src, perSecond, burst)) and fresh queues,
// and reports what each pool size cost. base gives the queues, results
// table, keys, source and retry settings; its Run, Workers and Resume are
// set per row. The queues of every row are deleted at the end.
func ComparePacing(ctx context.Context, base Config, perSecond float64, burst int, workers []int, progress func(row PacingRow)) ([]PacingRow, error) {
	var rows []PacingRow
	for _, w := range workers {
		cfg := base
		var b [4]byte
		_, _ = rand.Read(b[:])
		cfg.Run = fmt.Sprintf("pace%d-%s", w, hex.EncodeToString(b[:]))
		cfg.Workers, cfg.Resume, cfg.Redrive, cfg.Keep = w, false, false, false
		cfg.Source = Limited(base.Source, perSecond, burst)
		out, err := Execute(ctx, cfg)
		if err != nil {
			return rows, fmt.Errorf("pacing with %d workers: %w", w, err)
		}
		if len(out.DeadLettered) > 0 { // kept for a redrive by Execute; not needed here
			if err := base.Queues.Delete(ctx, out.Queues.Work); err != nil {
				return rows, err
			}
			if err := base.Queues.Delete(ctx, out.Queues.Dead); err != nil {
				return rows, err
			}
		}
		row := PacingRow{Workers: w, Elapsed: out.Elapsed, Processed: out.Processed, Dead: len(out.DeadLettered),
			Throttled: out.Stats.Throttled, Received: out.Stats.Received}
		rows = append(rows, row)
		if progress != nil {
			progress(row)
		}
	}
	return rows, nil
}
