// Package report composes the workshop's reference report for one night:
// its summary, its queueing parameters, one simulated run, and the analytic
// M/M/c prediction beside the simulation with the gap called out. The CLI's
// tutorial command and the notebooks print the same report.
package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// ReferenceScenarios are the tutorial's two scenarios: the stable night with
// 3 workers and the overloaded night with 2.
var ReferenceScenarios = []struct {
	BatchDate string
	Workers   int
}{{"2026-05-13", 3}, {"2026-05-14", 2}}

// Analytic is the M/M/c prediction for a night, in minutes, or why there is none.
type Analytic struct {
	PWait           float64 `json:"p_wait"`
	WaitMinutes     float64 `json:"wq_minutes"`
	WaitP95Minutes  float64 `json:"wait_p95_minutes"`
	QueueLength     float64 `json:"lq"`
	Utilization     float64 `json:"rho"`
	Unstable        bool    `json:"unstable"`
	Reason          string  `json:"reason,omitempty"`
	ApproxMDcMinute float64 `json:"cosmetatos_md_c_wq_minutes,omitempty"` // approximation: M/D/c
	// Allen-Cunneen's G/G/c approximation with the night's own variability
	// (see Variability): Wq(M/M/c)·(ca² + cs²)/2.
	ApproxGGcMinute float64 `json:"allen_cunneen_wq_minutes,omitempty"`
	CA              float64 `json:"ca,omitempty"` // CV of the gaps between arrivals
	CS              float64 `json:"cs,omitempty"` // CV of the runtimes
}

// Scenario is one night's report.
type Scenario struct {
	Night    queuekit.Night
	Summary  queuekit.Summary
	Params   queuekit.Params
	Sim      sim.Result
	Analytic Analytic
}

// Build simulates the night with c workers under the policy and solves the
// M/M/c model with the night's lambda and mu.
func Build(n queuekit.Night, workers int, policy sim.Policy) (Scenario, error) {
	p, err := n.Params(workers)
	if err != nil {
		return Scenario{}, err
	}
	r, err := sim.Run(n, sim.Config{Workers: workers, Policy: policy})
	if err != nil {
		return Scenario{}, err
	}
	a := Solve(p)
	if a.Reason == "" {
		if ca, cs, err := Variability(n); err == nil {
			q := mmc.Queue{Lambda: p.Lambda, Mu: p.Mu, C: p.Workers}
			if gg, err := q.AllenCunneenWq(ca, cs); err == nil {
				a.ApproxGGcMinute, a.CA, a.CS = 60*gg, ca, cs
			}
		}
	}
	return Scenario{Night: n, Summary: n.Summarize(), Params: p, Sim: r, Analytic: a}, nil
}

// Solve returns the analytic M/M/c prediction for p, in minutes.
// An unstable queue (rho >= 1) is reported, not an error: it is a finding.
func Solve(p queuekit.Params) Analytic {
	q := mmc.Queue{Lambda: p.Lambda, Mu: p.Mu, C: p.Workers}
	m, err := q.Solve()
	if err != nil {
		a := Analytic{Utilization: p.Rho, Reason: err.Error()}
		if errors.Is(err, mmc.ErrUnstable) {
			a.Unstable = true
			a.Reason = fmt.Sprintf("ρ = %.3f >= 1: M/M/c has no steady state; the queue grows until the night ends", p.Rho)
		}
		return a
	}
	md, _ := q.CosmetatosWq()
	return Analytic{PWait: m.PWait, WaitMinutes: 60 * m.Wq, WaitP95Minutes: 60 * m.WaitP95, QueueLength: m.Lq,
		Utilization: p.Rho, ApproxMDcMinute: 60 * md}
}

// Gap explains in one sentence how far the analytic mean wait is from the
// simulated one and why they differ.
func (s Scenario) Gap() string {
	a := s.Analytic
	if a.Unstable {
		return fmt.Sprintf("M/M/c cannot answer (%s); the simulation shows the backlog: %d of %d jobs finish after the cutoff, the queue drains at %s.",
			a.Reason, s.Sim.OverflowJobs, s.Sim.Jobs, clock(s.Night.Window, s.Sim.DrainedMinute))
	}
	if a.Reason != "" {
		return "M/M/c: " + a.Reason
	}
	ratio := "∞"
	if a.WaitMinutes > 0 {
		ratio = fmt.Sprintf("%.1fx", s.Sim.AverageWait/a.WaitMinutes)
	}
	return fmt.Sprintf("M/M/c predicts a mean wait of %.1f min; the simulation gives %.1f min (%s): jobs arrive in batches on the hour, not as a Poisson stream, and exclusive-lock jobs idle the whole pool, which Erlang C assumes never happens.",
		a.WaitMinutes, s.Sim.AverageWait, ratio)
}

func clock(w queuekit.Window, minute float64) string {
	m := w.Start + int(minute+0.5)
	return fmt.Sprintf("%02d:%02d", (m/60)%24, m%60)
}

