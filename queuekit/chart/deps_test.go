package chart

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// chart is presentation: it depends on the domain and on measure's reports,
// never on the AWS SDK (nor, through catalog or access, on DynamoDB code).
func TestChartImportsNoAWSPackage(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/go-echarts/go-echarts/v2/charts") {
		if strings.HasPrefix(d, "github.com/aws/") || strings.HasSuffix(d, "/queuekit/catalog") || strings.HasSuffix(d, "/queuekit/access") {
			t.Errorf("chart depends on %s", d)
		}
	}
}
