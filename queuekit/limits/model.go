package limits

import (
	"math"
	"time"
)

// AWS's figures, each divided by the layer's scale S before use (see the
// package doc for the page each comes from).
const (
	PartitionWriteUnits = 1000             // write units a partition serves per second
	PartitionReadUnits  = 3000             // read units a partition serves per second
	NewOnDemandWrite    = 4000             // warm write throughput of a new on-demand table or GSI
	NewOnDemandRead     = 12000            // warm read throughput of a new on-demand table or GSI
	TableQuota          = 40000            // default per-table quota of read and of write units per second
	BurstSeconds        = 300              // unused provisioned capacity kept for bursts
	PeakWindow          = 30 * time.Minute // on-demand: traffic past double the previous peak within this may throttle
)

// Billing modes, as CreateTable names them.
const (
	Provisioned = "PROVISIONED"
	OnDemand    = "PAY_PER_REQUEST"
)

// Units is a pair of read and write units (per second for a throughput).
type Units struct{ Read, Write float64 }

// bucket is a token bucket of capacity units refilled at rate units per
// second. A request is admitted while the bucket holds its estimate, or
// when the bucket is full (a request bigger than a full bucket is served
// and leaves the bucket in debt, so big items are slow, never refused for
// ever).
type bucket struct {
	rate, capacity, level float64
	last                  time.Time
}

func newBucket(rate, capacity, start float64, now time.Time) *bucket {
	return &bucket{rate: rate, capacity: capacity, level: math.Min(start, capacity), last: now}
}

func (b *bucket) refill(now time.Time) {
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.level = math.Min(b.capacity, b.level+dt*b.rate)
		b.last = now
	}
}

func (b *bucket) admits(now time.Time, est float64) bool {
	b.refill(now)
	return b.level >= est || b.level >= b.capacity
}

// limit is one table-level limit of an index: its kind (the last part of
// a throttling reason) and its read and write buckets (nil: no limit).
type limit struct {
	kind        string
	read, write *bucket
}

// part is one partition: its read and write buckets.
type part struct{ read, write *bucket }

// index is the base table (name "") or one GSI: its key schema, its
// throughput settings as CreateTable/UpdateTable asked for them, its
// partitions and its table-level limits.
type index struct {
	name, arn  string
	pk, sk     string
	projection string
	include    []string

	mode  string
	prov  Units // provisioned capacity (PROVISIONED)
	warm  Units // warm throughput asked for (or the default of a new table)
	maxOD Units // on-demand maximum; 0 = none

	parts  []*part
	limits []limit

	// On-demand: per-second consumption of the last PeakWindow, and the
	// highest second older than that (the "previous peak").
	hist    []secUnits
	oldPeak Units
}

type secUnits struct {
	sec int64
	u   Units
}

// table is one table as the layer knows it.
type table struct {
	name     string
	base     *index
	gsis     map[string]*index
	images   map[string]Item // item images by primary key, of every write the layer passed
	complete bool            // the layer saw the table created: images holds every item
}

func (t *table) index(name string) *index {
	if name == "" {
		return t.base
	}
	return t.gsis[name]
}

// throughput is the warm throughput that sets the partition count:
// provisioned, the larger of the provisioned capacity and the warm
// throughput asked for; on demand, the larger of the warm throughput and
// double the previous peak (in AWS units: consumption times S).
func (ix *index) throughput(scale float64) Units {
	if ix.mode == Provisioned {
		return Units{math.Max(ix.prov.Read, ix.warm.Read), math.Max(ix.prov.Write, ix.warm.Write)}
	}
	return Units{math.Max(ix.warm.Read, 2*ix.oldPeak.Read*scale), math.Max(ix.warm.Write, 2*ix.oldPeak.Write*scale)}
}

// Partitions is the number of partitions a throughput needs: enough that
// no partition is asked for more than 1,000 write or 3,000 read units a
// second, at least one. It does not depend on S.
func Partitions(u Units) int {
	n := math.Max(math.Ceil(u.Write/PartitionWriteUnits), math.Ceil(u.Read/PartitionReadUnits))
	if n < 1 || math.IsNaN(n) {
		return 1
	}
	return int(n)
}

// configure (re)builds the index's limits after a CreateTable or an
// UpdateTable; partitions it already has keep their buckets.
func (ix *index) configure(scale float64, now time.Time) {
	ix.limits = nil
	if ix.mode == Provisioned {
		r, w := ix.prov.Read/scale, ix.prov.Write/scale
		ix.limits = append(ix.limits, limit{kind: "ProvisionedThroughputExceeded",
			read: newBucket(r, BurstSeconds*r, r, now), write: newBucket(w, BurstSeconds*w, w, now)})
	} else {
		q := TableQuota / scale
		ix.limits = append(ix.limits, limit{kind: "AccountLimitExceeded", read: newBucket(q, q, q, now), write: newBucket(q, q, q, now)})
		if ix.maxOD.Read > 0 || ix.maxOD.Write > 0 {
			l := limit{kind: "MaxOnDemandThroughputExceeded"}
			if r := ix.maxOD.Read / scale; r > 0 {
				l.read = newBucket(r, r, r, now)
			}
			if w := ix.maxOD.Write / scale; w > 0 {
				l.write = newBucket(w, w, w, now)
			}
			ix.limits = append(ix.limits, l)
		}
	}
	ix.resize(scale, now)
}

// resize grows the partitions to what the throughput needs (partitions
// never merge, as on AWS).
func (ix *index) resize(scale float64, now time.Time) {
	n := Partitions(ix.throughput(scale))
	r, w := PartitionReadUnits/scale, PartitionWriteUnits/scale
	for len(ix.parts) < n {
		ix.parts = append(ix.parts, &part{read: newBucket(r, r, r, now), write: newBucket(w, w, w, now)})
	}
}

func (ix *index) partition(pkValue string) int {
	return int(hashKey(pkValue) % uint64(len(ix.parts)))
}

// record adds consumption to the on-demand history and folds seconds older
// than PeakWindow into the previous peak, growing the partitions when
// double that peak needs more.
func (ix *index) record(now time.Time, u Units, scale float64) {
	if ix.mode != OnDemand {
		return
	}
	sec := now.Unix()
	if n := len(ix.hist); n > 0 && ix.hist[n-1].sec == sec {
		ix.hist[n-1].u.Read += u.Read
		ix.hist[n-1].u.Write += u.Write
	} else {
		ix.hist = append(ix.hist, secUnits{sec, u})
	}
	cut := now.Add(-PeakWindow).Unix()
	i := 0
	for i < len(ix.hist) && ix.hist[i].sec <= cut {
		ix.oldPeak.Read = math.Max(ix.oldPeak.Read, ix.hist[i].u.Read)
		ix.oldPeak.Write = math.Max(ix.oldPeak.Write, ix.hist[i].u.Write)
		i++
	}
	if i > 0 {
		ix.hist = append(ix.hist[:0], ix.hist[i:]...)
		ix.resize(scale, now)
	}
}
