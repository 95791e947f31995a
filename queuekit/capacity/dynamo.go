package capacity

import (
	"cmp"
	"fmt"
	"math"
)

// Lifecycle is what one job costs DynamoDB over its life (see the package
// doc). The zero value means DefaultLifecycle.
type Lifecycle struct {
	ItemKB      float64 // size of the job item, KB (1 KB = 1,024 bytes)
	StateWrites int     // writes of the job item: submit, CLAIMED, PROCESSING, final status
	Heartbeats  int     // heartbeat writes to DynamoDB per job (seed 003: to a local DB, so 0)
	IndexWrites int     // writes to the due-time GSI: put at submit, removed at claim
	IndexItemKB float64 // size of one item's projection in the index, KB
	PollBatch   int     // items one poll Query of the index returns
	StatusReads int     // eventually consistent GetItem per job (the user's view_job)
}

// DefaultLifecycle is seed 003's job: a 1 KB item written at submit and at
// CLAIMED, PROCESSING and the final status; heartbeats in a local database;
// a sparse due-time index (projection of the whole 1 KB item) written when the
// job is put and when the claim removes it; polls that return 25 due jobs;
// one status read by the user.
var DefaultLifecycle = Lifecycle{ItemKB: 1, StateWrites: 4, Heartbeats: 0, IndexWrites: 2, IndexItemKB: 1, PollBatch: 25, StatusReads: 1}

func (l Lifecycle) withDefaults() Lifecycle {
	if l == (Lifecycle{}) {
		return DefaultLifecycle
	}
	return l
}

// Limits of a Lifecycle's counts, checked by Validate.
const (
	MaxWritesPerJob = 100_000 // state writes, heartbeats, index writes or status reads of one job
	MaxPollBatch    = 100_000 // due jobs one poll Query returns
)

// Validate checks the lifecycle.
func (l Lifecycle) Validate() error {
	l = l.withDefaults()
	switch {
	case !finitePositive(l.ItemKB) || l.ItemKB > 400:
		return fmt.Errorf("item KB = %v: want a size in (0, 400] (DynamoDB items are at most 400 KB)", l.ItemKB)
	case !finitePositive(l.IndexItemKB) || l.IndexItemKB > l.ItemKB:
		return fmt.Errorf("index item KB = %v: want a size in (0, item KB = %v]", l.IndexItemKB, l.ItemKB)
	case l.StateWrites < 1 || l.Heartbeats < 0 || l.IndexWrites < 0 || l.StatusReads < 0:
		return fmt.Errorf("state writes %d, heartbeats %d, index writes %d, status reads %d: want at least 1 state write and no negative counts",
			l.StateWrites, l.Heartbeats, l.IndexWrites, l.StatusReads)
	case l.StateWrites > MaxWritesPerJob || l.Heartbeats > MaxWritesPerJob || l.IndexWrites > MaxWritesPerJob || l.StatusReads > MaxWritesPerJob:
		return fmt.Errorf("state writes %d, heartbeats %d, index writes %d, status reads %d: want at most %d each",
			l.StateWrites, l.Heartbeats, l.IndexWrites, l.StatusReads, MaxWritesPerJob)
	case l.PollBatch < 1 || l.PollBatch > MaxPollBatch:
		return fmt.Errorf("poll batch = %d: want 1 to %d items per poll", l.PollBatch, MaxPollBatch)
	}
	return nil
}

// writeUnits is the cost of one standard write of an item of kb KB.
func writeUnits(kb float64) float64 { return math.Ceil(kb - 1e-9) }

// eventualReadUnits is the cost of one eventually consistent read of kb KB.
func eventualReadUnits(kb float64) float64 { return 0.5 * math.Ceil(kb/4-1e-9) }

// TableWriteUnits is the write units one job costs the base table.
func (l Lifecycle) TableWriteUnits() float64 {
	l = l.withDefaults()
	return float64(l.StateWrites+l.Heartbeats) * writeUnits(l.ItemKB)
}

