package limitslab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
)

func TestStartLimitsWithoutEndpoint(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	_, err := StartLimits(context.Background(), 20)
	if err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL_DYNAMODB is not set") {
		t.Fatalf("StartLimits without an endpoint: %v, want the one-line hint", err)
	}
}

func TestFailureNameRetryQuota(t *testing.T) {
	err := fmt.Errorf("operation error DynamoDB: PutItem: failed to get rate limit token, %w", ratelimit.QuotaExceededError{Available: 0, Requested: 5})
	if got := failureName(err); got != retryQuota {
		t.Fatalf("failureName(quota) = %q, want %q", got, retryQuota)
	}
	if got := failureName(errors.New("connection refused")); got != "other error" {
		t.Fatalf("failureName(other) = %q, want no raw SDK text", got)
	}
}

func TestShardSweepTable(t *testing.T) {
	runs := []ShardRun{
		{Shards: 1, Partitions: 1, Result: HotLoadResult{Throughput: 50, Failed: 1200, P50: 2 * time.Millisecond, P99: 1500 * time.Millisecond},
			Throttled: map[string]int{"TableWriteKeyRangeThroughputExceeded": 2500}},
		{Shards: 8, Partitions: 4, Result: HotLoadResult{Throughput: 150, P50: time.Millisecond, P99: 4 * time.Millisecond}},
	}
	got := ShardSweepTable(runs, 20)
	for _, want := range []string{"writes landed/s (S = 20)", "throttled: TableWriteKeyRangeThroughputExceeded", "| 1 | 1 | 50 | 1,200 | 2,500 | 2 | 1,500 |", "| 8 | 4 | 150 | 0 | 0 | 1 | 4 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestReasonList(t *testing.T) {
	if got := ReasonList(nil); got != "none" {
		t.Errorf("ReasonList(nil) = %q, want none", got)
	}
	got := ReasonList(map[string]int{"TableWriteKeyRangeThroughputExceeded": 1234, "IndexWriteKeyRangeThroughputExceeded": 5})
	want := "`IndexWriteKeyRangeThroughputExceeded`: 5, `TableWriteKeyRangeThroughputExceeded`: 1,234"
	if got != want {
		t.Errorf("ReasonList = %q, want %q", got, want)
	}
}
