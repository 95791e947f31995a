package fleetplan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// DynamoDB's and SQS's limits the rows are checked against (AWS's defaults).
const (
	PartitionReadUnits  = capacity.PartitionReadUnits  // read units one partition serves a second
	PartitionWriteUnits = capacity.PartitionWriteUnits // write units one partition serves a second
	TableQuota          = 40_000                       // default per-table (and per-index) quota, units a second, on demand
	SQSInFlightLimit    = 120_000                      // in-flight messages of one standard queue
)

// Limits of the inputs: far beyond any fleet, so that no sizing overflows.
const (
	MaxExecutors  = 100_000_000
	MaxJobsPerDay = 1e15 // far past what 2,500 tables serve, so that tables per region binds first
)

// Assumptions are the constants of a plan. Every field must be set (no zero
// value means a default): start from Seed003 and change what differs.
type Assumptions struct {
	JobSeconds       float64 // W: how long a job holds a slot
	SlotsPerExecutor int     // T: jobs one executor runs at once
	JobItemBytes     int     // B: a job item's size as DynamoDB counts it
	IndexEntryBytes  int     // E: a due-index entry (keys, fence_token, lease_until)
	StatusReads      float64 // eventually consistent GetItems a job (viewJob)

	JobLease     time.Duration // L: a job's lease, renewed every L/4
	ShardLease   time.Duration // a shard's and a member's lease, renewed (and shards read) every quarter
	DispatchPoll time.Duration // how often a dispatcher Queries each shard it owns
	PollPage     int           // M: entries one poll Query returns at most

	DispatcherJobsPerSecond float64 // R: jobs one dispatcher hands off a second
	MinDispatchers          int     // dispatchers a cell keeps at least
	ShardsPerDispatcher     int     // shards each dispatcher owns at least
	MaxUserJobsPerSecond    float64 // the API's admission limit per user_id

	KeyUtilization   float64 // U_k: share of a partition one key may take
	QuotaUtilization float64 // U_q: share of the table quota a table or index may take

	ReceiveWait       time.Duration // an executor's long poll
	VisibilityTimeout time.Duration // V: a received message's time to its delete
	SQSBatch          int           // messages per SendMessageBatch at most
	MaxTables         int           // cells (tables) a region holds at most

	OneTierPoll time.Duration // one tier: how often an owner polls an idle shard (fleet.Options.Poll)
}

// Seed003 are seed 003's assumptions: 5-minute jobs, 32 threads, 1 KB
// items; a job lease of 10 minutes (one heartbeat for a 5-minute job);
// package fleet's 6 s shard lease; dispatchers poll each shard twice a
// second, 500 entries a page, and hand off 500 jobs a second each; 2
// dispatchers at least, 4 shards each at least; 100 jobs a second per user;
// keys at half a partition, tables at 80 % of the quota; 20 s long polls,
// 10 s visibility, batches of 10; 2,500 tables (AWS's default quota of
// tables per region); one tier polls idle shards every 50 ms (fleet's
// default).
var Seed003 = Assumptions{
	JobSeconds: 300, SlotsPerExecutor: 32, JobItemBytes: 1024, IndexEntryBytes: 200, StatusReads: 1,
	JobLease: 10 * time.Minute, ShardLease: 6 * time.Second, DispatchPoll: 500 * time.Millisecond, PollPage: 500,
	DispatcherJobsPerSecond: 500, MinDispatchers: 2, ShardsPerDispatcher: 4, MaxUserJobsPerSecond: 100,
	KeyUtilization: 0.5, QuotaUtilization: 0.8,
	ReceiveWait: 20 * time.Second, VisibilityTimeout: 10 * time.Second, SQSBatch: 10, MaxTables: 2500,
	OneTierPoll: 50 * time.Millisecond,
}

