package fleetlab_test

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
)

// Notebook 10's exercise with the one tier chosen: every one of seed 003's
// 10,851 machines owns shards, so the rules fail on paper and the last one
// names the key that binds; nothing runs on the layer.
func ExampleCheckFleetRoles() {
	c, err := fleetlab.CheckFleetRoles(context.Background(), fleetplan.RolesOneTier, 0, 1000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ok:", c.OK(), "ran:", c.Ran)
	// Output:
	// ✓ pass: at most 1,000 shards (package fleet) (K = 1,000)
	// ✗ not yet: at least one shard a shard owner, so that every machine polls some: K = 1,000 for 10,851 shard owners (every machine, in the one tier). Hint: a machine without a shard finds no work of its own: count the shard owners
	// ✗ not yet: every key, table and index under its limit: pk = SHARD reads 1,468,502.0 units a second, 489.5x one partition's 3,000. Hint: in the one tier every machine reads all K shard items and renews its MEMBER item each ShardLease/4: a key whose load grows with the machines outgrows one partition
	// ok: false ran: false
}
