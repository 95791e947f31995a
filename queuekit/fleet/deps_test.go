package fleet

import (
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// fleet is a protocol: its projections and costs on AWS (fleetplan, through
// capacity's model) read it, never the other way, and neither do the
// notebooks' helpers or the staged runs that drive it. (prices comes in
// through catalog's access reports, which price what they measured.)
func TestFleetImportsNoPlanningPackage(t *testing.T) {
	deptest.Forbid(t, "github.com/nightqueue/workshop/queuekit/fence",
		"capacity", "fleetplan", "lab", "fleet/fleetrun")
}
