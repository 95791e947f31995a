package limits

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// limits is a model of DynamoDB's limits in front of DynamoDB Local: it
// sizes items by the AWS layer's rules (dynamo.ItemSize) and imports no job
// code, neither the job catalog nor the domain package: a layer any table
// goes through, whatever its items are.
func TestLimitsImportsNoJobCode(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo") {
		rest, ok := strings.CutPrefix(d, "github.com/nightqueue/workshop/queuekit")
		if ok && rest != "/limits" && !strings.HasPrefix(rest, "/internal/") {
			t.Errorf("limits depends on %s: job code, which it must not import (docs/code.md)", d)
		}
	}
}
