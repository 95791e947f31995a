package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/nightqueue/workshop/queuekit/timers"
)

func init() {
	commands["timers"] = command{
		summary: "schedule timers on DynamoDB TTL, fire them from the stream, and measure their delay",
		run:     runTimers,
	}
}

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

// defaultTimersTimeout is how long `timers` waits when --timeout is not
// given: the due time, plus DynamoDB Local's sweep (20 items every 10 s, so
// ceil(N/20) x 10 s to visit every item) twice over, plus a minute.
func defaultTimersTimeout(n int, dueIn time.Duration) time.Duration {
	sweep := time.Duration((n+19)/20) * 10 * time.Second
	return dueIn + 2*sweep + time.Minute
}

func runTimers(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("timers")
	count := fs.Int("count", 10, "how many timers to schedule (at least 1)")
	dueIn := fs.Float64("due-in", 2, "seconds from now until they are due (>= 0)")
	timeout := fs.Duration("timeout", 0, "how long to wait for every fire (default: due-in + 2 x ceil(count/20) x 10 s + 1 min, DynamoDB Local's sweep twice over)")
	keep := fs.Bool("keep", false, "keep the timers tables (default: delete them at the end)")
	asJSON := fs.Bool("json", false, `print {"scheduled", "fired", "duplicates", "delay_seconds": {"p50", "p95", "max"}, "table"}`)
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *count < 1 {
		return usagef("--count %d: schedule at least 1 timer", *count)
	}
	if !(*dueIn >= 0) || math.IsInf(*dueIn, 0) {
		return usagef("--due-in %v: must be a finite number of seconds >= 0", *dueIn)
	}
	if *timeout < 0 {
		return usagef("--timeout %s: must be >= 0", *timeout)
	}
	due := time.Duration(*dueIn * float64(time.Second))
	if *timeout == 0 {
		*timeout = defaultTimersTimeout(*count, due)
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
	tm := timers.New(c)
	start := time.Now()
	step := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	if err := tm.CreateTables(ctx); err != nil {
		return unreachableAsUsage(err)
	}
	if !*keep {
		defer func() {
			if err := tm.DeleteTables(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(os.Stderr, "queuekit timers: %v\n", err)
			}
		}()
	}
	step("created %s (TTL on %q, stream) and %s", tm.Table(), timers.AttrDue, tm.StateTable())
	dueAt := time.Now().Add(due)
	for i := range *count {
		if err := tm.Schedule(ctx, timers.Timer{ID: fmt.Sprintf("timer-%04d", i), Due: dueAt, Payload: "job"}); err != nil {
			return err
		}
	}
	step("scheduled %d timers due at %s", *count, dueAt.UTC().Format("15:04:05"))
	var mu sync.Mutex
	seen := map[string]int{}
	var delays []float64
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cons := tm.Consumer(timers.Options{OnFire: func(f timers.Fire) {
		mu.Lock()
		defer mu.Unlock()
		seen[f.ID]++
		delays = append(delays, f.Delay.Seconds())
		step("fired %s, %.1f s after due (%d of %d)", f.ID, f.Delay.Seconds(), len(seen), *count)
		if len(seen) >= *count {
			cancel()
		}
	}})
	if err := cons.Run(cctx); err != nil {
		return err
	}
	st := cons.Stats()
	res := timersResult{Scheduled: *count, Fired: len(seen), Duplicates: st.Duplicates, Table: tm.Table()}
	for _, n := range seen {
		res.Duplicates += n - 1
	}
	if len(delays) > 0 {
		sort.Float64s(delays)
		r := func(x float64) float64 { return math.Round(x*10) / 10 }
		res.Delay = delaySummary{P50: r(stat.Quantile(0.5, stat.Empirical, delays, nil)), P95: r(stat.Quantile(0.95, stat.Empirical, delays, nil)), Max: r(delays[len(delays)-1])}
	}
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
	if res.Fired < res.Scheduled && ctx.Err() == nil {
		return fmt.Errorf("only %d of %d timers fired within %s; DynamoDB Local sweeps 20 items every 10 s, so raise --timeout", res.Fired, res.Scheduled, *timeout)
	}
	return nil
}