// Validate checks every assumption.
func (a Assumptions) Validate() error {
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	util := func(v float64) bool { return v > 0 && v <= 1 }
	switch {
	case !pos(a.JobSeconds) || a.JobSeconds > 86_400*366:
		return fmt.Errorf("job seconds %v: want (0, one year]", a.JobSeconds)
	case a.SlotsPerExecutor < 1 || a.SlotsPerExecutor > 100_000:
		return fmt.Errorf("slots per executor %d: want 1 to 100,000", a.SlotsPerExecutor)
	case a.JobItemBytes < 1 || a.JobItemBytes > 400*1024 || a.IndexEntryBytes < 1 || a.IndexEntryBytes > a.JobItemBytes:
		return fmt.Errorf("job item %d B, index entry %d B: want 1 B to 400 KB, the entry no larger than the item", a.JobItemBytes, a.IndexEntryBytes)
	case !(a.StatusReads >= 0) || a.StatusReads > 1000:
		return fmt.Errorf("status reads %v: want 0 to 1,000 a job", a.StatusReads)
	case a.JobLease <= 0 || a.ShardLease <= 0 || a.DispatchPoll <= 0 || a.ReceiveWait <= 0 || a.VisibilityTimeout <= 0 || a.OneTierPoll <= 0:
		return fmt.Errorf("job lease %s, shard lease %s, dispatch poll %s, receive wait %s, visibility %s, one-tier poll %s: want each > 0",
			a.JobLease, a.ShardLease, a.DispatchPoll, a.ReceiveWait, a.VisibilityTimeout, a.OneTierPoll)
	case a.PollPage < 1 || a.SQSBatch < 1 || a.SQSBatch > capacity.MaxSQSBatch:
		return fmt.Errorf("poll page %d, SQS batch %d: want a page of at least 1 and a batch of 1 to %d", a.PollPage, a.SQSBatch, capacity.MaxSQSBatch)
	case !pos(a.DispatcherJobsPerSecond) || a.MinDispatchers < 1 || a.ShardsPerDispatcher < 1 || !pos(a.MaxUserJobsPerSecond):
		return fmt.Errorf("dispatcher rate %v, min dispatchers %d, shards per dispatcher %d, user rate %v: want each > 0",
			a.DispatcherJobsPerSecond, a.MinDispatchers, a.ShardsPerDispatcher, a.MaxUserJobsPerSecond)
	case !util(a.KeyUtilization) || !util(a.QuotaUtilization):
		return fmt.Errorf("key utilisation %v, quota utilisation %v: want fractions in (0, 1]", a.KeyUtilization, a.QuotaUtilization)
	case a.MaxTables < 1:
		return fmt.Errorf("max tables %d: want at least 1", a.MaxTables)
	}
	return nil
}

// Heartbeats is h = max(0, ⌈W / (L/4)⌉ − 1): the lease renewals one job
// sends before it ends.
func (a Assumptions) Heartbeats() int {
	beat := a.JobLease.Seconds() / 4
	return max(0, int(math.Ceil(a.JobSeconds/beat-1e-9))-1)
}

// TableWriteUnitsPerJob is (3 + h)·⌈B/1 KB⌉: submit, claim, heartbeats, end.
func (a Assumptions) TableWriteUnitsPerJob() float64 {
	return float64(3+a.Heartbeats()) * writeUnits(a.JobItemBytes)
}

// IndexWriteUnitsPerJob is (4 + 2h)·⌈E/1 KB⌉: put at submit, a moved key at
// the claim and each heartbeat, a delete at the end.
func (a Assumptions) IndexWriteUnitsPerJob() float64 {
	return float64(4+2*a.Heartbeats()) * writeUnits(a.IndexEntryBytes)
}

// ReadUnitsPerJob is the status reads' units: ½ per 4 KB each.
func (a Assumptions) ReadUnitsPerJob() float64 {
	return a.StatusReads * 0.5 * math.Ceil(float64(a.JobItemBytes)/4096)
}

func writeUnits(bytes int) float64 { return math.Ceil(float64(bytes) / 1024) }

// KeyRow is one partition key class: which items, and the most one key of
// the class takes a second (requests and units) against a partition's
// 3,000 read and 1,000 write units.
type KeyRow struct {
	Key           string  `json:"key"`
	Items         string  `json:"items"`
	ReadRequests  float64 `json:"read_requests_per_second"`
	WriteRequests float64 `json:"write_requests_per_second"`
	ReadUnits     float64 `json:"read_units_per_second"`
	WriteUnits    float64 `json:"write_units_per_second"`
	// ReadHeadroom and WriteHeadroom are 1 − units / the partition's limit:
	// the share of a partition left (negative: over it).
	ReadHeadroom  float64 `json:"read_headroom"`
	WriteHeadroom float64 `json:"write_headroom"`
}

