package leaselab

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// Spread summarises repeated measurements of one quantity: the median and
// the range, so a table can show how much a number moves between runs.
type Spread struct {
	N        int
	Median   float64
	Min, Max float64
	Values   []float64 // the measurements, in the order taken
}

// SpreadOf summarises xs; NaN values are dropped. With no values every field
// is NaN and N is 0.
func SpreadOf(xs []float64) Spread {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := Spread{N: len(v), Values: append([]float64(nil), xs...)}
	if len(v) == 0 {
		s.Median, s.Min, s.Max = math.NaN(), math.NaN(), math.NaN()
		return s
	}
	sort.Float64s(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	if n := len(v); n%2 == 1 {
		s.Median = v[n/2]
	} else {
		s.Median = (v[n/2-1] + v[n/2]) / 2
	}
	return s
}

// String is "median (min to max)", numbers as format.Num prints them.
func (s Spread) String() string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%s to %s)", format.Num(s.Median), format.Num(s.Min), format.Num(s.Max))
}

// Order says how two spreads compare: +1 when every value of a is above
// every value of b, -1 when every value is below, 0 when the ranges
// overlap (the runs cannot tell them apart).
func Order(a, b Spread) int {
	switch {
	case a.N == 0 || b.N == 0:
		return 0
	case a.Min > b.Max:
		return 1
	case a.Max < b.Min:
		return -1
	}
	return 0
}

// Interleave runs rounds × arms measurements, one of each arm per round,
// starting each round one arm later than the last (round r runs arm r mod
// arms first). A machine that slows down during the measurement then slows
// every arm alike, instead of the arms that happened to run last. It stops
// at the first error.
func Interleave(rounds, arms int, run func(round, arm int) error) error {
	if rounds < 1 || arms < 1 {
		return fmt.Errorf("interleave: rounds = %d, arms = %d: both must be at least 1", rounds, arms)
	}
	for r := range rounds {
		for k := range arms {
			if err := run(r, (r+k)%arms); err != nil {
				return err
			}
		}
	}
	return nil
}

// Lease is the arithmetic of choosing a lease length for a job: how long a
// dead worker's job stays hidden, and what its heartbeats cost.
type Lease struct {
	Runtime time.Duration // how long the job runs
	Lease   time.Duration // the lease length; a heartbeat every quarter lease renews it
	Poll    time.Duration // how often an idle worker looks at the pool (lease.Config.Poll)
	// UnitsPerHeartbeat is the write units one heartbeat costs: 3 in
	// notebook 05's executor (1 on the item, 2 on the leases index whose
	// sort key it moves).
	UnitsPerHeartbeat float64
}

// ReapInterval is the longest time between two reaps of an idle worker:
// its claim loop looks once a Poll and reaps on the first look at least
// lease.ReapEvery(Poll, Lease) after the last reap, so the reaps fall on
// whole polls: ReapEvery rounded up to a multiple of Poll.
func (l Lease) ReapInterval() time.Duration {
	every := lease.ReapEvery(l.Poll, l.Lease)
	if l.Poll <= 0 {
		return every
	}
	return (every + l.Poll - 1) / l.Poll * l.Poll
}

// Detection is the longest time from a worker's death to another worker
// taking its job over, by the rule the executor's reaper keeps (package
// lease, reap): a reaper takes a lease over only once it has seen the
// job's fence_token and lease_until unchanged for more than a whole Lease
// on its own monotonic clock, never by comparing lease_until with a clock.
// The worker may die just after a heartbeat landed; the reaper's first
// look at that heartbeat's lease_until comes up to one ReapInterval later,
// and the take-over on the first reap more than a Lease after that look:
// Lease + 2 ReapIntervals at worst, plus the reap's own Query and
// transaction, so a Detection equal to a target misses it.
func (l Lease) Detection() time.Duration { return l.Lease + 2*l.ReapInterval() }

// Heartbeats is the number of heartbeats a job that runs to the end sends:
// one every quarter lease, none at the start (the claim sets the lease).
func (l Lease) Heartbeats() int {
	if l.Lease <= 0 {
		return 0
	}
	return int(l.Runtime / (l.Lease / 4))
}

// HeartbeatUnits is the write units of a job's heartbeats.
func (l Lease) HeartbeatUnits() float64 { return float64(l.Heartbeats()) * l.UnitsPerHeartbeat }

// AllFail is the probability that a job whose attempts fail independently
// with probability p fails every one of its 1 + maxRetry attempts: the
// chance that a merely flaky job ends in the dead-letter queue.
func AllFail(p float64, maxRetry int) float64 {
	if maxRetry < 0 {
		return math.NaN()
	}
	return math.Pow(p, float64(1+maxRetry))
}

// BackoffTotal is the time a job spends in backoff when all of its retries
// run: first, 2 × first, 4 × first, ... for maxRetry retries, which is
// first × (2^maxRetry − 1).
func BackoffTotal(first float64, maxRetry int) float64 {
	if maxRetry < 0 {
		return math.NaN()
	}
	return first * (math.Pow(2, float64(maxRetry)) - 1)
}

// Percentile is the nearest-rank q-quantile of xs, the module's one rule
// (queuekit.Quantile), as the workshop computes p95 waits. It is NaN for no
// values or q outside (0, 1]: a table cell that says so.
func Percentile(xs []float64, q float64) float64 {
	if v, ok := queuekit.Quantile(xs, q); ok {
		return v
	}
	return math.NaN()
}

// PacedWorkers is the largest number of workers that, each taking one
// request per slice of sliceSeconds, ask a source for at most limit requests
// a second: floor(limit × sliceSeconds), at least 1 (one worker is the
// slowest pace a pool has; below it a worker must wait between slices).
func PacedWorkers(limit, sliceSeconds float64) int {
	if !(limit > 0) || !(sliceSeconds > 0) {
		return 0
	}
	return max(1, int(math.Floor(limit*sliceSeconds+1e-9)))
}
