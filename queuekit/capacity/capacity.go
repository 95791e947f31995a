// Package capacity sizes the job queue of seed 003 (100 M jobs a day) from
// first principles: the fleet of worker machines, the DynamoDB request units
// and partitions the job table needs, the SQS requests, and what each costs
// per day. Every formula is stated here; the tests derive every figure again
// by hand.
//
// # Fleet
//
// The average arrival rate is λ = jobs per day / 86,400 s. Arrivals are not
// flat (notebook 03 showed batched arrivals), so the planner sizes for the
// peak: λ_peak = λ · P, where the peak factor P = (most arrivals in one bin) /
// (mean arrivals per bin) comes from an arrival profile (PeakFactor). One
// night of a few jobs makes that ratio mostly noise: PeakStudy estimates it
// from an arrival process instead (a non-homogeneous Poisson process with a
// rate per bin, e.g. BinRates of a history), and returns its spread over
// simulated nights (median, p95, max); HistoryPeaks does it for the workload
// history in one call.
// Little's law gives the jobs in service at once,
//
//	L = λ_peak · W,   W = job minutes · 60 s,
//
// and one machine holds min(T, ⌊M / m⌋) jobs: T worker threads, and M / m
// jobs by memory (machine memory M over job memory m, decimal gigabytes:
// 1 GB = 1,000 MB, as the seed writes them). The machines each constraint
// needs at a target utilisation U (0 < U <= 1) are
//
//	by threads = ⌈L / (T·U)⌉,   by memory = ⌈L / (⌊M/m⌋·U)⌉,
//
// and the fleet is the larger; that constraint binds. U < 1 is headroom: a
// fleet run at U has 1/U − 1 of spare slots for bursts beyond the peak factor
// and for failures.
//
// The queueing view treats the fleet as one pool of c = machines · slots
// servers with exponential service (mmc.Queue, Erlang C through the stable
// Erlang B recursion): the probability a job waits and its mean and p95 wait.
// At this scale the pool is huge (c ≈ 347,000 slots) and Erlang C says a pool
// that large can run very close to ρ = 1 with waits of seconds (the
// square-root staffing rule: c ≈ a + β√a serves offered load a with a wait
// probability set by β). A real fleet is not one pool: jobs are dispatched to
// machines, so treat the pool figure as the best case.
//
// # DynamoDB
//
// A job's life writes the job item once per state transition (Lifecycle:
// submit NOT_STARTED, CLAIMED, PROCESSING, then SUCCESS or FATAL_FAILURE: 4
// writes), plus heartbeats if they go to DynamoDB (seed 003 keeps them in a
// local database: 0). A write costs ⌈item KB / 1 KB⌉ write units. The due-time
// index (a sparse GSI holding only claimable jobs) costs one index write when
// the job is put and one when the claim removes the key attribute: 2 per job
// (AWS: a table write that adds an item to a GSI costs one index write, one
// that deletes the indexed attribute costs one, one that changes the index key
// costs two). Reads: each job is read once by its user (GetItem, eventually
// consistent: ½ unit per 4 KB) and found by a poll Query of the index that
// returns PollBatch items at a time, charged on the total size read, rounded
// up to 4 KB, halved for eventual consistency:
//
//	poll units per job = ½ · ⌈PollBatch · index item KB / 4⌉ / PollBatch.
//
// Units per second are per-job units times λ_peak. A partition serves at most
// 1,000 write units and 3,000 read units per second, so an index whose
// partition key is the shard must have
//
//	shards = max(⌈index WCU/s / (1,000·U)⌉, ⌈index RCU/s / (3,000·U)⌉).
//
// Cost per day: on demand bills each request, so it follows the average rate,
//
//	on-demand $/day = 86,400 · (λ·w · price per write unit + λ·r · price per read unit);
//
// provisioned capacity is bought by the hour for the peak at utilisation U,
//
//	provisioned $/day = 24 · (λ_peak·w / U · $/WCU-hour + λ_peak·r / U · $/RCU-hour).
//
// With the 2026 prices, one unit used all hour costs 3,600 × $0.625/10⁶ =
// $0.00225 on demand against $0.00065 provisioned: provisioned is cheaper
// whenever its average utilisation exceeds 0.00065/0.00225 ≈ 28.9 % (the
// same ratio holds for reads).
//
// # SQS
//
// A job is one message: SendMessage, ReceiveMessage, DeleteMessage, each a
// billed request per 64 KB chunk of payload. Batching b messages (b <= 10)
// into one call divides the requests by b, as long as the batch's payload fits
// in one 64 KB chunk:
//
//	requests per job = (2·⌈b · payload KB / 64⌉ + 1) / b.
//
// Prices live in the module's one dated table, prices.Table2026 (here
// Prices2026), with its sources; nothing else in the module holds a price.
package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"math"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/mmc"
)