// IndexWriteUnits is the write units one job costs the due-time index.
func (l Lifecycle) IndexWriteUnits() float64 {
	l = l.withDefaults()
	return float64(l.IndexWrites) * writeUnits(l.IndexItemKB)
}

// IndexReadUnits is the read units one job costs the due-time index: its
// share of a poll Query.
func (l Lifecycle) IndexReadUnits() float64 {
	l = l.withDefaults()
	return eventualReadUnits(float64(l.PollBatch)*l.IndexItemKB) / float64(l.PollBatch)
}

// WriteUnits is the write units one job costs in all: table and index.
func (l Lifecycle) WriteUnits() float64 { return l.TableWriteUnits() + l.IndexWriteUnits() }

// ReadUnits is the read units one job costs in all: status reads and polls.
func (l Lifecycle) ReadUnits() float64 {
	l = l.withDefaults()
	return float64(l.StatusReads)*eventualReadUnits(l.ItemKB) + l.IndexReadUnits()
}

// DynamoPlan is the DynamoDB side of a plan.
type DynamoPlan struct {
	WriteUnitsPerJob         float64
	ReadUnitsPerJob          float64
	WriteUnitsPerSecond      float64 // at the peak rate, table and index
	ReadUnitsPerSecond       float64 // at the peak rate
	IndexWriteUnitsPerSecond float64 // at the peak rate, index only
	IndexReadUnitsPerSecond  float64 // at the peak rate, index only
	WriteShards              int     // partitions the due-time index needs (WriteShards)
	OnDemandUSDPerDay        float64
	ProvisionedUSDPerDay     float64
	ProvisionedWCU           float64 // capacity bought: peak / utilisation
	ProvisionedRCU           float64
}

// WriteShards is the number of shards (partition key values, each its own
// partition at best) an index needs so that no partition exceeds the limits
// at utilisation u: max(⌈wcu/(1,000·u)⌉, ⌈rcu/(3,000·u)⌉), at least 1.
func WriteShards(wcu, rcu, u float64) (int, error) {
	if !(wcu >= 0) || !(rcu >= 0) || math.IsInf(wcu, 0) || math.IsInf(rcu, 0) {
		return 0, fmt.Errorf("write shards: units %v WCU/s and %v RCU/s: want finite numbers >= 0", wcu, rcu)
	}
	if !(u > 0 && u <= 1) {
		return 0, fmt.Errorf("write shards: utilisation %v: want a fraction in (0, 1]", u)
	}
	return max(1, ceilUnits(wcu/(PartitionWriteUnits*u)), ceilUnits(rcu/(PartitionReadUnits*u))), nil
}

// Dynamo prices the lifecycle at the fleet's rates: units per second at the
// peak, on-demand cost from the average rate, provisioned cost for the peak
// at the target utilisation.
func Dynamo(f Fleet, l Lifecycle, prices Prices) (DynamoPlan, error) {
	if err := f.Validate(); err != nil {
		return DynamoPlan{}, err
	}
	if err := l.Validate(); err != nil {
		return DynamoPlan{}, err
	}
	f, l = f.withDefaults(), l.withDefaults()
	avg := f.JobsPerDay / SecondsPerDay
	peak := avg * f.PeakFactor
	u := f.TargetUtilization
	d := DynamoPlan{WriteUnitsPerJob: l.WriteUnits(), ReadUnitsPerJob: l.ReadUnits()}
	d.WriteUnitsPerSecond = peak * d.WriteUnitsPerJob
	d.ReadUnitsPerSecond = peak * d.ReadUnitsPerJob
	d.IndexWriteUnitsPerSecond = peak * l.IndexWriteUnits()
	d.IndexReadUnitsPerSecond = peak * l.IndexReadUnits()
	shards, err := WriteShards(d.IndexWriteUnitsPerSecond, d.IndexReadUnitsPerSecond, u)
	if err != nil {
		return DynamoPlan{}, err
	}
	d.WriteShards = shards
	d.OnDemandUSDPerDay = SecondsPerDay * avg * (d.WriteUnitsPerJob*prices.OnDemandPerMillionWrites + d.ReadUnitsPerJob*prices.OnDemandPerMillionReads) / 1e6
	d.ProvisionedWCU = d.WriteUnitsPerSecond / u
	d.ProvisionedRCU = d.ReadUnitsPerSecond / u
	d.ProvisionedUSDPerDay = 24 * (d.ProvisionedWCU*prices.ProvisionedWCUHour + d.ProvisionedRCU*prices.ProvisionedRCUHour)
	return d, nil
}

