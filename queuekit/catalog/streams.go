package catalog

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// Streams returns a DynamoDB Streams client with the catalog's configuration:
// on DynamoDB Local the same endpoint (Local serves both APIs) and dummy
// credentials; on AWS the standard chain, which resolves the streams
// endpoint of the region (or AWS_ENDPOINT_URL_DYNAMODB_STREAMS).
func (c *Catalog) Streams() *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(c.cfg, func(o *dynamodbstreams.Options) {
		if c.local {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
	})
}

// UnreachableReason returns a short reason ("connection refused", "unknown
// host x", ...) when err is a failure to connect to a server, else "". The
// SQS code names ElasticMQ with it the way the catalog names DynamoDB Local.
func UnreachableReason(err error) string { return unreachable(err) }