// SecondsPerDay is 24 · 60 · 60.
const SecondsPerDay = 24 * 60 * 60

// Per-partition throughput limits of DynamoDB (per second), for tables and
// global secondary indexes alike.
const (
	PartitionWriteUnits = 1000
	PartitionReadUnits  = 3000
)

// Limits of a Fleet's inputs, stated so that a sizing never overflows an int
// or prints an infinite cost: far beyond any real fleet, checked by Validate.
const (
	MaxJobsPerDay        = 1e12       // a trillion jobs a day (11.6 million a second)
	MaxThreadsPerMachine = 100_000    // worker threads of one machine
	MaxJobMemoryMB       = 10_000_000 // 10 TB for one job
	MaxMachineMemoryGB   = 1_000_000  // 1 PB for one machine
	MaxPeakFactor        = 1000       // peak rate over the average
)

// Fleet is the input of a fleet sizing.
type Fleet struct {
	JobsPerDay        float64 // jobs submitted per day
	JobMinutes        float64 // how long one job holds a worker thread
	ThreadsPerMachine int     // worker threads of one machine
	JobMemoryMB       float64 // memory one running job needs, MB
	MachineMemoryGB   float64 // memory of one machine, decimal GB (1 GB = 1,000 MB)
	PeakFactor        float64 // peak arrival rate / average; 0 means 1
	TargetUtilization float64 // share of the slots the peak may fill, in (0, 1]; 0 means 1
}

func (f Fleet) withDefaults() Fleet {
	f.PeakFactor = cmp.Or(f.PeakFactor, 1)
	f.TargetUtilization = cmp.Or(f.TargetUtilization, 1)
	return f
}

// Validate checks the inputs and names the first bad one.
func (f Fleet) Validate() error {
	f = f.withDefaults()
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("%s = %v: %s", name, v, want)
	}
	switch {
	case !finitePositive(f.JobsPerDay) || f.JobsPerDay > MaxJobsPerDay:
		return bad("jobs per day", f.JobsPerDay, fmt.Sprintf("want a positive number up to %.0e, e.g. 100000000", float64(MaxJobsPerDay)))
	case !finitePositive(f.JobMinutes) || f.JobMinutes > queuekit.MaxRuntimeMinutes:
		return bad("job minutes", f.JobMinutes, fmt.Sprintf("want a positive number of minutes up to %d (a week), e.g. 5", queuekit.MaxRuntimeMinutes))
	case f.ThreadsPerMachine < 1 || f.ThreadsPerMachine > MaxThreadsPerMachine:
		return bad("threads per machine", f.ThreadsPerMachine, fmt.Sprintf("want 1 to %d, e.g. 32", MaxThreadsPerMachine))
	case !finitePositive(f.JobMemoryMB) || f.JobMemoryMB > MaxJobMemoryMB:
		return bad("job memory MB", f.JobMemoryMB, fmt.Sprintf("want a positive number of megabytes up to %d, e.g. 50", MaxJobMemoryMB))
	case !finitePositive(f.MachineMemoryGB) || f.MachineMemoryGB > MaxMachineMemoryGB:
		return bad("machine memory GB", f.MachineMemoryGB, fmt.Sprintf("want a positive number of gigabytes up to %d, e.g. 16", MaxMachineMemoryGB))
	case f.MachineMemoryGB*1000 < f.JobMemoryMB:
		return fmt.Errorf("machine memory %v GB is less than one job's %v MB: no job fits; give the machine more memory", f.MachineMemoryGB, f.JobMemoryMB)
	case !(f.PeakFactor >= 1) || f.PeakFactor > MaxPeakFactor:
		return bad("peak factor", f.PeakFactor, fmt.Sprintf("want a number from 1 (flat arrivals) to %d", MaxPeakFactor))
	case !(f.TargetUtilization > 0 && f.TargetUtilization <= 1):
		return bad("target utilization", f.TargetUtilization, "want a fraction in (0, 1], e.g. 0.8")
	}
	return nil
}

func finitePositive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// FleetPlan is the sized fleet.
type FleetPlan struct {
	AverageArrivalsPerSecond float64 // λ = jobs per day / 86,400
	ArrivalsPerSecond        float64 // λ_peak = λ · peak factor: what the fleet is sized for
	ConcurrentJobs           float64 // Little's law: λ_peak · job seconds
	SlotsByThreads           int     // jobs one machine runs at once, by threads
	SlotsByMemory            int     // jobs one machine holds at once, by memory: ⌊GB·1000 / MB⌋
	MachinesByThreads        int
	MachinesByMemory         int
	Machines                 int     // the larger of the two
	Binding                  string  // "threads", "memory" or "threads and memory"
	Utilization              float64 // concurrent jobs / (machines · usable slots) at the peak
}

// Slots is the number of jobs one machine runs at once: the smaller of its
// thread and memory slots.
func (p FleetPlan) Slots() int { return min(p.SlotsByThreads, p.SlotsByMemory) }

