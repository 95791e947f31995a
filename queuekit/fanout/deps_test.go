package fanout

import (
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// fanout is a protocol over SQS and one results table: the workloads run
// through it (nights: the catalog read and the simulator) and the
// experiments on it (pacing) import it, never the other way.
func TestFanoutImportsNoWorkloadPackage(t *testing.T) {
	deptest.Forbid(t, "github.com/nightqueue/workshop/queuekit/sqsqueue",
		"sim", "workload", "fanout/nights", "fanout/pacing", "capacity", "lab")
}
