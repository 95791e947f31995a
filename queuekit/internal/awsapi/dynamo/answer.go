package dynamo

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// missing names what a successful reply lacks that DynamoDB always sends
// (awsapi.CheckAnswers), so that a server answering any request with JSON
// is reported as the wrong server instead of read as an empty table, a
// missing item or a table forever being created. DynamoDB (AWS and Local)
// answers in the application/x-amz-json-1.0 media type and names each
// request in an x-amzn-RequestId header; a reply with neither is not from
// DynamoDB. Operations whose reply always carries a description are checked
// for it as well, in case a server mimics the headers only.
func missing(resp *smithyhttp.Response, output any) string {
	if resp != nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-amz-json-1.0") &&
		resp.Header.Get("x-amzn-RequestId") == "" {
		return "DynamoDB content type (application/x-amz-json-1.0) and no x-amzn-RequestId header"
	}
	switch o := output.(type) {
	case *dynamodb.DescribeTableOutput:
		if o.Table == nil {
			return "Table"
		}
	case *dynamodb.CreateTableOutput:
		if o.TableDescription == nil {
			return "TableDescription"
		}
	case *dynamodb.DeleteTableOutput:
		if o.TableDescription == nil {
			return "TableDescription"
		}
	case *dynamodb.ListTablesOutput:
		if o.TableNames == nil {
			return "TableNames"
		}
	}
	return ""
}
