package access

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemJSON renders an item in DynamoDB's JSON form, the form the console and
// the AWS CLI show: every value wrapped in its type, {"S": "..."},
// {"N": "25"}, {"BOOL": false}. Attributes are sorted by name.
func ItemJSON(item map[string]types.AttributeValue) (string, error) {
	m := make(map[string]any, len(item))
	for k, v := range item {
		w, err := wire(v)
		if err != nil {
			return "", fmt.Errorf("attribute %s: %w", k, err)
		}
		m[k] = w
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func wire(v types.AttributeValue) (any, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]string{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]string{"N": v.Value}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]bool{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]bool{"NULL": true}, nil
	case *types.AttributeValueMemberB:
		return map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}, nil
	case *types.AttributeValueMemberSS:
		return map[string][]string{"SS": v.Value}, nil
	case *types.AttributeValueMemberNS:
		return map[string][]string{"NS": v.Value}, nil
	case *types.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string][]string{"BS": bs}, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			w, err := wire(e)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			l[i] = w
		}
		return map[string]any{"L": l}, nil
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(v.Value))
		for k, e := range v.Value {
			w, err := wire(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			m[k] = w
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("unknown attribute value type %T", v)
}
