package lease

import (
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// lease is the night executor's protocol: its schedule checker for
// notebooks and tests (lease/poolrules), the notebooks' helpers, the
// planning and presentation packages and the fault injection the workshop
// shows on purpose import it, never the other way.
func TestLeaseImportsNoTeachingPackage(t *testing.T) {
	deptest.Forbid(t, "github.com/nightqueue/workshop/queuekit/fence",
		"lease/poolrules", "lab", "capacity", "fleetplan", "chart", "report", "internal/fault")
}