// ceilUnits is ⌈x⌉ for a count derived from floats: a value within 1e-9 of
// an integer is that integer (so 3.0000000001 machines is 3, not 4).
func ceilUnits(x float64) int {
	r := math.Round(x)
	if math.Abs(x-r) < 1e-9*math.Max(1, math.Abs(x)) {
		return int(r)
	}
	return int(math.Ceil(x))
}

// Plan sizes the fleet (see the package doc for the formulas).
func (f Fleet) Plan() (FleetPlan, error) {
	if err := f.Validate(); err != nil {
		return FleetPlan{}, err
	}
	f = f.withDefaults()
	var p FleetPlan
	p.AverageArrivalsPerSecond = f.JobsPerDay / SecondsPerDay
	p.ArrivalsPerSecond = p.AverageArrivalsPerSecond * f.PeakFactor
	p.ConcurrentJobs = p.ArrivalsPerSecond * f.JobMinutes * 60
	p.SlotsByThreads = f.ThreadsPerMachine
	p.SlotsByMemory = int(math.Floor(f.MachineMemoryGB*1000/f.JobMemoryMB + 1e-9))
	p.MachinesByThreads = ceilUnits(p.ConcurrentJobs / (float64(p.SlotsByThreads) * f.TargetUtilization))
	p.MachinesByMemory = ceilUnits(p.ConcurrentJobs / (float64(p.SlotsByMemory) * f.TargetUtilization))
	p.MachinesByThreads = max(p.MachinesByThreads, 1)
	p.MachinesByMemory = max(p.MachinesByMemory, 1)
	switch {
	case p.MachinesByThreads > p.MachinesByMemory:
		p.Machines, p.Binding = p.MachinesByThreads, "threads"
	case p.MachinesByMemory > p.MachinesByThreads:
		p.Machines, p.Binding = p.MachinesByMemory, "memory"
	default:
		p.Machines, p.Binding = p.MachinesByThreads, "threads and memory"
	}
	p.Utilization = p.ConcurrentJobs / float64(p.Machines*p.Slots())
	return p, nil
}

// Pool is the queueing view of a fleet: all its slots as one M/M/c pool.
type Pool struct {
	Servers         int     // c = machines · slots
	Utilization     float64 // ρ = λ_peak · W / c
	PWait           float64 // Erlang C: probability a job waits for a slot
	MeanWaitSeconds float64
	P95WaitSeconds  float64
}

// ErrNoSteadyState is returned by Pool when the fleet runs at ρ >= 1.
var ErrNoSteadyState = errors.New("the pool runs at utilisation >= 1: no steady state, the queue grows; lower --target-utilization")

// Pool solves the fleet as one M/M/c pool at the peak rate with mmc: c =
// machines · slots servers, service rate 1 / job seconds. A fleet sized at
// utilisation 1 may have ρ = 1 exactly: then it returns ErrNoSteadyState.
func (f Fleet) Pool(p FleetPlan) (Pool, error) {
	f = f.withDefaults()
	c := p.Machines * p.Slots()
	q := mmc.Queue{Lambda: p.ArrivalsPerSecond, Mu: 1 / (f.JobMinutes * 60), C: c}
	pool := Pool{Servers: c, Utilization: q.Rho()}
	if pool.Utilization >= 1 {
		return pool, ErrNoSteadyState
	}
	m, err := q.Solve()
	if err != nil {
		return pool, fmt.Errorf("fleet as one pool of %d slots: %w", c, err)
	}
	pool.PWait, pool.MeanWaitSeconds, pool.P95WaitSeconds = m.PWait, m.Wq, m.WaitP95
	return pool, nil
}

// PeakFactor bins arrival times (any unit, e.g. minutes) into bins of width
// bin over [0, span) and returns the largest bin's count over the mean count
// per bin: 1 for perfectly flat arrivals, span/bin when everything arrives in
// one bin. Arrivals outside [0, span) are an error.
func PeakFactor(arrivals []float64, span, bin float64) (float64, error) {
	if len(arrivals) == 0 {
		return 0, errors.New("peak factor: no arrivals")
	}
	if !finitePositive(span) || !finitePositive(bin) || bin > span {
		return 0, fmt.Errorf("peak factor: span %v and bin %v: want 0 < bin <= span", span, bin)
	}
	n := int(math.Ceil(span/bin - 1e-9))
	counts := make([]int, n)
	for _, a := range arrivals {
		if !(a >= 0 && a < span) {
			return 0, fmt.Errorf("peak factor: arrival %v outside [0, %v)", a, span)
		}
		counts[min(int(a/bin), n-1)]++
	}
	peak := 0
	for _, c := range counts {
		peak = max(peak, c)
	}
	mean := float64(len(arrivals)) / float64(n)
	return float64(peak) / mean, nil
}