// title names the night, the window, any requested-window filter, the
// workers and the policy.
func (s Scenario) title() string {
	t := fmt.Sprintf("Night %s, window %s", s.Night.BatchDate, s.Night.Window)
	if s.Night.OnlyWindow != "" {
		t += ", only the jobs requested for " + s.Night.OnlyWindow
	}
	return t + fmt.Sprintf(", %s, policy %s", plural(s.Params.Workers, "worker"), s.Sim.Policy)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// WriteText prints the scenario as an aligned text report.
func (s Scenario) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	sm, p := s.Summary, s.Params
	fmt.Fprintf(tw, "%s\n", s.title())
	fmt.Fprintf(tw, "  jobs\t%d\n", sm.Jobs)
	fmt.Fprintf(tw, "  per window\t%s\n", counts(sm.PerWindow))
	fmt.Fprintf(tw, "  per class\t%s\n", counts(sm.PerClass))
	fmt.Fprintf(tw, "  exclusive-lock jobs\t%d\n", sm.ExclusiveJobs)
	fmt.Fprintf(tw, "  high-priority jobs (>= %d)\t%d\n", queuekit.HighPriority, sm.HighPriorityJobs)
	fmt.Fprintf(tw, "  mean runtime\t%.2f min\n", sm.MeanRuntimeMinutes)
	fmt.Fprintf(tw, "Parameters\n")
	fmt.Fprintf(tw, "  lambda\t%.4f jobs/h\n", p.Lambda)
	fmt.Fprintf(tw, "  mu\t%.4f jobs/h per worker\n", p.Mu)
	fmt.Fprintf(tw, "  rho\t%.4f\n", p.Rho)
	fmt.Fprintf(tw, "Simulation\tsimulated\tM/M/c (analytic)\n")
	for _, row := range s.comparison("rho") {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", row[0], row[1], row[2])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Gap: %s\n", s.Gap())
	return err
}

// comparison lists the simulated figures beside the analytic ones, one row
// per metric {name, simulated, analytic}; rho names ρ in the utilisation row.
// The text and Markdown reports both render it.
func (s Scenario) comparison(rho string) [][3]string {
	r, a := s.Sim, s.Analytic
	an := func(v float64, format string) string {
		if a.Reason != "" {
			return "n/a"
		}
		return fmt.Sprintf(format, v)
	}
	// The simulator's p95 is nearest rank (position ⌈0.95 n⌉): with fewer
	// than 20 jobs that is the longest wait, which Erlang C's p95 is not.
	p95 := "p95 wait"
	if r.Jobs < 20 {
		p95 = fmt.Sprintf("p95 wait (simulation: %d jobs, so the longest wait)", r.Jobs)
	}
	rows := [][3]string{
		{"average wait", fmt.Sprintf("%.2f min", r.AverageWait), an(a.WaitMinutes, "%.2f min")},
		{p95, fmt.Sprintf("%.2f min", r.P95Wait), an(a.WaitP95Minutes, "%.2f min")},
		{"average queue length", fmt.Sprintf("%.4f", r.AverageQueueLength), an(a.QueueLength, "%.4f (Lq)")},
		{"max queue length", fmt.Sprint(r.MaxQueueLength), ""},
		{"worker utilization", fmt.Sprintf("%.2f%%", 100*r.Utilization), fmt.Sprintf("%.2f%% (%s)", 100*a.Utilization, rho)},
		{"overflow jobs", fmt.Sprintf("%d of %d (fraction %.4f)", r.OverflowJobs, r.Jobs, r.OverflowFraction), ""},
		{"queue drained", fmt.Sprintf("minute %.0f (%s)", r.DrainedMinute, clock(s.Night.Window, r.DrainedMinute)), ""},
	}
	if a.Reason == "" {
		rows = append(rows, [3]string{"M/D/c wait (Cosmetatos, approximation: fixed runtimes)", "", fmt.Sprintf("%.2f min", a.ApproxMDcMinute)})
		if a.ApproxGGcMinute > 0 {
			rows = append(rows, [3]string{fmt.Sprintf("G/G/c wait (Allen-Cunneen, approximation: ca = %.2f, cs = %.2f)", a.CA, a.CS), "",
				fmt.Sprintf("%.2f min", a.ApproxGGcMinute)})
		}
	}
	return rows
}

func counts(cs []queuekit.Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s=%d", c.Key, c.Count)
	}
	return strings.Join(parts, " ")
}

// JSON is the machine-readable form of one simulated night: the keys of the
// CLI's simulate --json (the simulation's metrics), with the batch date, the
// queueing parameters and the analytic figures.
type JSON struct {
	BatchDate  string  `json:"batch_date"`
	OnlyWindow string  `json:"requested_window,omitempty"`
	Lambda     float64 `json:"lambda_per_hour"`
	Mu         float64 `json:"mu_per_hour"`
	Rho        float64 `json:"rho"`
	sim.Metrics
	Analytic *Analytic `json:"analytic,omitempty"`
}

// JSON returns the scenario's machine-readable form.
func (s Scenario) JSON() JSON {
	a := s.Analytic
	return JSON{BatchDate: s.Night.BatchDate, OnlyWindow: s.Night.OnlyWindow,
		Lambda: s.Params.Lambda, Mu: s.Params.Mu, Rho: s.Params.Rho, Metrics: s.Sim.Metrics, Analytic: &a}
}
