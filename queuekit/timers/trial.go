package timers

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"gonum.org/v1/gonum/stat"
)

// Trial is a measured run: schedule Count timers due DueIn from now in a
// fresh pair of tables, consume until all have fired or Timeout passes,
// and report the delays.
type Trial struct {
	Count   int
	DueIn   time.Duration
	Timeout time.Duration // 0: DefaultTimeout(Count, DueIn)
	Keep    bool          // keep the tables (default: deleted at the end)
	// Progress, if not nil, is called after each committed fire: timers
	// fired (Done) of Count (Total), and a Note naming the fire and its
	// delay ("fired timer-0007, 1.3 s after due").
	Progress func(queuekit.Progress)
	// Logf, if not nil, gets one line per step (tables created, timers
	// scheduled).
	Logf func(format string, a ...any)
}

// TrialResult is what a Trial measured. Delays are in seconds, ascending.
type TrialResult struct {
	Table      string
	Scheduled  int
	Fired      int
	Duplicates int
	Delays     []float64
	P50, P95   float64 // empirical quantiles of Delays (gonum stat.Quantile), 0.1 s
	Max        float64
	TimedOut   bool
}

// Limits of a Trial, checked by Run before anything is created. DynamoDB
// Local's TTL sweep visits 20 items every 10 s, so MaxTrialCount timers take
// up to 500 s to fire; MaxDueIn keeps a due time a duration can hold and a
// trial a person waits for.
const (
	MaxTrialCount = 1000
	MaxDueIn      = 24 * time.Hour
)

// DefaultTimeout is how long a Trial waits when Timeout is 0: the due time,
// plus DynamoDB Local's sweep (20 items every 10 s, so ceil(n/20) x 10 s to
// visit every item) twice over, plus a minute.
func DefaultTimeout(n int, dueIn time.Duration) time.Duration {
	sweep := time.Duration((n+19)/20) * 10 * time.Second
	return dueIn + 2*sweep + time.Minute
}

// Run runs the trial on t's tables, creating them first.
func (tr Trial) Run(ctx context.Context, t *Timers) (TrialResult, error) {
	if tr.Count < 1 || tr.Count > MaxTrialCount {
		return TrialResult{}, fmt.Errorf("trial: count %d: schedule 1 to %d timers", tr.Count, MaxTrialCount)
	}
	if tr.DueIn < 0 || tr.DueIn > MaxDueIn {
		return TrialResult{}, fmt.Errorf("trial: due in %s: want 0 to %s", tr.DueIn, MaxDueIn)
	}
	if tr.Timeout <= 0 {
		tr.Timeout = DefaultTimeout(tr.Count, tr.DueIn)
	}
	step := tr.Logf
	if step == nil {
		step = func(string, ...any) {}
	}
	if err := t.CreateTables(ctx); err != nil {
		return TrialResult{}, err
	}
	if !tr.Keep {
		defer func() { _ = t.DeleteTables(context.WithoutCancel(ctx)) }()
	}
	step("created %s (TTL on %q, stream) and %s", t.Table(), AttrDue, t.StateTable())
	due := time.Now().Add(tr.DueIn)
	for i := range tr.Count {
		if err := t.Schedule(ctx, Timer{ID: fmt.Sprintf("timer-%04d", i), Due: due, Payload: "job"}); err != nil {
			return TrialResult{}, err
		}
	}
	step("scheduled %d timers due at %s UTC", tr.Count, due.UTC().Format("15:04:05"))
	var mu sync.Mutex
	seen := map[string]int{}
	res := TrialResult{Table: t.Table(), Scheduled: tr.Count}
	cctx, cancel := context.WithTimeout(ctx, tr.Timeout)
	defer cancel()
	c := t.Consumer(ConsumerConfig{OnFire: func(f Fire) {
		mu.Lock()
		seen[f.ID]++
		res.Delays = append(res.Delays, f.Delay.Seconds())
		n := len(seen)
		mu.Unlock()
		if tr.Progress != nil {
			tr.Progress(queuekit.Progress{Done: n, Total: tr.Count,
				Note: fmt.Sprintf("fired %s, %.1f s after due", f.ID, f.Delay.Seconds())})
		}
		if n >= tr.Count {
			cancel()
		}
	}})
	if err := c.Run(cctx); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.Fired, res.Duplicates = len(seen), c.Stats().Duplicates
	for _, n := range seen {
		res.Duplicates += n - 1
	}
	res.TimedOut = res.Fired < res.Scheduled
	if len(res.Delays) > 0 {
		sort.Float64s(res.Delays)
		r := func(x float64) float64 { return math.Round(x*10) / 10 }
		res.P50 = r(stat.Quantile(0.5, stat.Empirical, res.Delays, nil))
		res.P95 = r(stat.Quantile(0.95, stat.Empirical, res.Delays, nil))
		res.Max = r(res.Delays[len(res.Delays)-1])
	}
	return res, nil
}
