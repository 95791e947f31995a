package dynamo

import (
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Limits DynamoDB puts on one item (Amazon DynamoDB Developer Guide, "Service,
// account, and table quotas": item size, partition and sort key length).
const (
	MaxItemBytes         = 400 * 1024 // an item: names and values of all its attributes
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// ItemSize is the size DynamoDB counts for an item, per the Developer Guide's
// rules ("Item sizes and formats"): for each attribute the UTF-8 length of
// its name plus its value's size, where a string is its UTF-8 length, binary
// its length, a number about one byte per two significant digits plus one,
// a boolean or null one byte, and a list or map 3 bytes plus one per element
// plus its elements (map keys count as names).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is a number's size: one byte per two significant digits, plus
// one (DynamoDB stores at most 38 digits).
func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0.")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	// Leading and trailing zeros are not significant digits.
	digits := utf8.RuneCountInString(strings.Trim(strings.ReplaceAll(s, ".", ""), "0"))
	return (digits+1)/2 + 1
}

// LargestAttribute names the attribute with the largest value, for errors.
func LargestAttribute(item map[string]types.AttributeValue) (string, int) {
	name, size := "", -1
	for k, v := range item {
		if s := len(k) + valueSize(v); s > size {
			name, size = k, s
		}
	}
	return name, size
}
