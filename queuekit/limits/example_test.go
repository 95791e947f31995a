package limits_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// A layer in process, in front of DynamoDB Local, limits divided by 20: a
// client uses its URL as the endpoint. A new on-demand table has four
// partitions of 1,000 write units a second (50 at S = 20); writing one key
// faster than that is throttled as AWS throttles it.
func ExampleStart() {
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	s, err := limits.Start(ctx, ep, "", limits.WithScale(20))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	db := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(s.URL), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), Retryer: aws.NopRetryer{}})
	name := "example_limits_start"
	_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	lim, _ := s.Limits(name, "")
	fmt.Printf("%s: %d partitions, each %v write units a second at S = %v\n", lim.Mode, lim.Partitions, lim.PartitionLimit.Write, s.Scale())
	for i := 0; ; i++ {
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "hot"}, "n": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
		var pte *types.ProvisionedThroughputExceededException
		if errors.As(err, &pte) {
			fmt.Println("throttled:", aws.ToString(pte.ThrottlingReasons[0].Reason))
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	tot := limits.Totals(s.Stats(), name, "")
	fmt.Println("write units counted >= 50:", tot.WriteUnits >= 50)
	// Output:
	// PAY_PER_REQUEST: 4 partitions, each 50 write units a second at S = 20
	// throttled: TableWriteKeyRangeThroughputExceeded
	// write units counted >= 50: true
}
