package fleetlab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// PeakStart is a write rate offered to fresh on-demand tables through a
// limits layer for their first seconds: one table per warm throughput in
// Warm (0: a new table's own, 4,000 write units a second), each written
// over Keys partition keys so that every partition it has takes writes.
// Writes are not retried, so what lands is what the table serves.
type PeakStart struct {
	Offered float64 // write units a second, AWS units (the layer divides its limits by S, the load is divided too)
	Seconds float64 // how long each table is offered the load (default 5)
	Warm    []int64 // warm throughputs to request, write units a second (AWS units)
	Keys    int     // partition keys (default 1,000)
}

// PeakStartRun is one table of a PeakStart.
type PeakStartRun struct {
	Warm       int64 // the warm throughput asked for (0: none, a new table's)
	Partitions int   // the table's partitions in the layer
	Result     limitslab.HotLoadResult
	// PerSecond is the write units landed in each second of the run, in AWS
	// units (the layer's count times S).
	PerSecond []float64
	Throttled map[string]int
	// Elapsed is how long the load ran, in seconds (at least Seconds: a
	// busy machine sends late).
	Elapsed float64
}

// RunPeakStart offers p's load to one fresh table per warm throughput, one
// table after the other, and reads what the layer served each second.
// progress (may be nil) is called after every table.
func RunPeakStart(ctx context.Context, s *limits.Server, p PeakStart, progress func(queuekit.Progress)) ([]PeakStartRun, error) {
	if s == nil || !(p.Offered > 0) || len(p.Warm) == 0 {
		return nil, errors.New("peak start: want a limits layer, Offered > 0 and at least one warm throughput")
	}
	if p.Seconds <= 0 {
		p.Seconds = 5
	}
	if p.Keys <= 0 {
		p.Keys = 1000
	}
	var out []PeakStartRun
	for i, w := range p.Warm {
		table := fmt.Sprintf("peak_start_%d_%d", i, time.Now().UnixNano())
		if w > 0 {
			if _, err := limitslab.CreateWarmTable(ctx, s, table, w); err != nil {
				return out, err
			}
		}
		res, err := limitslab.RunHotLoad(ctx, limitslab.HotLoad{Endpoint: s.URL, Table: table, Key: "USER", Seconds: p.Seconds,
			Rate: p.Offered / s.Scale(), Shards: p.Keys, MaxAttempts: 1, Workers: 64})
		if err != nil {
			return out, fmt.Errorf("peak start, warm %d: %w", w, err)
		}
		lim, _ := s.Limits(table, "")
		stats := s.Stats()
		per := tableSeconds(stats, table)
		for j := range per {
			per[j] *= s.Scale()
		}
		elapsed := p.Seconds
		if res.Throughput > 0 {
			elapsed = float64(res.Landed) / res.Throughput
		}
		out = append(out, PeakStartRun{Warm: w, Partitions: lim.Partitions, Result: res, PerSecond: per,
			Throttled: limits.Totals(stats, table, "").Throttled, Elapsed: elapsed})
		if progress != nil {
			progress(queuekit.Progress{Done: i + 1, Total: len(p.Warm), Note: fmt.Sprintf("warm %d", w)})
		}
	}
	return out, nil
}

// tableSeconds is a table's write units consumed a second, from its first
// second with writes to its last.
func tableSeconds(samples []limits.Sample, table string) []float64 {
	return unitsSeconds(samples, table, "")
}

// PeakStartChart draws each table's write units landed a second (AWS
// units) against the second of the run, with the offered rate as a dashed
// line; the title says S.
func PeakStartChart(runs []PeakStartRun, offered, scale float64, set ...chart.Setting) (*chart.Chart, error) {
	n := 0
	for _, r := range runs {
		n = max(n, len(r.PerSecond))
	}
	if n == 0 {
		return nil, errors.New("peak start chart: no writes landed")
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	var series []chart.Series
	for _, r := range runs {
		name := "new table (warm throughput 4,000)"
		if r.Warm > 0 {
			name = "warm throughput " + format.Int(r.Warm) + " requested"
		}
		y := make([]float64, n)
		copy(y, r.PerSecond)
		series = append(series, chart.Series{Name: name, X: xs, Y: y})
	}
	title := fmt.Sprintf("Write units landed a second, AWS units, at an offered %s (limits and load divided by S = %s)", format.Int(int64(math.Round(offered))), format.Num(scale))
	set = append([]chart.Setting{chart.Target(offered)}, set...)
	return chart.Lines(title, "second of the run", "write units a second (AWS units)", series, set...)
}

// PeakStartSummary says what each table of a PeakStart served, from its
// values: the mean of its full seconds (the first, which spends the one
// second of capacity its partitions start with, and the last, partial, are
// left out), in AWS units, the rate the load generator really sent, and
// its throttles by reason.
func PeakStartSummary(runs []PeakStartRun, offered, scale float64) string {
	s := fmt.Sprintf("Offered %s write units a second (AWS units; the layer's limits and the load divided by S = %s).", format.Int(int64(math.Round(offered))), format.Num(scale))
	for _, r := range runs {
		name := "A new on-demand table"
		if r.Warm > 0 {
			name = "A table warmed to " + format.Int(r.Warm)
		}
		ys := r.PerSecond
		if len(ys) > 2 {
			ys = ys[1 : len(ys)-1]
		}
		mean := 0.0
		for _, y := range ys {
			mean += y / float64(len(ys))
		}
		sent := float64(r.Result.Landed+r.Result.Failed) * scale / r.Elapsed
		s += fmt.Sprintf(" %s (%d partitions in the layer) landed %s a second on average over its full seconds, of %s sent a second; throttled: %s.",
			name, r.Partitions, format.Int(int64(math.Round(mean))), format.Int(int64(math.Round(sent))), limitslab.ReasonList(r.Throttled))
	}
	return s
}
