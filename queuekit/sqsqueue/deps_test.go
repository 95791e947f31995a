package sqsqueue

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// sqsqueue is the SQS side of the AWS layer: it shares endpoints and error
// mapping with DynamoDB code through internal/awsapi, never the DynamoDB
// code itself (nor the job catalog and its embedded sample data).
func TestQueueImportsNoDynamoDBPackage(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/aws/aws-sdk-go-v2/service/sqs") {
		if strings.HasSuffix(d, "/queuekit/catalog") || strings.Contains(d, "/service/dynamodb") ||
			strings.Contains(d, "/feature/dynamodb/") || strings.HasSuffix(d, "/awsapi/dynamo") {
			t.Errorf("sqsqueue depends on %s", d)
		}
	}
}
