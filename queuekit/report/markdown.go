package report

import (
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
)

// Markdown renders the scenario as markdown for a notebook: a line on the
// workload, a table with the simulated and the analytic figures side by
// side, and the gap.
func (s Scenario) Markdown() string {
	var b strings.Builder
	sm, p := s.Summary, s.Params
	fmt.Fprintf(&b, "**%s**: %d jobs (%s; %s), %d exclusive-lock, %d high-priority (>= %d), mean runtime %.2f min.\n\n",
		s.title(), sm.Jobs, counts(sm.PerWindow), counts(sm.PerClass),
		sm.ExclusiveJobs, sm.HighPriorityJobs, queuekit.HighPriority, sm.MeanRuntimeMinutes)
	fmt.Fprintf(&b, "λ = %.4f jobs/h, μ = %.4f jobs/h per worker, ρ = %.4f\n\n", p.Lambda, p.Mu, p.Rho)
	t := format.Table{Headers: []string{"metric", "simulated", "M/M/c (analytic)"}}
	for _, row := range s.comparison("ρ") {
		t.Rows = append(t.Rows, row[:])
	}
	b.WriteString(t.Markdown())
	fmt.Fprintf(&b, "\n**Gap:** %s\n", s.Gap())
	return b.String()
}
