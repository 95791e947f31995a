package chart

import (
	"os/exec"
	"strings"
	"testing"
)

// chart is presentation: it depends on the domain and on measure's reports,
// never on the AWS SDK (nor, through catalog or access, on DynamoDB code).
func TestChartImportsNoAWSPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages, want chart's real dependencies", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/aws/") || strings.HasSuffix(d, "/queuekit/catalog") || strings.HasSuffix(d, "/queuekit/access") {
			t.Errorf("chart depends on %s", d)
		}
	}
}
