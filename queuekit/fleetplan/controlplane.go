package fleetplan

import (
	"fmt"
	"math"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// Item sizes the control plane's cost is computed with: upper bounds of
// the item sizes as DynamoDB counts them (attribute names plus values). A
// shard item holds its keys, lease (fence_token, holder, lease_until), shard,
// op_nonce, a want, and at most fleet.HistoryMax+1 history entries of about 70
// bytes each; a MEMBER item its keys, lease and expires_at. Worker names
// are assumed at most 32 bytes.
const (
	ShardItemBytes  = 200 + (fleet.HistoryMax+1)*70
	MemberItemBytes = 160
)

// ControlPlane is what the fleet's control plane (shard ownership and
// membership; not the jobs) costs on DynamoDB at N workers and K shards,
// in steady state (nobody joining or leaving), from the design:
//
//   - every worker rebalances every ShardLease/4 with one strongly
//     consistent Query of the K shard items (pages of up to 1 MB): O(K) read
//     units per worker per rebalance, nothing read per other worker;
//   - each of the K owned shards is renewed every ShardLease/4 (one
//     UpdateItem, the whole item's write units), and so is each worker's
//     MEMBER item (one unit).
//
// Acquires, releases and wants happen only when the fleet changes.
type ControlPlane struct {
	Workers, Shards int
	ShardLease      time.Duration
	// Per rebalance of one worker: Query requests and read units.
	ReadRequestsPerRebalance int
	ReadUnitsPerRebalance    float64
	// Per hour, the whole fleet.
	ReadRequestsPerHour  float64
	ReadUnitsPerHour     float64
	WriteRequestsPerHour float64
	WriteUnitsPerHour    float64
	// On-demand price per hour (reads + writes).
	USDPerHour float64
}

// ControlPlaneCost computes ControlPlane for n workers, k shards and the
// shard lease, priced with p (on demand).
func ControlPlaneCost(n, k int, shardLease time.Duration, p prices.Table) (ControlPlane, error) {
	if n < 1 || k < 1 || k > fleet.MaxShards || shardLease <= 0 {
		return ControlPlane{}, fmt.Errorf("control plane cost: workers %d (>= 1), shards %d (1 to %d), shard lease %s (> 0)", n, k, fleet.MaxShards, shardLease)
	}
	bytes := float64(k * ShardItemBytes)
	pages := int(math.Max(1, math.Ceil(bytes/(1<<20))))
	readUnits := math.Max(1, math.Ceil(bytes/4096)) // strongly consistent: one unit per 4 KB
	perHour := float64(time.Hour) / float64(shardLease/4)
	c := ControlPlane{Workers: n, Shards: k, ShardLease: shardLease,
		ReadRequestsPerRebalance: pages, ReadUnitsPerRebalance: readUnits}
	c.ReadRequestsPerHour = float64(n*pages) * perHour
	c.ReadUnitsPerHour = float64(n) * readUnits * perHour
	shardWU := math.Ceil(float64(ShardItemBytes) / 1024)
	memberWU := math.Ceil(float64(MemberItemBytes) / 1024)
	c.WriteRequestsPerHour = float64(k+n) * perHour
	c.WriteUnitsPerHour = (float64(k)*shardWU + float64(n)*memberWU) * perHour
	c.USDPerHour = p.ReadCost(c.ReadUnitsPerHour) + p.WriteCost(c.WriteUnitsPerHour)
	return c, nil
}
