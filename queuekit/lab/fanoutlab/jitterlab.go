package fanoutlab

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/pacing"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// CompareJitter runs the same stampede twice with pacing.Compare
// (workers processors against a source limited to perSecond requests a
// second with the given burst): first with every failed slice retried after
// exactly cfg.RetryAfter, then with full-jitter backoff (RetryJitter). step,
// if set, is called after each run (a progress bar's Add).
func CompareJitter(ctx context.Context, cfg fanout.Config, perSecond float64, burst, workers int, step func(int)) (plain, jittered pacing.Row, err error) {
	var rows [2]pacing.Row
	for i, jitter := range []bool{false, true} {
		c := cfg
		c.RetryJitter = jitter
		r, err := pacing.Compare(ctx, c, perSecond, burst, []int{workers}, nil)
		if err != nil {
			return rows[0], rows[1], fmt.Errorf("jitter %v: %w", jitter, err)
		}
		rows[i] = r[0]
		if step != nil {
			step(1)
		}
	}
	return rows[0], rows[1], nil
}

// JitterRows is the table ShowJitter draws: one row for retries without
// jitter, one with full jitter.
func JitterRows(plain, jittered pacing.Row) [][]string {
	row := func(name string, r pacing.Row) []string {
		return []string{name, fmt.Sprintf("%.1f s", r.Elapsed.Seconds()), format.Int(r.Processed), format.Int(r.Dead),
			format.Int(r.Throttled), format.Int(r.Received)}
	}
	return [][]string{row("same pause for all", plain), row("full jitter", jittered)}
}

// JitterSentence says what the two runs of CompareJitter show, from their
// values.
func JitterSentence(plain, jittered pacing.Row) string {
	verdict := "this run, jitter let no more slices through: the spread was too small to matter (run the cell again)"
	switch {
	case jittered.Processed > plain.Processed:
		verdict = fmt.Sprintf("jitter let %s more through, because retries spread over the window instead of "+
			"arriving together, where the limit lets one of them pass", format.Int(jittered.Processed-plain.Processed))
	case jittered.Processed < plain.Processed:
		verdict = "this run, jitter let fewer slices through: with only a few receives each, chance decides (run the cell again)"
	}
	s := fmt.Sprintf("Without jitter %s of %s slices were processed; with full jitter %s: %s.",
		format.Int(plain.Processed), format.Int(plain.Processed+plain.Dead), format.Int(jittered.Processed), verdict)
	if jittered.Dead > 0 {
		s += fmt.Sprintf(" Even with jitter %s healthy slices ended in the dead-letter queue: jitter softens a stampede, pacing prevents it.",
			format.Int(jittered.Dead))
	}
	return s
}

// ShowJitter shows the two runs of CompareJitter as a table and a sentence.
func ShowJitter(plain, jittered pacing.Row) {
	lab.ShowTable([]string{"retries", "time", "processed", "healthy slices dead-lettered", "throttled", "messages received"},
		JitterRows(plain, jittered))
	lab.Markdown(JitterSentence(plain, jittered))
}