// SQS is how the queue is used: messages per call and payload per message.
// The zero value means no batching and a 1 KB payload.
type SQS struct {
	BatchSize int     // messages per SendMessageBatch / ReceiveMessage / DeleteMessageBatch call, 1 to 10
	PayloadKB float64 // message body size, KB
}

// MaxSQSBatch is the most messages one SQS batch call carries.
const MaxSQSBatch = 10

func (s SQS) withDefaults() SQS {
	s.BatchSize = cmp.Or(s.BatchSize, 1)
	s.PayloadKB = cmp.Or(s.PayloadKB, 1)
	return s
}

// Validate checks the batch size and payload.
func (s SQS) Validate() error {
	s = s.withDefaults()
	if s.BatchSize < 1 || s.BatchSize > MaxSQSBatch {
		return fmt.Errorf("SQS batch size = %d: want 1 to %d messages per call", s.BatchSize, MaxSQSBatch)
	}
	if !finitePositive(s.PayloadKB) || s.PayloadKB > 256 {
		return fmt.Errorf("SQS payload = %v KB: want a size in (0, 256] KB", s.PayloadKB)
	}
	return nil
}

// RequestsPerJob is the billed requests one job's message costs: send and
// receive per 64 KB chunk of the batch's payload, delete once per batch, all
// shared by the batch's messages.
func (s SQS) RequestsPerJob() float64 {
	s = s.withDefaults()
	chunks := math.Ceil(float64(s.BatchSize)*s.PayloadKB/64 - 1e-9)
	return (2*chunks + 1) / float64(s.BatchSize)
}

// SQSPlan is the SQS side of a plan.
type SQSPlan struct {
	RequestsPerJob    float64
	RequestsPerSecond float64 // at the peak rate
	USDPerDay         float64 // at the average rate, free tier not subtracted
}

// PlanSQS prices the queue at the fleet's rates.
func PlanSQS(f Fleet, s SQS, prices Prices) (SQSPlan, error) {
	if err := f.Validate(); err != nil {
		return SQSPlan{}, err
	}
	if err := s.Validate(); err != nil {
		return SQSPlan{}, err
	}
	f = f.withDefaults()
	avg := f.JobsPerDay / SecondsPerDay
	p := SQSPlan{RequestsPerJob: s.RequestsPerJob()}
	p.RequestsPerSecond = avg * f.PeakFactor * p.RequestsPerJob
	p.USDPerDay = f.JobsPerDay * p.RequestsPerJob * prices.SQSStandardPerMillion / 1e6
	return p, nil
}

// Plan is a whole capacity plan: the fleet, its pool, DynamoDB and SQS.
type Plan struct {
	Fleet   FleetPlan
	Pool    *Pool // nil when the pool has no steady state (ρ >= 1)
	Dynamo  DynamoPlan
	SQS     SQSPlan
	Prices  Prices
	Problem string // why Pool is nil, if it is
}

// Size makes the whole plan with the given prices.
func Size(f Fleet, l Lifecycle, s SQS, prices Prices) (Plan, error) {
	fp, err := f.Plan()
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Fleet: fp, Prices: prices}
	pool, err := f.Pool(fp)
	if err == nil {
		p.Pool = &pool
	} else {
		p.Problem = err.Error()
	}
	if p.Dynamo, err = Dynamo(f, l, prices); err != nil {
		return Plan{}, err
	}
	if p.SQS, err = PlanSQS(f, s, prices); err != nil {
		return Plan{}, err
	}
	return p, nil
}