// TableRow is one table or index (of one cell) against the per-table quota.
type TableRow struct {
	Name          string  `json:"name"`
	ReadUnits     float64 `json:"read_units_per_second"`
	WriteUnits    float64 `json:"write_units_per_second"`
	ReadHeadroom  float64 `json:"read_headroom"`
	WriteHeadroom float64 `json:"write_headroom"`
}

// QueueRow is one SQS queue (of one cell): requests a second and the bound
// on its in-flight messages against SQS's 120,000.
type QueueRow struct {
	Name            string  `json:"name"`
	SendRequests    float64 `json:"send_requests_per_second"`
	ReceiveRequests float64 `json:"receive_requests_per_second"`
	DeleteRequests  float64 `json:"delete_requests_per_second"`
	// DepthRequests are the dispatchers' backpressure: a GetQueueAttributes
	// (the queue's depth) before each round of looks, a round each
	// DispatchPoll per dispatcher.
	DepthRequests     float64 `json:"depth_requests_per_second"`
	InFlightBound     float64 `json:"in_flight_bound"`
	InFlightHeadroom  float64 `json:"in_flight_headroom"`
	RequestsPerSecond float64 `json:"requests_per_second"`
}

// Cost is dollars a day, on demand, at the average rates.
type Cost struct {
	DynamoDBJobs         float64 `json:"dynamodb_jobs"`          // the jobs' reads and writes
	DynamoDBControlPlane float64 `json:"dynamodb_control_plane"` // shard and member items, index polls
	SQS                  float64 `json:"sqs"`
	Total                float64 `json:"total"`
}

// Deployment is a sized fleet: what it deploys, every key class and every
// table, index and queue of one cell (all cells are alike), and its cost.
type Deployment struct {
	Design              string        `json:"design"`
	Executors           int           `json:"executors"`
	JobsPerDay          float64       `json:"jobs_per_day"`
	JobsPerSecond       float64       `json:"jobs_per_second"`      // the mean
	PeakFactor          float64       `json:"peak_factor"`          // the rows are sized at PeakFactor x the mean
	PeakJobsPerSecond   float64       `json:"peak_jobs_per_second"` // JobsPerSecond x PeakFactor
	Cells               int           `json:"cells"`                // tables (each with its due index), queues
	Dispatchers         int           `json:"dispatchers"`          // all cells
	Shards              int           `json:"shards"`               // all cells
	DispatchersPerCell  int           `json:"dispatchers_per_cell"`
	ShardsPerCell       int           `json:"shards_per_cell"`
	Queues              int           `json:"queues"`
	HeartbeatsPerJob    int           `json:"heartbeats_per_job"`
	RunningJobs         float64       `json:"running_jobs"` // λ·W at the peak rate, Little's law
	Keys                []KeyRow      `json:"keys"`
	Tables              []TableRow    `json:"tables"`
	QueueRows           []QueueRow    `json:"queue_rows"`
	USDPerDay           Cost          `json:"cost_per_day"`
	TakeoverDispatcher  time.Duration `json:"-"` // a dead dispatcher's shards are owned again within
	TakeoverExecutorJob time.Duration `json:"-"` // a dead executor's job is handed out again within
}

// Violations lists every row over its limit, one line each (none for a
// two-tier plan Plan returned without error).
func (d Deployment) Violations() []string {
	var out []string
	for _, k := range d.Keys {
		if k.ReadUnits > PartitionReadUnits {
			out = append(out, fmt.Sprintf("key %s: %s read units a second, %.1fx one partition's %d", k.Key, num(k.ReadUnits), k.ReadUnits/PartitionReadUnits, PartitionReadUnits))
		}
		if k.WriteUnits > PartitionWriteUnits {
			out = append(out, fmt.Sprintf("key %s: %s write units a second, %.1fx one partition's %d", k.Key, num(k.WriteUnits), k.WriteUnits/PartitionWriteUnits, PartitionWriteUnits))
		}
	}
	for _, t := range d.Tables {
		if u := math.Max(t.ReadUnits, t.WriteUnits); u > TableQuota {
			out = append(out, fmt.Sprintf("%s: %s units a second, %.1fx the %d quota", t.Name, num(u), u/TableQuota, TableQuota))
		}
	}
	for _, q := range d.QueueRows {
		if q.InFlightBound > SQSInFlightLimit {
			out = append(out, fmt.Sprintf("%s: up to %s messages in flight, over SQS's %d", q.Name, num(q.InFlightBound), SQSInFlightLimit))
		}
	}
	return out
}

