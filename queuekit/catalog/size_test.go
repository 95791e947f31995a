package catalog

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An item one byte over 400 KB is refused naming the biggest attribute; one
// at the limit passes.
func TestCheckItemSizeAtTheLimit(t *testing.T) {
	at := map[string]types.AttributeValue{"p": &types.AttributeValueMemberS{Value: strings.Repeat("x", MaxItemBytes-1)}}
	if err := checkItemSize("job 1", at); err != nil {
		t.Errorf("an item of exactly %d bytes: %v", MaxItemBytes, err)
	}
	over := map[string]types.AttributeValue{"p": &types.AttributeValueMemberS{Value: strings.Repeat("x", MaxItemBytes)}}
	err := checkItemSize("job 1", over)
	if err == nil || !strings.Contains(err.Error(), "job 1: field p = 409601 bytes") || !strings.Contains(err.Error(), "409601 bytes, over DynamoDB's item limit of 409600") {
		t.Errorf("an item of %d bytes: %v", MaxItemBytes+1, err)
	}
}
