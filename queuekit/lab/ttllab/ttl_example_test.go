package ttllab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/lab/ttllab"
)

// Notebook 06's decision: a mechanism per job, judged rule by rule (here
// the share link without the filter and the reminder on a delay queue).
func ExampleJudgeTimerPlan() {
	v := ttllab.JudgeTimerPlan(ttllab.TTLJobs, map[string]string{
		"archive-finished-jobs": ttllab.ViaTTL, "start-etl-0100": ttllab.ViaScheduler, "retry-in-5-minutes": ttllab.ViaDelayQueue,
		"drop-attempt-records": ttllab.ViaTTL, "deadline-reminder": ttllab.ViaDelayQueue, "expire-share-link": ttllab.ViaTTL,
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
	fmt.Println(ttllab.SweepSummary(ttllab.SweepBatches(delays)))
	// Output:
	// The 30 timers fired in **2 batches**: **20** at 6 to 6.95 s, **10** at 16.2 to 16.65 s. One batch a pass of Local's sweep; the passes began 10.2 s apart.
}

// The TTL decision of notebook 06: which candidates may be a week late.
func ExampleTTLSuits() {
	fmt.Println(ttllab.TTLSuits(ttllab.TTLJobs))
	// Output:
	// [archive-finished-jobs drop-attempt-records expire-share-link]
}
