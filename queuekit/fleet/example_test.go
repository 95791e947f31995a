package fleet_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/fleet"
)

// Every worker computes the same assignment from the live members, sorted:
// shard k goes to member k mod n.
func ExampleAssign() {
	members := []string{"w1", "w2", "w3"}
	for _, m := range members {
		fmt.Println(m, fleet.Assign(members, 8, m))
	}
	fmt.Println("w2 gone:", fleet.Assign([]string{"w1", "w3"}, 8, "w3"))
	// Output:
	// w1 [0 3 6]
	// w2 [1 4 7]
	// w3 [2 5]
	// w2 gone: [1 3 5 7]
}
