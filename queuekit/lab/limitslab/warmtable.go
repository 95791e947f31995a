package limitslab

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/nightqueue/workshop/queuekit/limits"
)

// CreateWarmTable creates an on-demand table (pk, sk strings, as RunHotLoad
// writes) through the limits layer s with a warm throughput of writeUnits
// write units a second (AWS units: the layer divides them by S), as
// CreateTable's WarmThroughput requests it, and returns the limits the layer
// gives the table. RunHotLoad on the same table name then uses it.
func CreateWarmTable(ctx context.Context, s *limits.Server, table string, writeUnits int64) (limits.TableLimits, error) {
	if s == nil || table == "" || writeUnits < 1 {
		return limits.TableLimits{}, fmt.Errorf("warm table: want a layer, a table name and write units >= 1, got %q, %d", table, writeUnits)
	}
	db := dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(s.URL), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), Logger: logging.Nop{}})
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		WarmThroughput: &types.WarmThroughput{WriteUnitsPerSecond: aws.Int64(writeUnits)}})
	if err != nil {
		return limits.TableLimits{}, fmt.Errorf("warm table %s: %w", table, err)
	}
	l, ok := s.Limits(table, "")
	if !ok {
		return l, fmt.Errorf("warm table %s: the layer does not know it", table)
	}
	return l, nil
}
