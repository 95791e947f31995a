package capacity

import (
	"fmt"
	"math"
)

// SQSInFlightPerQueue is about the most messages a standard SQS queue holds
// in flight (received, not yet deleted): "approximately 120,000", after
// which a short-polling receive gets OverLimit and a long poll gets nothing
// (SQS Developer Guide, "Amazon SQS standard queue quotas"). Current pages
// give FIFO queues 120,000 too.
const SQSInFlightPerQueue = 120_000

// SQSQueuesFor is the number of queues that hold inFlight messages in flight
// at once, ⌈inFlight / SQSInFlightPerQueue⌉: a worker holds a job's message
// in flight while the job runs, so by Little's law inFlight is the jobs
// running at once (Plan.ConcurrentJobs).
func SQSQueuesFor(inFlight float64) (int, error) {
	if !finitePositive(inFlight) || inFlight > MaxJobsPerDay {
		return 0, fmt.Errorf("in-flight messages %v: want a positive finite count up to %v", inFlight, MaxJobsPerDay)
	}
	return int(math.Ceil(inFlight/SQSInFlightPerQueue - 1e-9)), nil
}
