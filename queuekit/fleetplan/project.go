package fleetplan

import (
	"github.com/nightqueue/workshop/queuekit/capacity"
)

// Projection is the fleet on AWS, on paper: seed 003's 100 M jobs a day
// through notebook 08's model (capacity.Dynamo) with a measured lifecycle.
type Projection struct {
	JobsPerSecond float64 // average
	PeakFactor    float64
	// ShardsAverage and ShardsPeak are the due index's shards needed so
	// that no shard's partition takes more than 1,000 write units a second
	// (at utilisation 1), at the average and at the peak.
	ShardsAverage, ShardsPeak int
	// WriteUnitsPerJob, IndexWriteUnitsPerSecondPeak as the model has them.
	WriteUnitsPerJob             float64
	IndexWriteUnitsPerSecondPeak float64
	// OnDemandUSDPerDay for 100 M jobs (reads included: one status read and
	// a poll share per job).
	OnDemandUSDPerDay float64
}

// Project prices seed 003's day (capacity.Seed003) with the lifecycle l at
// the given peak factor.
func Project(l capacity.Lifecycle, peakFactor float64) (Projection, error) {
	avgFleet := capacity.Seed003
	avg, err := capacity.Dynamo(avgFleet, l, capacity.Prices2026)
	if err != nil {
		return Projection{}, err
	}
	peakFleet := capacity.Seed003
	peakFleet.PeakFactor = peakFactor
	peak, err := capacity.Dynamo(peakFleet, l, capacity.Prices2026)
	if err != nil {
		return Projection{}, err
	}
	return Projection{JobsPerSecond: capacity.Seed003.JobsPerDay / capacity.SecondsPerDay, PeakFactor: peakFactor,
		ShardsAverage: avg.WriteShards, ShardsPeak: peak.WriteShards, WriteUnitsPerJob: avg.WriteUnitsPerJob,
		IndexWriteUnitsPerSecondPeak: peak.IndexWriteUnitsPerSecond, OnDemandUSDPerDay: avg.OnDemandUSDPerDay}, nil
}

// IndexWritesPerJob is what one job costs the due index, in writes, by the
// index rules (a write that adds or removes an index entry costs one, one
// that changes the index key two): the submit puts the entry (1), the claim
// moves due_at to the lease's end (2), each heartbeat moves it again (2),
// the end removes it (1).
func IndexWritesPerJob(heartbeats int) float64 { return float64(1 + 2 + 2*heartbeats + 1) }
