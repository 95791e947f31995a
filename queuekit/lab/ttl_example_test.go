package lab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/lab"
)

// Notebook 06's decision: a mechanism per job, judged rule by rule (here
// the share link without the filter and the reminder on a delay queue).
func ExampleJudgeTimerPlan() {
	v := lab.JudgeTimerPlan(lab.TTLJobs, map[string]string{
		"archive-finished-jobs": lab.ViaTTL, "start-etl-0100": lab.ViaScheduler, "retry-in-5-minutes": lab.ViaDelayQueue,
		"drop-attempt-records": lab.ViaTTL, "deadline-reminder": lab.ViaDelayQueue, "expire-share-link": lab.ViaTTL,
	})
	fmt.Printf("%+v ok=%v\n", v, v.OK())
	// Output:
	// {Unknown:0 TTLTooLate:0 NotOnTTL:0 Unfiltered:1 DelayTooLong:1} ok=false
}

// Thirty timers' delays as DynamoDB Local's sweep deletes them: twenty in
// one pass, ten in the next.
func ExampleSweepSummary() {
	var delays []float64
	for i := range 30 {
		if i < 20 {
			delays = append(delays, 6+float64(i)/20)
		} else {
			delays = append(delays, 16.2+float64(i-20)/20)
		}
	}
	fmt.Println(lab.SweepSummary(lab.SweepBatches(delays)))
	// Output:
	// The 30 timers fired in **2 batches**: **20** at 6 to 6.95 s, **10** at 16.2 to 16.65 s. One batch a pass of Local's sweep; the passes began 10.2 s apart.
}
