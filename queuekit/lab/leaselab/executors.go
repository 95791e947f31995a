package leaselab

import (
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// ExecutorHeaders are the columns of ExecutorRows.
var ExecutorHeaders = []string{"executor", "workers", "jobs/s (median)", "range", "lost claims per claim won"}

// ExecutorRows formats claimrate.Compare's rows for a table.
func ExecutorRows(rows []claimrate.Row) [][]string {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, []string{r.Executor, format.Int(r.Workers), format.Num(r.Median),
			format.Num(r.Min) + " to " + format.Num(r.Max), format.Num(r.LostPerWon)})
	}
	return out
}

// ExecutorSummary is the Markdown a notebook prints under the comparison,
// built from its values: the fleet's jobs/s against the night executor's at
// each worker count, and DynamoDB Local's write ceiling measured in the
// same run (the fleet rows' median ceiling).
func ExecutorSummary(rows []claimrate.Row) string {
	night, fleet := map[int]claimrate.Row{}, map[int]claimrate.Row{}
	var workers []int
	for _, r := range rows {
		switch r.Executor {
		case claimrate.Night:
			night[r.Workers] = r
			workers = append(workers, r.Workers)
		case claimrate.FleetOwned:
			fleet[r.Workers] = r
		}
	}
	var b strings.Builder
	for _, w := range workers {
		n, f := night[w], fleet[w]
		if n.Median <= 0 || f.Median <= 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s: the fleet ran **%s times** the night executor's jobs a second (medians %s and %s); the night executor lost %s claims per claim won.\n",
			lab.Plural(w, "worker", "workers"), format.Num(f.Median/n.Median), format.Num(f.Median), format.Num(n.Median), format.Num(n.LostPerWon))
	}
	var ceilings []float64
	for _, w := range workers {
		if c := fleet[w].Ceiling; c > 0 {
			ceilings = append(ceilings, c)
		}
	}
	if s := SpreadOf(ceilings); s.N > 0 {
		fmt.Fprintf(&b, "- DynamoDB Local's write ceiling, measured before each fleet round: **%s** conditional writes a second (median; %s over the rounds).\n",
			format.Num(s.Median), s.String())
	}
	return b.String()
}

// NightAgainstCeiling is the Markdown line that compares the night
// executor's median jobs a second at each worker count with the pool's
// ceiling (claimrate.PoolBound's bound, jobs a second).
func NightAgainstCeiling(rows []claimrate.Row, ceiling float64) string {
	var parts []string
	for _, r := range rows {
		if r.Executor == claimrate.Night && ceiling > 0 {
			parts = append(parts, fmt.Sprintf("%s with %s", format.Percent(r.Median/ceiling), lab.Plural(r.Workers, "worker", "workers")))
		}
	}
	if len(parts) == 0 {
		return "✗ no night-executor rows or no ceiling to compare"
	}
	return fmt.Sprintf("The night executor ran at %s of the pool's ceiling of **%s jobs a second** (measured again just before these runs).",
		strings.Join(parts, " and "), format.Num(ceiling))
}

// ShowExecutors draws the comparison: jobs a second against workers for
// both executors, the table of every row, and ExecutorSummary.
func ShowExecutors(rows []claimrate.Row, title string) error {
	series := map[string]*chart.Series{}
	for _, r := range rows {
		s := series[r.Executor]
		if s == nil {
			s = &chart.Series{Name: r.Executor}
			series[r.Executor] = s
		}
		s.X, s.Y = append(s.X, float64(r.Workers)), append(s.Y, r.Median)
	}
	var lines []chart.Series
	for _, name := range []string{claimrate.Night, claimrate.FleetOwned, claimrate.FleetAll} {
		if s := series[name]; s != nil {
			lines = append(lines, *s)
		}
	}
	if err := lab.Chart(chart.Lines(title, "workers", "jobs/s", lines)); err != nil {
		return err
	}
	lab.ShowTable(ExecutorHeaders, ExecutorRows(rows))
	lab.Markdown(ExecutorSummary(rows))
	return nil
}
