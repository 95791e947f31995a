package dynamo

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ThrottledTransaction reports whether err is a TransactionCanceledException
// cancelled only for throttling or for a conflict with another transaction:
// every cancellation reason is None, ThrottlingError or TransactionConflict,
// and at least one is one of the latter two. Nothing of such a transaction
// was applied, and DynamoDB's transactions page says to retry it with
// backoff ("Transaction conflict handling in DynamoDB",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
// The SDK's standard retryer does not: TransactionCanceledException is not
// among its throttle or retryable codes (aws/retry DefaultThrottleErrorCodes,
// DefaultRetryables), whatever its reasons.
func ThrottledTransaction(err error) bool {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		return false
	}
	throttled := false
	for _, r := range tc.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "None", "":
		case "ThrottlingError", "TransactionConflict":
			throttled = true
		default:
			return false // a condition failed, a validation error, ...: not retryable
		}
	}
	return throttled
}

// RetryThrottledTransactions is a retryable check for
// retry.StandardOptions.Retryables: true for a ThrottledTransaction, no
// opinion otherwise.
var RetryThrottledTransactions retry.IsErrorRetryable = retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
	if ThrottledTransaction(err) {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
})