func num(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.0f", v), ".0") }

// InputError is an input no plan can be made for (a count that is not a
// number > 0, beyond the package's bounds).
type InputError struct{ Field, Value, Want string }

func (e *InputError) Error() string { return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Want) }

// LimitError says the plan cannot serve the input and names the limit that
// binds: what is needed against what the limit allows.
type LimitError struct {
	Limit string  // the limit, e.g. "executor slots"
	Need  float64 // what the input needs
	Have  float64 // what the limit allows
	Why   string  // one sentence: how Need follows from the input, what to do
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("binding limit: %s: %s needed, %s available; %s", e.Limit, num(e.Need), num(e.Have), e.Why)
}

// TwoTier is the design of docs/design/fleet.md at N executors and J jobs
// a day.
//
// PeakFactor (0 or 1: the mean) sizes every row at that many times the
// mean rate: cells, dispatchers, shards, each key's and table's units,
// the queue's requests, and the executor slots the jobs running at the
// peak need (Little's law at the peak rate). Dollars a day stay the day's
// volume, J jobs, with the peak-sized control plane running all day.
type TwoTier struct {
	Executors  int
	JobsPerDay float64
	PeakFactor float64
	Assumptions
}

// peak is t's peak factor: 1 for 0 (the mean).
func (t TwoTier) peak() float64 {
	if t.PeakFactor == 0 {
		return 1
	}
	return t.PeakFactor
}

func checkInputs(n int, j float64) error {
	if n < 1 || n > MaxExecutors {
		return &InputError{"executors", fmt.Sprint(n), fmt.Sprintf("want a whole number from 1 to %d", MaxExecutors)}
	}
	if !(j > 0) || j > MaxJobsPerDay {
		return &InputError{"jobs per day", fmt.Sprint(j), fmt.Sprintf("want a number > 0 and at most %g", float64(MaxJobsPerDay))}
	}
	return nil
}

// Plan sizes the two-tier fleet and prices it with p: the cells,
// dispatchers and shards by the package's formulas, one row per key class,
// per table and index, per queue. A LimitError names the limit that binds
// when the input cannot be served (executor slots, tables per region); an
// InputError an input out of range.
func (t TwoTier) Plan(p prices.Table) (Deployment, error) {
	a := t.Assumptions
	if err := a.Validate(); err != nil {
		return Deployment{}, err
	}
	if err := checkInputs(t.Executors, t.JobsPerDay); err != nil {
		return Deployment{}, err
	}
	if f := t.peak(); !(f >= 1) || f > capacity.MaxPeakFactor {
		return Deployment{}, &InputError{"peak factor", fmt.Sprint(t.PeakFactor), fmt.Sprintf("want a number from 1 (the mean) to %d", capacity.MaxPeakFactor)}
	}
	lambda := t.JobsPerDay / capacity.SecondsPerDay * t.peak() // the rate the rows are sized for
	n := float64(t.Executors)
	running := lambda * a.JobSeconds
	twu, iwu, ru := a.TableWriteUnitsPerJob(), a.IndexWriteUnitsPerJob(), a.ReadUnitsPerJob()
	quota := TableQuota * a.QuotaUtilization
	cells := max(1, ceil(lambda*math.Max(twu, math.Max(iwu, ru))/quota))
	if cells > a.MaxTables {
		return Deployment{}, &LimitError{Limit: "tables per region", Need: float64(cells), Have: float64(a.MaxTables),
			Why: fmt.Sprintf("%.0f jobs a second need %d cells of one table each at %.0f %% of the %d-unit table quota; AWS's default is %d tables a region (ask for more, or fewer units per job)",
				lambda, cells, 100*a.QuotaUtilization, TableQuota, a.MaxTables)}
	}
	if slots := n * float64(a.SlotsPerExecutor); slots < running {
		least := math.Ceil(running/float64(a.SlotsPerExecutor) - 1e-9)
		advice := fmt.Sprintf("use at least %s executors", num(least))
		if least > MaxExecutors { // never advise what checkInputs refuses
			advice = fmt.Sprintf("that is %s executors, more than the %d this planner sizes: split the jobs over at least %s fleets, or make a job shorter",
				num(least), MaxExecutors, num(math.Ceil(least/MaxExecutors)))
		}
		at := ""
		if t.peak() != 1 {
			at = fmt.Sprintf(" (%s x the mean)", strconv.FormatFloat(t.peak(), 'f', -1, 64))
		}
		return Deployment{}, &LimitError{Limit: "executor slots", Need: math.Ceil(running - 1e-9), Have: slots,
			Why: fmt.Sprintf("%s jobs a second%s of %s s each keep %s running at once (Little's law), %d executors x %d slots hold %s: %s",
				fmt.Sprintf("%.1f", lambda), at, num(a.JobSeconds), num(math.Ceil(running-1e-9)), t.Executors, a.SlotsPerExecutor, num(slots), advice)}
	}
	lc := lambda / float64(cells)
	pollRate := 1 / a.DispatchPoll.Seconds()
	dc := max(a.MinDispatchers, ceil(lc/(a.DispatcherJobsPerSecond*a.QuotaUtilization)))
	kc := max(a.ShardsPerDispatcher*dc, ceil(lc*iwu/(PartitionWriteUnits*a.KeyUtilization)),
		ceil(lc/(pollRate*float64(a.PollPage)*a.KeyUtilization)))
	if kc > fleet.MaxShards {
		return Deployment{}, &LimitError{Limit: "shards per table", Need: float64(kc), Have: fleet.MaxShards,
			Why: "a cell's due index needs more shards than package fleet allows; lower the quota utilisation so that more cells share the rate"}
	}
	d, err := t.deploy(p, cells, dc, kc)
	if err != nil {
		return d, err
	}
	if v := d.Violations(); len(v) > 0 {
		return d, &LimitError{Limit: v[0], Need: 1, Have: 0, Why: "the sizing rules left a row over its limit (a bug in this package: report it with the input)"}
	}
	return d, nil
}

