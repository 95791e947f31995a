package lease

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// The item-size rules, on values whose sizes the AWS documentation gives:
// a string is its UTF-8 bytes, a number one byte per two significant
// digits plus one, a list or map 3 bytes plus one per element.
func TestItemSizeRules(t *testing.T) {
	item := map[string]types.AttributeValue{
		"ab":  &types.AttributeValueMemberS{Value: "héllo"},                                                                                                         // 2 + 6
		"n":   &types.AttributeValueMemberN{Value: "-0012.3400"},                                                                                                    // 1 + (4 digits: 2) + 1
		"big": &types.AttributeValueMemberN{Value: "12345"},                                                                                                         // 3 + (5 digits: 3) + 1
		"l":   &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "xy"}, &types.AttributeValueMemberBOOL{Value: true}}}, // 1 + 3 + (1+2) + (1+1)
		"m":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}}},                                  // 1 + 3 + (1+1+1)
	}
	if got, want := catalog.ItemSize(item), 8+4+7+9+7; got != want {
		t.Fatalf("catalog.ItemSize = %d, want %d", got, want)
	}
}

// MaxWorkers, the bound Config.Validate applies without a night, keeps the
// fullest pool item within 400 KB for job ids of MaxJobIDBytes; a pool
// twice as big would not fit, so the bound is not loose by orders of
// magnitude.
func TestMaxWorkersFits(t *testing.T) {
	size, err := poolBytes(MaxWorkers, MaxJobIDBytes)
	if err != nil {
		t.Fatal(err)
	}
	if size > MaxItemBytes {
		t.Fatalf("pool of %d slots with %d-byte ids: %d bytes, beyond %d", MaxWorkers, MaxJobIDBytes, size, MaxItemBytes)
	}
	double, err := poolBytes(2*MaxWorkers, MaxJobIDBytes)
	if err != nil {
		t.Fatal(err)
	}
	if double <= MaxItemBytes {
		t.Fatalf("a pool of %d slots fits (%d bytes): MaxWorkers is loose", 2*MaxWorkers, double)
	}
	t.Logf("fullest pool: %d slots %d bytes, %d slots %d bytes (limit %d)", MaxWorkers, size, 2*MaxWorkers, double, MaxItemBytes)
}

// MaxRetry 0 is a setting, not "the default": WithDefaults keeps it, and a
// negative count is refused with a message naming the value.
func TestConfigMaxRetryZeroMeansNoRetry(t *testing.T) {
	c := Config{Workers: 3}.WithDefaults()
	if c.MaxRetry != 0 {
		t.Fatalf("WithDefaults turned MaxRetry 0 into %d", c.MaxRetry)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("MaxRetry 0: %v", err)
	}
	c.MaxRetry = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max_retry = -1") {
		t.Fatalf("MaxRetry -1: %v, want an error naming max_retry = -1", err)
	}
}
