package lab_test

import (
	"errors"
	"fmt"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Outside a notebook, Show prints the chart's table.
func ExampleShow() {
	night, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(night, sim.Config{Workers: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := chart.Gantt(res)
	if err != nil {
		fmt.Println(err)
		return
	}
	lab.Show(g)
	// Output:
	// Night per worker, c = 3 (barrier)
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

// A cell can pass a builder's results straight to Chart; an error is
// reported instead of a chart.
func ExampleChart() {
	lab.Chart(chart.SweepOverflow([]chart.SweepPoint{
		{Workers: 2, Overflow: 0.62, OverflowLow: 0.58, OverflowHigh: 0.66},
		{Workers: 3, Overflow: 0.03, OverflowLow: 0.02, OverflowHigh: 0.045},
	}, chart.Target(0.05)))
	lab.Chart(chart.SweepP95(nil))
	// Output:
	// Overflow probability by worker count
	// workers  overflow probability  95% low  95% high  meets target 5.0%
	// -------  --------------------  -------  --------  -----------------
	//       2                 62.0%    58.0%     66.0%  no
	//       3                  3.0%     2.0%      4.5%  yes
	// ✗ could not draw the chart: p95 sweep: no points
}

func ExampleCheckNear() {
	rho := 10.0 / 4 / (3 * 60.0 / 27) // lambda / (c mu): 10 jobs in 4 h, mean runtime 27 min, c = 3
	lab.CheckNear("rho of the stable night", rho, 0.375, 0.001, "rho = lambda / (c * mu)")
	lab.CheckNear("rho of the stable night", 2.5/3, 0.375, 0.001, "rho = lambda / (c * mu), and mu is per hour: 60 / mean runtime")
	// Output:
	// ✓ pass: rho of the stable night (got 0.375)
	// ✗ not yet: rho of the stable night: got 0.8333, too high. Hint: rho = lambda / (c * mu), and mu is per hour: 60 / mean runtime
}

func ExampleCheckEqual() {
	lab.CheckEqual("exclusive jobs on 2026-05-14", 5, 5, "count requires_exclusive_lock")
	lab.CheckTrue("c = 3 meets the 5% overflow target", false, "look at the upper end of the Wilson interval")
	lab.CheckNoError("query the night", errors.New("ResourceNotFoundException: table db_batch_window_requests"), "run notebook 00 first: it creates the table")
	// Output:
	// ✓ pass: exclusive jobs on 2026-05-14 (got 5)
	// ✗ not yet: c = 3 meets the 5% overflow target. Hint: look at the upper end of the Wilson interval
	// ✗ not yet: query the night: error: ResourceNotFoundException: table db_batch_window_requests. Hint: run notebook 00 first: it creates the table
}

func ExampleTable() {
	fmt.Print(lab.Table([]string{"c", "p95 wait"}, [][]string{{"2", "95"}, {"3", "40"}}))
	lab.ShowTable([]string{"c", "p95 wait"}, [][]string{{"2", "95"}, {"3", "40"}})
	// Output:
	// | c | p95 wait |
	// |---|---|
	// | 2 | 95 |
	// | 3 | 40 |
	// c  p95 wait
	// -  --------
	// 2        95
	// 3        40
}

// Outside a notebook the bar prints a line every tenth of the way.
func ExampleProgress() {
	p := lab.NewProgress("replications", 1000)
	for range 1000 {
		p.Add(1)
	}
	p.Done()
	// Output:
	// replications: 100/1000 (10%)
	// replications: 200/1000 (20%)
	// replications: 300/1000 (30%)
	// replications: 400/1000 (40%)
	// replications: 500/1000 (50%)
	// replications: 600/1000 (60%)
	// replications: 700/1000 (70%)
	// replications: 800/1000 (80%)
	// replications: 900/1000 (90%)
	// replications: 1000/1000 (100%) done
}

// A predict-then-run cell ends with Predicted: the guess beside the
// measurement, or a reminder when no guess was written.
func ExamplePredicted() {
	lab.Predicted("read units of 10 GetItems", 1, 5, "read units")
	lab.Predicted("read units of 10 GetItems", 5, 5, "read units")
	lab.Predicted("read units of 10 GetItems", lab.NoPrediction, 5, "read units")
	// Output:
	// your prediction of read units of 10 GetItems: you predicted 1 read units, measured 5 read units: 80.0% low
	// your prediction of read units of 10 GetItems: you predicted 5 read units, measured 5 read units: exactly right
	// your prediction of read units of 10 GetItems: measured 5 read units; you wrote no prediction: write one before you run the next exercise
}