// deploy computes the rows, cost and takeover bounds of a two-tier fleet of
// cells cells, each with dc dispatchers and kc shards (Plan's sizing, or a
// person's choice: CheckDesign).
func (t TwoTier) deploy(p prices.Table, cells, dc, kc int) (Deployment, error) {
	a := t.Assumptions
	mean := t.JobsPerDay / capacity.SecondsPerDay
	lambda := mean * t.peak() // the rows' rate
	n := float64(t.Executors)
	running := lambda * a.JobSeconds
	twu, iwu, ru := a.TableWriteUnitsPerJob(), a.IndexWriteUnitsPerJob(), a.ReadUnitsPerJob()
	lc := lambda / float64(cells)
	nc := n / float64(cells)
	pollRate := 1 / a.DispatchPoll.Seconds()
	d := Deployment{Design: "two-tier", Executors: t.Executors, JobsPerDay: t.JobsPerDay, JobsPerSecond: mean, PeakFactor: t.peak(), PeakJobsPerSecond: lambda, Cells: cells,
		Dispatchers: cells * dc, Shards: cells * kc, DispatchersPerCell: dc, ShardsPerCell: kc, Queues: cells,
		HeartbeatsPerJob: a.Heartbeats(), RunningJobs: running}

	cp, err := ControlPlaneCost(dc, kc, a.ShardLease, p)
	if err != nil {
		return Deployment{}, fmt.Errorf("two-tier control plane: %w", err)
	}
	rebalances := 4 / a.ShardLease.Seconds() // per second, per dispatcher
	shardWrites := float64(kc) * rebalances * writeUnits(ShardItemBytes)
	memberWrites := float64(dc) * rebalances * writeUnits(MemberItemBytes)
	shardReads := cp.ReadUnitsPerHour / 3600
	pollUnits := 0.5 * math.Ceil(float64(a.PollPage*a.IndexEntryBytes)/4096)
	dueKeyReads := pollRate * pollUnits
	dueKeyWrites := lc * iwu / float64(kc)
	userWrites := a.MaxUserJobsPerSecond * twu
	userReads := a.MaxUserJobsPerSecond * ru
	d.Keys = []KeyRow{
		row("SHARD", fmt.Sprintf("the %d shard leases of a cell; read by its %d dispatchers each ShardLease/4", kc, dc),
			float64(dc)*rebalances*float64(cp.ReadRequestsPerRebalance), float64(kc)*rebalances, shardReads, shardWrites),
		row("MEMBER", fmt.Sprintf("the %d dispatchers' membership leases of a cell (executors have none)", dc),
			0, float64(dc)*rebalances, 0, memberWrites),
		row("claim_shard = k (due index)", fmt.Sprintf("the unfinished jobs of one of %d shards: one dispatcher's polls; submits, claims, heartbeats, ends", kc),
			pollRate, lc*float64(4+2*a.Heartbeats())/float64(kc), dueKeyReads, dueKeyWrites),
		row("USER#<user_id>", fmt.Sprintf("one user's jobs, at the admission limit of %s jobs a second", num(a.MaxUserJobsPerSecond)),
			a.MaxUserJobsPerSecond*a.StatusReads, a.MaxUserJobsPerSecond*float64(3+a.Heartbeats()), userReads, userWrites),
		row("DLQ#<k> (dead letters)", fmt.Sprintf("one of the %d dead-letter keys, were every job of the cell dead-lettered (a transactional put: 2 write units)", fleet.DeadLetterKeys),
			0, lc/fleet.DeadLetterKeys, 0, 2*lc/fleet.DeadLetterKeys),
	}
	tableReads := lc*ru + shardReads
	tableWrites := lc*twu + shardWrites + memberWrites
	indexReads := float64(kc) * dueKeyReads
	indexWrites := lc * iwu
	d.Tables = []TableRow{tableRow("table (one cell)", tableReads, tableWrites), tableRow("due index (one cell)", indexReads, indexWrites)}

	batch := math.Min(float64(a.SQSBatch), math.Max(1, lc/(float64(kc)*pollRate)))
	q := QueueRow{Name: "SQS standard queue (one cell)", SendRequests: lc / batch, ReceiveRequests: lc + nc/a.ReceiveWait.Seconds(),
		DeleteRequests: lc, DepthRequests: float64(dc) * pollRate, InFlightBound: lc * a.VisibilityTimeout.Seconds()}
	q.RequestsPerSecond = q.SendRequests + q.ReceiveRequests + q.DeleteRequests + q.DepthRequests
	q.InFlightHeadroom = 1 - q.InFlightBound/SQSInFlightLimit
	d.QueueRows = []QueueRow{q}

	// Dollars: the day's volume (the mean rate) for what each job sends,
	// the peak-sized control plane, polls and empty receives all day.
	c := float64(cells) * capacity.SecondsPerDay
	lm := mean / float64(cells)
	meanBatch := math.Min(float64(a.SQSBatch), math.Max(1, lm/(float64(kc)*pollRate))) // a look's page at the mean rate
	meanRequests := lm/meanBatch + lm + nc/a.ReceiveWait.Seconds() + lm + q.DepthRequests
	d.USDPerDay.DynamoDBJobs = c * (p.ReadCost(lm*ru) + p.WriteCost(lm*(twu+iwu)))
	d.USDPerDay.DynamoDBControlPlane = c * (p.ReadCost(shardReads+indexReads) + p.WriteCost(shardWrites+memberWrites))
	d.USDPerDay.SQS = c * meanRequests * p.SQSStandardPerMillion / 1e6
	d.USDPerDay.Total = d.USDPerDay.DynamoDBJobs + d.USDPerDay.DynamoDBControlPlane + d.USDPerDay.SQS

	// A dead dispatcher's shards: stale after one ShardLease seen unchanged,
	// read at the next look (ShardLease/4), then polled at once.
	d.TakeoverDispatcher = a.ShardLease + a.ShardLease/4 + a.DispatchPoll
	// A dead executor's job: its lease runs out (at most L after its last
	// renewal), the owner sees it due at its next poll and waits one more
	// lease unchanged on its own clock, then sends it; an executor claims it
	// as soon as one has a free slot.
	d.TakeoverExecutorJob = 2*a.JobLease + a.DispatchPoll
	return d, nil
}

