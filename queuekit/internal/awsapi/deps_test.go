package awsapi

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// awsapi is shared by the SQS and the DynamoDB code, so it imports neither
// service's client (only the credential chain's): DynamoDB lives in its
// subpackage dynamo.
func TestAWSAPIImportsNoServiceClient(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/aws/aws-sdk-go-v2/config") {
		if strings.Contains(d, "/service/dynamodb") || strings.Contains(d, "/service/sqs") || strings.Contains(d, "/feature/dynamodb/") {
			t.Errorf("awsapi depends on %s", d)
		}
		if strings.Contains(d, "/queuekit/") && !strings.Contains(d, "/queuekit/internal/awsapi") {
			t.Errorf("awsapi depends on %s, a package built on it", d)
		}
	}
}
