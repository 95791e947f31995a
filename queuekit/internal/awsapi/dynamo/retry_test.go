package dynamo

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func canceled(codes ...string) error {
	e := &types.TransactionCanceledException{Message: aws.String("Transaction cancelled")}
	for _, c := range codes {
		e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
	}
	return fmt.Errorf("claim: %w", e)
}

// A transaction cancelled only by throttling or a conflict is retried (the
// transactions page: retry with backoff); one cancelled because a
// condition failed is not (sending it again fails the same way); and the
// SDK's standard retryer alone retries none of them.
func TestRetryThrottledTransactions(t *testing.T) {
	standard := retry.NewStandard()
	withCheck := retry.NewStandard(func(o *retry.StandardOptions) {
		o.Retryables = append(o.Retryables, RetryThrottledTransactions)
	})
	cases := []struct {
		err  error
		want bool
	}{
		{canceled("None", "ThrottlingError"), true},
		{canceled("TransactionConflict", "None"), true},
		{canceled("ThrottlingError", "TransactionConflict"), true},
		{canceled("None", "ConditionalCheckFailed"), false},
		{canceled("ThrottlingError", "ConditionalCheckFailed"), false},
		{canceled("None", "None"), false},
		{&types.TransactionConflictException{}, false},
		{fmt.Errorf("other"), false},
	}
	for _, c := range cases {
		if got := ThrottledTransaction(c.err); got != c.want {
			t.Errorf("ThrottledTransaction(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := withCheck.IsErrorRetryable(c.err); got != c.want {
			t.Errorf("standard retryer with RetryThrottledTransactions retries %v: %v, want %v", c.err, got, c.want)
		}
		if standard.IsErrorRetryable(c.err) {
			t.Errorf("the standard retryer alone retries %v: the SDK changed, revisit ThrottledTransaction's doc", c.err)
		}
	}
}
