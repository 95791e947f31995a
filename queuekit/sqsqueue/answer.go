package sqsqueue

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// missing names what a successful reply lacks that SQS always sends
// (awsapi.CheckAnswers), so that a server answering any request with JSON
// is reported as the wrong server instead of read as a queue without a URL.
// Headers tell nothing here (ElasticMQ sends neither AWS's media type nor a
// request id), so the operations whose reply must name something are
// checked: a queue URL, a message id.
func missing(_ *smithyhttp.Response, output any) string {
	switch o := output.(type) {
	case *sqs.CreateQueueOutput:
		if o.QueueUrl == nil {
			return "QueueUrl"
		}
	case *sqs.GetQueueUrlOutput:
		if o.QueueUrl == nil {
			return "QueueUrl"
		}
	case *sqs.SendMessageOutput:
		if o.MessageId == nil {
			return "MessageId"
		}
	}
	return ""
}
