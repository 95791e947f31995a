package catalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// UnreachableError says that nothing answered at the DynamoDB endpoint. Its
// message is one line naming the endpoint and how to start DynamoDB Local.
type UnreachableError struct {
	Endpoint string // the URL, or "the AWS default endpoint"
	Reason   string // short cause, e.g. "connection refused"
	Local    bool   // whether the endpoint is a DynamoDB Local
	Err      error  // the SDK error
}

func (e *UnreachableError) Error() string {
	if e.Local {
		return fmt.Sprintf("DynamoDB Local at %s is unreachable (%s): %s, or point --endpoint / %s at a running one",
			e.Endpoint, e.Reason, StartLocalHint, EnvEndpoint)
	}
	return fmt.Sprintf("DynamoDB at %s is unreachable (%s): check the network, AWS_REGION and %s; for the workshop %s",
		e.Endpoint, e.Reason, EnvEndpoint, StartLocalHint)
}

// Unwrap returns the SDK error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// WrongServerError says that something answered at the endpoint, but not
// as DynamoDB does (for example a web server answering HTML): the endpoint
// names another server. Its message is one line naming the endpoint and the
// variable (or flag) to fix.
type WrongServerError struct {
	Endpoint string // the URL, or "the AWS default endpoint"
	Status   int    // the HTTP status of the answer, 0 if unknown
	Err      error  // the SDK error
}

func (e *WrongServerError) Error() string {
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (HTTP %d, not a DynamoDB reply)", e.Status)
	}
	return fmt.Sprintf("the server at %s answers but is not DynamoDB%s: point --endpoint / %s at DynamoDB Local (%s)",
		e.Endpoint, status, EnvEndpoint, StartLocalHint)
}

// Unwrap returns the SDK error.
func (e *WrongServerError) Unwrap() error { return e.Err }

// NotTheServer reports whether err is an answer the SDK could not read as
// its service's reply (a deserialization failure: HTML, plain text, another
// protocol), and the HTTP status of that answer. It is how both the catalog
// and the SQS client tell "another server answers here" from "nothing
// answers" (UnreachableReason).
func NotTheServer(err error) (status int, ok bool) {
	var de *smithy.DeserializationError
	if !errors.As(err, &de) {
		return 0, false
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return status, true
}

// TableMissingError says that the catalog table does not exist.
type TableMissingError struct {
	Table    string
	Endpoint string
	Err      error
}

func (e *TableMissingError) Error() string {
	hint := strings.TrimSuffix(SeedHint, "`")
	if e.Table != DefaultTable {
		hint += " --table " + e.Table
	}
	if strings.Contains(e.Endpoint, "://") {
		// Name the endpoint too: without it the command would go to AWS.
		hint += " --endpoint " + e.Endpoint
	}
	hint += "`"
	return fmt.Sprintf("table %s does not exist at %s: %s", e.Table, e.Endpoint, hint)
}

// Unwrap returns the SDK error.
func (e *TableMissingError) Unwrap() error { return e.Err }

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

// explain turns transport errors into *UnreachableError and missing tables
// into *TableMissingError; other errors are returned unchanged.
func (c *Catalog) explain(ctx context.Context, err error) error {
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return &TableMissingError{Table: c.opts.Table, Endpoint: c.where(), Err: err}
	}
	if status, ok := NotTheServer(err); ok {
		return &WrongServerError{Endpoint: c.where(), Status: status, Err: err}
	}
	if reason := unreachable(err); reason != "" {
		return &UnreachableError{Endpoint: c.where(), Reason: reason, Local: c.local, Err: err}
	}
	if ctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded) {
		return &UnreachableError{Endpoint: c.where(), Reason: fmt.Sprintf("no answer within %s", c.opts.CallTimeout), Local: c.local, Err: err}
	}
	return err
}

// unreachable returns a short reason when err is a failure to connect.
func unreachable(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "unknown host " + dns.Name
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "cannot connect: " + op.Err.Error()
	}
	return ""
}
