package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Variant is one row of WhyTheyMiss: the same night with one assumption of
// M/M/c switched on or off, and its mean and p95 wait in minutes.
type Variant struct {
	Name        string  `json:"name"`
	AverageWait float64 `json:"average_wait_minutes"`
	P95Wait     float64 `json:"p95_wait_minutes"` // NaN-free: 0 when not defined
	Note        string  `json:"note,omitempty"`
}

// WhyTheyMiss separates the two reasons Erlang C misses a night: it
// simulates the night as scheduled, without exclusive locks, with arrivals
// spread evenly over the window instead of in batches on the hour, and with
// both changes, and puts the M/M/c, M/D/c (Cosmetatos, an approximation)
// and G/G/c (Allen-Cunneen with the night's own ca and cs, an
// approximation) predictions below. Runtimes stay the estimates, so only the arrival
// pattern and the locks change between the simulated rows.
func WhyTheyMiss(n queuekit.Night, workers int) ([]Variant, error) {
	if len(n.Jobs) == 0 {
		return nil, fmt.Errorf("night %s has no jobs", n.BatchDate)
	}
	cutoff := float64(n.Window.Minutes())
	base := sim.Tasks(n)
	spread := func(ts []sim.Task) {
		// Evenly spaced arrivals over the window, in the night's arrival order.
		for i := range ts {
			ts[i].Arrival = cutoff * float64(i) / float64(len(ts))
		}
	}
	unlock := func(ts []sim.Task) {
		for i := range ts {
			ts[i].Exclusive = false
		}
	}
	cases := []struct {
		name   string
		change []func([]sim.Task)
	}{
		{"as scheduled: batches on the hour, exclusive locks", nil},
		{"no exclusive locks", []func([]sim.Task){unlock}},
		{"arrivals spread evenly, exclusive locks", []func([]sim.Task){spread}},
		{"arrivals spread evenly, no exclusive locks", []func([]sim.Task){spread, unlock}},
	}
	var out []Variant
	var e sim.Engine
	for _, c := range cases {
		ts := append([]sim.Task(nil), base...)
		for _, f := range c.change {
			f(ts)
		}
		r, err := e.Run(ts, sim.Config{Workers: workers, Cutoff: cutoff, NoTrace: true})
		if err != nil {
			return nil, fmt.Errorf("why they miss: %s: %w", c.name, err)
		}
		out = append(out, Variant{Name: c.name, AverageWait: r.AverageWait, P95Wait: r.P95Wait})
	}
	p, err := n.Params(workers)
	if err != nil {
		return nil, err
	}
	q := mmc.Queue{Lambda: p.Lambda, Mu: p.Mu, C: workers}
	m, err := q.Solve()
	if err != nil {
		out = append(out, Variant{Name: "M/M/c (Erlang C)", Note: fmt.Sprintf("no steady state: ρ = %.3f >= 1", p.Rho)})
		return out, nil
	}
	md, _ := q.CosmetatosWq()
	out = append(out,
		Variant{Name: "M/M/c (Erlang C): Poisson arrivals, exponential runtimes", AverageWait: 60 * m.Wq, P95Wait: 60 * m.WaitP95},
		Variant{Name: "M/D/c (Cosmetatos approximation): Poisson arrivals, fixed runtimes", AverageWait: 60 * md,
			Note: "approximation; p95 not given"})
	if ca, cs, err := Variability(n); err == nil {
		if gg, err := q.AllenCunneenWq(ca, cs); err == nil {
			out = append(out, Variant{Name: fmt.Sprintf("G/G/c (Allen-Cunneen approximation): this night's variability, ca = %.2f, cs = %.2f, no locks", ca, cs),
				AverageWait: 60 * gg, Note: "approximation; p95 not given"})
		}
	}
	return out, nil
}

// cells formats the mean and p95 wait; a figure the row does not give (an
// analytic row with a note and no value) shows as dash.
func (v Variant) cells(dash string) (mean, p95 string) {
	mean, p95 = fmt.Sprintf("%.2f", v.AverageWait), fmt.Sprintf("%.2f", v.P95Wait)
	if v.Note != "" && v.AverageWait == 0 {
		mean = dash
	}
	if v.Note != "" && v.P95Wait == 0 {
		p95 = dash
	}
	return mean, p95
}

// WriteVariants prints WhyTheyMiss rows as an aligned table.
func WriteVariants(w io.Writer, vs []Variant) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tmean wait (min)\tp95 wait (min)\tnote")
	for _, v := range vs {
		mean, p95 := v.cells("-")
		if v.Note == "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, mean, p95) // no trailing padding
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, mean, p95, v.Note)
	}
	return tw.Flush()
}

// VariantsMarkdown renders WhyTheyMiss rows as a markdown table.
func VariantsMarkdown(vs []Variant) string {
	t := format.Table{Headers: []string{"variant", "mean wait (min)", "p95 wait (min)", "note"}}
	for _, v := range vs {
		mean, p95 := v.cells("–")
		t.Rows = append(t.Rows, []string{v.Name, mean, p95, v.Note})
	}
	return t.Markdown()
}
