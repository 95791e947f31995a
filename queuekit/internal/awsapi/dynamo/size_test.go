package dynamo

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item sizes by the Developer Guide's rules, worked by hand: names count
// their UTF-8 bytes; a string its bytes; a number one byte per two
// significant digits plus one; a boolean or null one byte; a list or map 3
// bytes plus one per element plus the elements.
func TestItemSizeFollowsDynamoDBsRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"ab": &types.AttributeValueMemberS{Value: "xyz"}}, 2 + 3},
		{"utf-8 string", map[string]types.AttributeValue{"é": &types.AttributeValueMemberS{Value: "€"}}, 2 + 3},
		{"number 123", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "123"}}, 1 + 2 + 1},
		{"number -0.5", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "-0.5"}}, 1 + 1 + 1},
		{"bool and null", map[string]types.AttributeValue{"b": &types.AttributeValueMemberBOOL{Value: true},
			"z": &types.AttributeValueMemberNULL{Value: true}}, 1 + 1 + 1 + 1},
		{"list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "ab"}, &types.AttributeValueMemberBOOL{Value: false}}}}, 1 + 3 + (1 + 2) + (1 + 1)},
		{"map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k": &types.AttributeValueMemberS{Value: "v"}}}}, 1 + 3 + (1 + 1 + 1)},
	} {
		if got := ItemSize(tc.item); got != tc.want {
			t.Errorf("%s: ItemSize = %d, want %d", tc.name, got, tc.want)
		}
	}
}
