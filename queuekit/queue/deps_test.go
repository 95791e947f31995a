package queue

import (
	"os/exec"
	"strings"
	"testing"
)

// queue is the SQS side of the AWS layer: it shares endpoints and error
// mapping with DynamoDB code through internal/awsapi, never the DynamoDB
// code itself (nor the job catalog and its embedded sample data).
func TestQueueImportsNoDynamoDBPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages, want queue's real dependencies", len(deps))
	}
	sawSQS := false
	for _, d := range deps {
		sawSQS = sawSQS || d == "github.com/aws/aws-sdk-go-v2/service/sqs"
		if strings.HasSuffix(d, "/queuekit/catalog") || strings.Contains(d, "/service/dynamodb") ||
			strings.Contains(d, "/feature/dynamodb/") || strings.HasSuffix(d, "/awsapi/dynamo") {
			t.Errorf("queue depends on %s", d)
		}
	}
	if !sawSQS {
		t.Errorf("go list -deps does not list the SQS client; the check is not looking at queue's dependencies")
	}
}
