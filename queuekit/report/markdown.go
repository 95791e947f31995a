package report

import (
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
)

// Markdown renders the scenario as markdown for a notebook: a line on the
// workload, a table with the simulated and the analytic figures side by
// side, and the gap.
func (s Scenario) Markdown() string {
	var b strings.Builder
	sm, p, r, a := s.Summary, s.Params, s.Sim, s.Analytic
	fmt.Fprintf(&b, "**%s**: %d jobs (%s; %s), %d exclusive-lock, %d high-priority (>= %d), mean runtime %.2f min.\n\n",
		s.title(), sm.Jobs, counts(sm.PerWindow), counts(sm.PerClass),
		sm.ExclusiveJobs, sm.HighPriorityJobs, queuekit.HighPriority, sm.MeanRuntimeMinutes)
	fmt.Fprintf(&b, "λ = %.4f jobs/h, μ = %.4f jobs/h per worker, ρ = %.4f\n\n", p.Lambda, p.Mu, p.Rho)
	an := func(v float64, format string) string {
		if a.Reason != "" {
			return "n/a"
		}
		return fmt.Sprintf(format, v)
	}
	b.WriteString("| metric | simulated | M/M/c (analytic) |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| average wait | %.2f min | %s |\n", r.AverageWait, an(a.WaitMinutes, "%.2f min"))
	fmt.Fprintf(&b, "| p95 wait | %.2f min | %s |\n", r.P95Wait, an(a.WaitP95Minutes, "%.2f min"))
	fmt.Fprintf(&b, "| average queue length | %.4f | %s |\n", r.AverageQueueLength, an(a.QueueLength, "%.4f (Lq)"))
	fmt.Fprintf(&b, "| max queue length | %d | |\n", r.MaxQueueLength)
	fmt.Fprintf(&b, "| worker utilization | %.2f%% | %.2f%% (ρ) |\n", 100*r.Utilization, 100*a.Utilization)
	fmt.Fprintf(&b, "| overflow jobs | %d of %d (fraction %.4f) | |\n", r.OverflowJobs, r.Jobs, r.OverflowFraction)
	fmt.Fprintf(&b, "| queue drained | minute %.0f (%s) | |\n", r.DrainedMinute, clock(s.Night.Window, r.DrainedMinute))
	if a.Reason == "" {
		fmt.Fprintf(&b, "| M/D/c wait (Cosmetatos, approximation) | | %.2f min |\n", a.ApproxMDcMinute)
	}
	fmt.Fprintf(&b, "\n**Gap:** %s\n", s.Gap())
	return b.String()
}
