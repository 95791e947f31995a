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
// cell links only when it calls them.
func TestLabImportsNoAWSNorProtocolPackage(t *testing.T) {
	const qk = "github.com/nightqueue/workshop/queuekit/"
	protocol := []string{"catalog", "lease", "fleet", "fanout", "limits", "timers", "sqsqueue", "results", "access", "fence", "partitions", "internal/awsapi", "internal/fault"}
	for _, d := range deptest.Deps(t, "github.com/janpfeifer/gonb/gonbui") {
		if strings.HasPrefix(d, "github.com/aws/") || strings.HasPrefix(d, qk+"lab/") {
			t.Errorf("lab depends on %s", d)
		}
		for _, p := range protocol {
			if d == qk+p || strings.HasPrefix(d, qk+p+"/") {
				t.Errorf("lab depends on the protocol package %s", d)
			}
		}
	}
}
