package awsapi

import (
	"context"
	"fmt"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// NotAnAnswerError says that a call got a reply the SDK could read (JSON,
// HTTP 200) but that lacks what every reply of that operation from the
// service carries, such as DescribeTable without a Table: a server that
// answers any request with JSON is at the endpoint, not the service.
// NotTheServer recognises it, so Explain turns it into a WrongServerError.
type NotAnAnswerError struct {
	Operation string // the operation's name, e.g. "DescribeTable"
	Missing   string // what the reply lacks, e.g. "Table"
	Status    int    // the HTTP status of the reply
}

func (e *NotAnAnswerError) Error() string {
	return fmt.Sprintf("%s reply (HTTP %d) has no %s", e.Operation, e.Status, e.Missing)
}

// CheckAnswers returns an SDK stack option that runs missing on every
// successful reply (its HTTP response, nil if unknown, and the decoded
// output) and fails the call with a *NotAnAnswerError when it names what
// the reply lacks ("" when the reply is whole).
// Each service's client adds it with its own missing, written against its
// own output types, so this package imports no service client.
func CheckAnswers(missing func(resp *smithyhttp.Response, output any) string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("queuekitCheckAnswer",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil {
					return out, md, err
				}
				resp, _ := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
				if m := missing(resp, out.Result); m != "" {
					status := 0
					if resp != nil {
						status = resp.StatusCode
					}
					return out, md, &NotAnAnswerError{Operation: middleware.GetOperationName(ctx), Missing: m, Status: status}
				}
				return out, md, nil
			}), middleware.After)
	}
}
