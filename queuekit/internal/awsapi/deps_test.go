package awsapi

import (
	"os/exec"
	"strings"
	"testing"
)

// awsapi is shared by the SQS and the DynamoDB code, so it imports neither
// service's client (only the credential chain's): DynamoDB lives in its
// subpackage dynamo.
func TestAWSAPIImportsNoServiceClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	sawConfig := false
	for _, d := range deps {
		sawConfig = sawConfig || d == "github.com/aws/aws-sdk-go-v2/config"
		if strings.Contains(d, "/service/dynamodb") || strings.Contains(d, "/service/sqs") || strings.Contains(d, "/feature/dynamodb/") {
			t.Errorf("awsapi depends on %s", d)
		}
		if strings.Contains(d, "/queuekit/") && !strings.Contains(d, "/queuekit/internal/awsapi") {
			t.Errorf("awsapi depends on %s, a package built on it", d)
		}
	}
	if !sawConfig {
		t.Errorf("go list -deps does not list aws-sdk-go-v2/config; the check is not looking at awsapi's dependencies")
	}
}
