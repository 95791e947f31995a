package catalog

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// Streams returns a DynamoDB Streams client with the catalog's configuration:
// on DynamoDB Local the same endpoint (Local serves both APIs) and dummy
// credentials; on AWS the standard chain, which resolves the streams
// endpoint of the region (or AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
func (c *Catalog) Streams() *dynamodbstreams.Client { return c.db.Streams() }
