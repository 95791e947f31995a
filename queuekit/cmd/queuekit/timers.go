package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/timers"
)

// timersResult is the --json form.
type timersResult struct {
	Scheduled  int          `json:"scheduled"`
	Fired      int          `json:"fired"`
	Duplicates int          `json:"duplicates"`
	Delay      delaySummary `json:"delay_seconds"`
	Table      string       `json:"table"`
}

type delaySummary struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

func runTimers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("timers")
	count := fs.Int("count", 10, fmt.Sprintf("how many timers to schedule (1 to %d)", timers.MaxTrialCount))
	dueIn := fs.Float64("due-in", 2, fmt.Sprintf("seconds from now until they are due (0 to %.0f)", timers.MaxDueIn.Seconds()))
	timeout := fs.Duration("timeout", 0, "how long to wait for every fire (default: due-in + 2 x ceil(count/20) x 10 s + 1 min: DynamoDB Local sweeps 20 items every 10 s, twice over)")
	keep := fs.Bool("keep", false, "keep the timers tables (default: delete them at the end)")
	asJSON := fs.Bool("json", false, `print {"scheduled", "fired", "duplicates", "delay_seconds": {"p50", "p95", "max"}, "table"}`)
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *count < 1 || *count > timers.MaxTrialCount {
		return usagef("--count %d: schedule 1 to %d timers (DynamoDB Local fires 20 every 10 s)", *count, timers.MaxTrialCount)
	}
	if !(*dueIn >= 0) || *dueIn > timers.MaxDueIn.Seconds() {
		return usagef("--due-in %v: want a number of seconds from 0 to %.0f (%s)", *dueIn, timers.MaxDueIn.Seconds(), timers.MaxDueIn)
	}
	if *timeout < 0 {
		return usagef("--timeout %s: must be >= 0", *timeout)
	}
	due := time.Duration(*dueIn * float64(time.Second))
	if *timeout == 0 {
		*timeout = timers.DefaultTimeout(*count, due)
	}
	if !isSet(fs, "table") {
		var b [4]byte
		_, _ = rand.Read(b[:])
		df.table = "queuekit-timers-" + hex.EncodeToString(b[:])
	}
	c, err := df.open(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	step := func(format string, a ...any) {
		fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	tr, err := timers.Trial{Count: *count, DueIn: due, Timeout: *timeout, Keep: *keep, Logf: step,
		Progress: func(p queuekit.Progress) { step("%s (%d of %d)", p.Note, p.Done, p.Total) }}.Run(ctx, timers.New(c))
	if err != nil {
		return err
	}
	res := timersResult{Scheduled: tr.Scheduled, Fired: tr.Fired, Duplicates: tr.Duplicates, Table: tr.Table,
		Delay: delaySummary{P50: tr.P50, P95: tr.P95, Max: tr.Max}}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "scheduled %d, fired %d, duplicates %d; delay after due: p50 %.1f s, p95 %.1f s, max %.1f s\n",
			res.Scheduled, res.Fired, res.Duplicates, res.Delay.P50, res.Delay.P95, res.Delay.Max)
	}
	if tr.TimedOut {
		return fmt.Errorf("only %d of %d timers fired within %s; DynamoDB Local sweeps 20 items every 10 s, so raise --timeout", res.Fired, res.Scheduled, *timeout)
	}
	return nil
}
