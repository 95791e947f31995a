package catalog

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// UnreachableError says that nothing answered at the DynamoDB endpoint. Its
// message is one line naming the endpoint and how to start DynamoDB Local.
// It is the AWS layer's one type, shared with the SQS client
// (Service names which server).
type UnreachableError = awsapi.UnreachableError

// WrongServerError says that something answered at the endpoint, but not
// as DynamoDB does (for example a web server answering HTML): the endpoint
// names another server. Its message is one line naming the endpoint and the
// variable (or flag) to fix. It is the AWS layer's one type, shared with the
// SQS client (Service names which server).
type WrongServerError = awsapi.WrongServerError

// NotTheServer reports whether err is an answer the SDK could not read as
// its service's reply (a deserialization failure: HTML, plain text, another
// protocol), and the HTTP status of that answer. It tells "another server
// answers here" from "nothing answers" (UnreachableReason).
func NotTheServer(err error) (status int, ok bool) { return awsapi.NotTheServer(err) }

// UnreachableReason returns a short reason ("connection refused", "unknown
// host x", ...) when err is a failure to connect to a server, else "".
func UnreachableReason(err error) string { return awsapi.UnreachableReason(err) }

// TableMissingError says that a table does not exist; its message says how
// to create and seed it.
type TableMissingError = dynamo.TableMissingError

// UnwrittenError says that a seed stopped with items left unwritten, after
// retries were exhausted or on another error.
type UnwrittenError struct {
	Table     string
	Unwritten int // items not written
	Total     int
	Err       error // the first cause
}

func (e *UnwrittenError) Error() string {
	return fmt.Sprintf("seed table %s: %d of %d items left unwritten: %v", e.Table, e.Unwritten, e.Total, e.Err)
}

// Unwrap returns the first cause.
func (e *UnwrittenError) Unwrap() error { return e.Err }
