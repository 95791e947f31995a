package limits

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// Item is one item as the layer sees it on the wire.
type Item = map[string]types.AttributeValue

// wireValue is one attribute value in DynamoDB's JSON protocol
// ({"S": "x"}, {"N": "1"}, {"B": "base64"}, ...), nested values included,
// so that one json.Unmarshal of a request or an answer decodes its items;
// encoding/json decodes the base64 of B and BS itself.
type wireValue struct {
	S    *string              `json:"S"`
	N    *string              `json:"N"`
	B    []byte               `json:"B"`
	BOOL *bool                `json:"BOOL"`
	NULL *bool                `json:"NULL"`
	SS   []string             `json:"SS"`
	NS   []string             `json:"NS"`
	BS   [][]byte             `json:"BS"`
	L    []wireValue          `json:"L"`
	M    map[string]wireValue `json:"M"`
}

// wireItem is one item in DynamoDB's JSON protocol.
type wireItem = map[string]wireValue

// decodeItem turns an item in DynamoDB JSON into SDK attribute values, so
// that dynamo.ItemSize (the project's one implementation of DynamoDB's
// item-size rules) can size it.
func decodeItem(raw wireItem) (Item, error) {
	if raw == nil {
		return nil, nil
	}
	out := make(Item, len(raw))
	for k, v := range raw {
		av, err := v.value()
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func (w *wireValue) value() (types.AttributeValue, error) {
	switch {
	case w.S != nil:
		return &types.AttributeValueMemberS{Value: *w.S}, nil
	case w.N != nil:
		return &types.AttributeValueMemberN{Value: *w.N}, nil
	case w.B != nil:
		return &types.AttributeValueMemberB{Value: w.B}, nil
	case w.BOOL != nil:
		return &types.AttributeValueMemberBOOL{Value: *w.BOOL}, nil
	case w.NULL != nil:
		return &types.AttributeValueMemberNULL{Value: *w.NULL}, nil
	case w.SS != nil:
		return &types.AttributeValueMemberSS{Value: w.SS}, nil
	case w.NS != nil:
		return &types.AttributeValueMemberNS{Value: w.NS}, nil
	case w.BS != nil:
		return &types.AttributeValueMemberBS{Value: w.BS}, nil
	case w.L != nil:
		l := make([]types.AttributeValue, len(w.L))
		for i := range w.L {
			av, err := w.L[i].value()
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case w.M != nil:
		m, err := decodeItem(w.M)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, errors.New("no known type (S, N, B, BOOL, NULL, SS, NS, BS, L or M)")
}

// size is the item's size by DynamoDB's rules (dynamo.ItemSize); 0 for
// no item.
func size(it Item) int {
	if it == nil {
		return 0
	}
	return dynamo.ItemSize(it)
}

// WriteUnits is the write units of one write of an item of n bytes: one per
// KB, rounded up, at least one ("DynamoDB read and write operations",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
func WriteUnits(n int) float64 {
	if n <= 0 {
		return 1
	}
	return float64((n + 1023) / 1024)
}

// ReadUnits is the read units of reading n bytes: one per 4 KB, rounded up,
// at least one; half of that for an eventually consistent read (same page).
func ReadUnits(n int, consistent bool) float64 {
	u := 1.0
	if n > 0 {
		u = float64((n + 4095) / 4096)
	}
	if !consistent {
		u /= 2
	}
	return u
}

// scalar is a key attribute's value as a string (type + value), or "" when
// the attribute is missing or not a key type.
func scalar(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return "S" + v.Value
	case *types.AttributeValueMemberN:
		return "N" + v.Value
	case *types.AttributeValueMemberB:
		return "B" + string(v.Value)
	}
	return ""
}

// hashKey hashes a partition key value to pick its partition.
func hashKey(v string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(v))
	return h.Sum64()
}

// keyOf is the item's primary key as one string (partition key, then sort
// key), or "" if a key attribute is missing.
func keyOf(it Item, pk, sk string) string {
	p := scalar(it[pk])
	if p == "" {
		return ""
	}
	if sk == "" {
		return p
	}
	s := scalar(it[sk])
	if s == "" {
		return ""
	}
	return p + "\x00" + s
}

// project keeps the attributes an index entry holds: its keys, the table's
// keys, and by projection all (ALL), none more (KEYS_ONLY) or the listed
// ones (INCLUDE).
func project(it Item, ix *index, t *table) Item {
	if it == nil {
		return nil
	}
	if ix.projection == "ALL" || ix.projection == "" {
		return it
	}
	out := Item{}
	for _, k := range []string{ix.pk, ix.sk, t.base.pk, t.base.sk} {
		if v, ok := it[k]; ok && k != "" {
			out[k] = v
		}
	}
	for _, k := range ix.include {
		if v, ok := it[k]; ok {
			out[k] = v
		}
	}
	return out
}

// sameValues reports whether a and b hold the same values, for "did this
// write change the index entry".
func sameValues(a, b Item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || canon(v) != canon(w) {
			return false
		}
	}
	return true
}

// canon is a value as a canonical string (sets sorted, map keys sorted).
func canon(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS, *types.AttributeValueMemberN, *types.AttributeValueMemberB:
		return scalar(v)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprint("BOOL", v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return "SS" + strings.Join(slices.Sorted(slices.Values(v.Value)), "\x00")
	case *types.AttributeValueMemberNS:
		return "NS" + strings.Join(slices.Sorted(slices.Values(v.Value)), "\x00")
	case *types.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = string(b)
		}
		slices.Sort(bs)
		return "BS" + strings.Join(bs, "\x00")
	case *types.AttributeValueMemberL:
		var b strings.Builder
		b.WriteString("L[")
		for _, e := range v.Value {
			b.WriteString(canon(e) + "\x01")
		}
		return b.String() + "]"
	case *types.AttributeValueMemberM:
		var b strings.Builder
		b.WriteString("M{")
		for _, k := range slices.Sorted(maps.Keys(v.Value)) {
			b.WriteString(k + "\x02" + canon(v.Value[k]) + "\x01")
		}
		return b.String() + "}"
	}
	return ""
}

// encodeValue writes one attribute value in DynamoDB JSON.
func encodeValue(av types.AttributeValue) (json.RawMessage, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return json.Marshal(map[string]string{"S": v.Value})
	case *types.AttributeValueMemberN:
		return json.Marshal(map[string]string{"N": v.Value})
	case *types.AttributeValueMemberB:
		return json.Marshal(map[string][]byte{"B": v.Value})
	}
	return nil, fmt.Errorf("not a key value: %T", av)
}
