package catalog

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// Limits DynamoDB puts on one item (Amazon DynamoDB Developer Guide, "Service,
// account, and table quotas"): the AWS layer's, under the names this package
// always had.
const (
	MaxItemBytes         = dynamo.MaxItemBytes
	MaxPartitionKeyBytes = dynamo.MaxPartitionKeyBytes
	MaxSortKeyBytes      = dynamo.MaxSortKeyBytes
)

// ItemSize is the size DynamoDB counts for an item (see the AWS layer's
// dynamo.ItemSize for the rules), kept here for notebooks, which cannot
// import the module's internal packages.
func ItemSize(item map[string]types.AttributeValue) int { return dynamo.ItemSize(item) }
