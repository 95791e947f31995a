package lab

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// lab is the notebooks' generic layer (tables, Markdown, charts, progress,
// self-checks, Stop): every cell that prints a table links it, so it links
// no AWS SDK and none of the protocol packages; the demonstrations that
// need them live in lab's sub-packages (leaselab, fleetlab, ...), which a
// cell links only when it calls them, and lab imports none of those either.
func TestLabImportsNoAWSNorProtocolPackage(t *testing.T) {
	const gonbui = "github.com/janpfeifer/gonb/gonbui"
	deptest.Forbid(t, gonbui, "catalog", "lease", "fleet", "fanout", "limits", "timers", "sqsqueue",
		"results", "access", "fence", "partitions", "claimrate", "internal/awsapi", "internal/fault")
	for _, d := range deptest.Deps(t, gonbui) {
		if strings.HasPrefix(d, "github.com/aws/") {
			t.Errorf("lab depends on %s: a cell that shows a table would link the AWS SDK", d)
		}
		if strings.HasPrefix(d, deptest.Module+"/lab/") {
			t.Errorf("lab depends on its demonstration package %s", d)
		}
	}
}
