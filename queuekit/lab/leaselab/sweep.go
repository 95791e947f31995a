package leaselab

import (
	"context"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// PollSweep measures one night under several poll intervals: Rounds runs of
// each, interleaved (see Interleave), on a clock where one job-minute lasts
// Minute.
type PollSweep struct {
	Night    queuekit.Night
	Workers  int
	Minute   time.Duration
	Polls    []time.Duration
	Rounds   int
	Progress func(queuekit.Progress) // after every run
}

// PollRow is one poll interval's measurements across the rounds.
type PollRow struct {
	Poll                          time.Duration
	MeanLag, MaxLag               Spread // start lag behind the forecast, job-minutes
	AverageWait, Drained          Spread // realised average wait and drained minute
	ForecastWait, ForecastDrained float64
}

// Run executes the sweep on ex and returns a row per poll interval, in the
// order of Polls.
func (s PollSweep) Run(ctx context.Context, ex *lease.Executor) ([]PollRow, error) {
	if s.Rounds < 1 || len(s.Polls) == 0 || s.Workers < 1 || s.Minute <= 0 {
		return nil, fmt.Errorf("poll sweep: want rounds ≥ 1, at least one poll, workers ≥ 1 and a minute > 0 (got %d, %d, %d, %s)",
			s.Rounds, len(s.Polls), s.Workers, s.Minute)
	}
	type acc struct{ mean, max, wait, drained []float64 }
	accs := make([]acc, len(s.Polls))
	rows := make([]PollRow, len(s.Polls))
	done, total := 0, s.Rounds*len(s.Polls)
	err := Interleave(s.Rounds, len(s.Polls), func(_, i int) error {
		cfg := lease.Config{Workers: s.Workers, Minute: s.Minute, Poll: s.Polls[i]}
		rep, err := ex.Run(ctx, s.Night, lease.RunConfig{Config: cfg, Slots: cfg.Workers})
		if err != nil {
			return fmt.Errorf("poll %s: %w", s.Polls[i], err)
		}
		lag := lease.StartLag(rep)
		a := &accs[i]
		a.mean, a.max = append(a.mean, lag.Mean), append(a.max, lag.Max)
		a.wait, a.drained = append(a.wait, rep.Realised.AverageWait), append(a.drained, rep.Realised.DrainedMinute)
		rows[i].ForecastWait, rows[i].ForecastDrained = rep.Forecast.AverageWait, rep.Forecast.DrainedMinute
		done++
		if s.Progress != nil {
			s.Progress(queuekit.Progress{Done: done, Total: total, Note: fmt.Sprintf("poll %s", s.Polls[i])})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, p := range s.Polls {
		a := accs[i]
		rows[i].Poll = p
		rows[i].MeanLag, rows[i].MaxLag = SpreadOf(a.mean), SpreadOf(a.max)
		rows[i].AverageWait, rows[i].Drained = SpreadOf(a.wait), SpreadOf(a.drained)
	}
	return rows, nil
}

// PollHeaders are the columns of PollRows.
var PollHeaders = []string{"poll (ms)", "poll (job-minutes)", "mean start lag", "largest start lag", "average wait", "drained (minute)"}

// PollRows formats the sweep's rows: medians with their range.
func PollRows(rows []PollRow, minute time.Duration) [][]string {
	out := make([][]string, 0, len(rows)+1)
	for _, r := range rows {
		out = append(out, []string{format.Num(float64(r.Poll.Milliseconds())), format.Num(float64(r.Poll) / float64(minute)),
			r.MeanLag.String(), r.MaxLag.String(), r.AverageWait.String(), r.Drained.String()})
	}
	if len(rows) > 0 {
		out = append(out, []string{"forecast", "", "0", "0", format.Num(rows[0].ForecastWait), format.Num(rows[0].ForecastDrained)})
	}
	return out
}

// PollVerdict says, from the measured spreads, whether the longest poll
// lagged more than the shortest in every run, less in every run, or whether
// the runs overlap.
func PollVerdict(rows []PollRow) string {
	if len(rows) < 2 {
		return "one poll interval: nothing to compare"
	}
	short, long := rows[0], rows[len(rows)-1]
	s, l := format.Num(float64(short.Poll.Milliseconds())), format.Num(float64(long.Poll.Milliseconds()))
	switch Order(long.MeanLag, short.MeanLag) {
	case 1:
		return fmt.Sprintf("mean start lag: every %s ms run lagged more than every %s ms run: the poll interval shows above this machine's noise", l, s)
	case -1:
		return fmt.Sprintf("mean start lag: every %s ms run lagged less than every %s ms run: the short poll's own requests slowed the server more than the poll saved", l, s)
	}
	return fmt.Sprintf("mean start lag: the %s ms and %s ms runs overlap: on this machine, right now, the noise is as large as the poll's effect", s, l)
}

// ShowPollSweep shows the sweep's table and its verdict.
func ShowPollSweep(rows []PollRow, minute time.Duration) {
	lab.ShowTable(PollHeaders, PollRows(rows, minute))
	fmt.Println(PollVerdict(rows))
}