// OneTier is package fleet's fleet as it is: N workers each reading the K
// shard items and renewing a MEMBER item every ShardLease/4.
type OneTier struct {
	Workers    int
	JobsPerDay float64
	Shards     int
	Assumptions
}

// Plan computes the one-tier fleet's rows (one table, no queue). It never
// refuses a size for a limit: Violations lists the rows over one.
func (o OneTier) Plan(p prices.Table) (Deployment, error) {
	a := o.Assumptions
	if err := a.Validate(); err != nil {
		return Deployment{}, err
	}
	if err := checkInputs(o.Workers, o.JobsPerDay); err != nil {
		return Deployment{}, err
	}
	cp, err := ControlPlaneCost(o.Workers, o.Shards, a.ShardLease, p)
	if err != nil {
		return Deployment{}, fmt.Errorf("one-tier control plane: %w", err)
	}
	lambda := o.JobsPerDay / capacity.SecondsPerDay
	twu, ru := a.TableWriteUnitsPerJob(), a.ReadUnitsPerJob()
	n, k := float64(o.Workers), float64(o.Shards)
	rebalances := 4 / a.ShardLease.Seconds()
	shardReads := cp.ReadUnitsPerHour / 3600
	shardWrites := k * rebalances * writeUnits(ShardItemBytes)
	memberWrites := n * rebalances * writeUnits(MemberItemBytes)
	pollRate := 1 / a.OneTierPoll.Seconds()
	// package fleet's due index projects every attribute (entries of B):
	// an idle poll reads nothing and is billed ½ unit.
	dueKeyReads := pollRate * 0.5
	dueKeyWrites := lambda * float64(4+2*a.Heartbeats()) * writeUnits(a.JobItemBytes) / k
	d := Deployment{Design: "one-tier", Executors: o.Workers, JobsPerDay: o.JobsPerDay, JobsPerSecond: lambda, Cells: 1,
		Shards: o.Shards, ShardsPerCell: o.Shards, HeartbeatsPerJob: a.Heartbeats(), RunningJobs: lambda * a.JobSeconds}
	d.Keys = []KeyRow{
		row("SHARD", fmt.Sprintf("the %d shard leases; read by all %d workers each ShardLease/4", o.Shards, o.Workers),
			n*rebalances*float64(cp.ReadRequestsPerRebalance), k*rebalances, shardReads, shardWrites),
		row("MEMBER", fmt.Sprintf("the %d workers' membership leases", o.Workers), 0, n*rebalances, 0, memberWrites),
		row("claim_shard = k (due index)", fmt.Sprintf("the unfinished jobs of one of %d shards: its owner's idle polls (at least); submits, claims, heartbeats, ends", o.Shards),
			pollRate, lambda*float64(4+2*a.Heartbeats())/k, dueKeyReads, dueKeyWrites),
		row("USER#<user_id>", fmt.Sprintf("one user's jobs, at %s jobs a second", num(a.MaxUserJobsPerSecond)),
			a.MaxUserJobsPerSecond*a.StatusReads, a.MaxUserJobsPerSecond*float64(3+a.Heartbeats()), a.MaxUserJobsPerSecond*ru, a.MaxUserJobsPerSecond*twu),
	}
	indexWrites := lambda * float64(4+2*a.Heartbeats()) * writeUnits(a.JobItemBytes)
	d.Tables = []TableRow{
		tableRow("table", lambda*ru+shardReads, lambda*twu+shardWrites+memberWrites),
		tableRow("due index", k*dueKeyReads, indexWrites),
	}
	day := float64(capacity.SecondsPerDay)
	d.USDPerDay.DynamoDBJobs = day * (p.ReadCost(lambda*ru) + p.WriteCost(lambda*twu+indexWrites))
	d.USDPerDay.DynamoDBControlPlane = day * (p.ReadCost(shardReads+k*dueKeyReads) + p.WriteCost(shardWrites+memberWrites))
	d.USDPerDay.Total = d.USDPerDay.DynamoDBJobs + d.USDPerDay.DynamoDBControlPlane
	return d, nil
}

func row(key, items string, rr, wr, ru, wu float64) KeyRow {
	return KeyRow{Key: key, Items: items, ReadRequests: rr, WriteRequests: wr, ReadUnits: ru, WriteUnits: wu,
		ReadHeadroom: 1 - ru/PartitionReadUnits, WriteHeadroom: 1 - wu/PartitionWriteUnits}
}

func tableRow(name string, ru, wu float64) TableRow {
	return TableRow{Name: name, ReadUnits: ru, WriteUnits: wu, ReadHeadroom: 1 - ru/TableQuota, WriteHeadroom: 1 - wu/TableQuota}
}

// ceil rounds up, forgiving float noise (1e-9) so that an exact quotient
// such as 6,944.4/500 rounds as a person would.
func ceil(v float64) int { return int(math.Ceil(v - 1e-9)) }
