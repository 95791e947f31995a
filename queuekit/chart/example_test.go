package chart_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// A notebook shows a chart with lab.Show; the chart's table carries the same
// numbers for a headless run. The schedule is the hand-derived reference of
// SPEC.md's rules (see TestReferenceScenarios in sim).
func ExampleGantt() {
	night, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := sim.Run(night, sim.Config{Workers: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := chart.Gantt(r, chart.Title("2026-05-13, 3 workers"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.Text())
	// Output:
	// 2026-05-13, 3 workers
	// job               class              priority  exclusive  workers  arrival  start  finish  wait
	// ----------------  -----------------  --------  ---------  -------  -------  -----  ------  ----
	// JOB-20260513-003  backfill                  3  yes        1,2,3          0      0      50     0
	// JOB-20260513-001  etl                       2  no               1        0     50      75    50
	// JOB-20260513-002  refresh                   2  no               2        0     50      70    50
	// JOB-20260513-004  etl                       2  no               3        0     50      75    50
	// JOB-20260513-007  index_maintenance         3  yes        1,2,3         60     75     110    15
	// JOB-20260513-005  etl                       2  no               1       60    110     135    50
	// JOB-20260513-006  refresh                   2  no               2       60    110     130    50
	// JOB-20260513-008  etl                       2  no               3      120    120     145     0
	// JOB-20260513-009  refresh                   2  no               2      120    130     150    10
	// JOB-20260513-010  etl                       2  no               1      120    135     160    15
}

func ExampleHistogram() {
	p95s := []float64{31, 44, 38.5, 52, 47, 41, 36}
	c, err := chart.Histogram(p95s, 10, "p95 wait (minutes)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.Markdown())
	// Output:
	// **Distribution of p95 wait (minutes)**
	//
	// | p95 wait (minutes) | count | share |
	// |---|---|---|
	// | \[30, 40) | 3 | 42.9% |
	// | \[40, 50) | 3 | 42.9% |
	// | \[50, 60) | 1 | 14.3% |
}

// A sweep over the worker count, converted with FromSweep, drawn with its
// Wilson intervals and a 5% target. The percentages are a pinned regression
// value of seed 1 (Monte Carlo, reproducible whatever the core count), not
// derived by hand.
func ExampleSweepOverflow() {
	night, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	sweep, err := montecarlo.SweepWorkers(context.Background(), night,
		montecarlo.Config{Model: montecarlo.LogNormalCV(0.5), Replications: 1000, Seed: 1}, []int{2, 3, 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := chart.SweepOverflow(chart.FromSweep(sweep), chart.Target(0.05))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.Text())
	// Output:
	// Overflow probability by worker count
	// workers  overflow probability  95% low  95% high  meets target 5.0%
	// -------  --------------------  -------  --------  -----------------
	//       2                  8.2%     6.7%     10.1%  no
	//       3                  2.5%     1.7%      3.7%  yes
	//       4                  1.4%     0.8%      2.3%  yes
}

// The HTML is built with html/template: the title is escaped in its
// attribute and in the option's JSON.
func ExampleChart_RenderHTML() {
	c, err := chart.Histogram([]float64{1, 2, 2, 3}, 1, "wait (minutes)", chart.Title(`Waits <b>"tonight"</b>`))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := c.RenderHTML("waits")
	fmt.Println(h[:strings.Index(h, "\n")])
	fmt.Println(strings.Contains(c.Option(), `"text":"Waits \u003cb\u003e\"tonight\"\u003c/b\u003e"`))
	// Output:
	// <div class="queuekit-chart" id="waits" data-chart="histogram" role="img" aria-label="Waits &lt;b&gt;&#34;tonight&#34;&lt;/b&gt;" style="width:900px;height:360px;margin:20px 0 8px 0;"></div>
	// true
}
