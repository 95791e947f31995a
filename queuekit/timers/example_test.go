package timers_test

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/nightqueue/workshop/queuekit/timers"
)

// Classify tells a TTL deletion from every other change on the stream, in
// AWS's form and in DynamoDB Local's.
func ExampleClassify() {
	old := map[string]stypes.AttributeValue{"timer_id": &stypes.AttributeValueMemberS{Value: "refresh-sales"}}
	records := []stypes.Record{
		{EventName: stypes.OperationTypeInsert, Dynamodb: &stypes.StreamRecord{NewImage: old}},
		{EventName: stypes.OperationTypeRemove, Dynamodb: &stypes.StreamRecord{OldImage: old}},
		{EventName: stypes.OperationTypeRemove, Dynamodb: &stypes.StreamRecord{OldImage: old},
			UserIdentity: &stypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}},
		{EventName: timers.Local331TTLEventName, Dynamodb: &stypes.StreamRecord{OldImage: old}},
	}
	for _, r := range records {
		fmt.Println(timers.Classify(r))
	}
	// Output:
	// insert
	// user delete
	// TTL delete
	// TTL delete
}
