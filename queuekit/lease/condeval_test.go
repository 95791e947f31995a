package lease

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// This file is a small evaluator of DynamoDB condition expressions, for the
// model check's fake store: it evaluates the condition an
// expression.ConditionBuilder builds (the string with its
// ExpressionAttributeNames and ExpressionAttributeValues) against an item.
// It knows the subset the builders of this package and of fence produce:
// =, <>, <, <=, >, >=, IN, BETWEEN, AND, OR, NOT, parentheses,
// attribute_exists and attribute_not_exists, on document paths (#n, #n.#m,
// #n[i]) and values (:v). TestCondEvalMatchesDynamoDB checks its verdicts
// against DynamoDB Local's.

// holds reports whether the condition c holds on item.
func holds(c expression.ConditionBuilder, item map[string]types.AttributeValue) (bool, error) {
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		return false, fmt.Errorf("build condition: %w", err)
	}
	return evalCondition(*e.Condition(), e.Names(), e.Values(), item)
}

// evalCondition evaluates the condition expression cond with its names and
// values against item.
func evalCondition(cond string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) (bool, error) {
	p := &condParser{toks: condTokens(cond), names: names, values: values, item: item}
	ok, err := p.or()
	if err != nil {
		return false, fmt.Errorf("condition %q: %w", cond, err)
	}
	if p.i != len(p.toks) {
		return false, fmt.Errorf("condition %q: unexpected %q", cond, p.toks[p.i])
	}
	return ok, nil
}

// condTokens splits a condition into parentheses, commas, comparators,
// words, and operands (#name paths with . and [i], :values).
func condTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c == '(' || c == ')' || c == ',' || c == '=':
			toks = append(toks, string(c))
			i++
		case c == '<' || c == '>':
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				toks = append(toks, s[i:i+2])
				i += 2
			} else {
				toks = append(toks, string(c))
				i++
			}
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" (),=<>", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

type condParser struct {
	toks   []string
	i      int
	names  map[string]string
	values map[string]types.AttributeValue
	item   map[string]types.AttributeValue
}

func (p *condParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *condParser) expect(t string) error {
	if p.peek() != t {
		return fmt.Errorf("want %q at token %d, have %q", t, p.i, p.peek())
	}
	p.i++
	return nil
}

func (p *condParser) or() (bool, error) {
	v, err := p.and()
	for err == nil && strings.EqualFold(p.peek(), "OR") {
		p.i++
		var w bool
		w, err = p.and()
		v = v || w
	}
	return v, err
}

func (p *condParser) and() (bool, error) {
	v, err := p.not()
	for err == nil && strings.EqualFold(p.peek(), "AND") {
		p.i++
		var w bool
		w, err = p.not()
		v = v && w
	}
	return v, err
}

func (p *condParser) not() (bool, error) {
	if strings.EqualFold(p.peek(), "NOT") {
		p.i++
		v, err := p.not()
		return !v, err
	}
	return p.primary()
}

func (p *condParser) primary() (bool, error) {
	switch t := p.peek(); {
	case t == "(":
		p.i++
		v, err := p.or()
		if err != nil {
			return false, err
		}
		return v, p.expect(")")
	case t == "attribute_exists" || t == "attribute_not_exists":
		p.i++
		if err := p.expect("("); err != nil {
			return false, err
		}
		v, err := p.operand()
		if err != nil {
			return false, err
		}
		if err := p.expect(")"); err != nil {
			return false, err
		}
		return (v != nil) == (t == "attribute_exists"), nil
	}
	a, err := p.operand()
	if err != nil {
		return false, err
	}
	op := p.peek()
	p.i++
	switch {
	case strings.EqualFold(op, "IN"):
		if err := p.expect("("); err != nil {
			return false, err
		}
		in := false
		for {
			b, err := p.operand()
			if err != nil {
				return false, err
			}
			in = in || avEqual(a, b)
			if p.peek() != "," {
				break
			}
			p.i++
		}
		return in, p.expect(")")
	case strings.EqualFold(op, "BETWEEN"):
		lo, err := p.operand()
		if err != nil {
			return false, err
		}
		if err := p.expect("AND"); err != nil {
			return false, err
		}
		hi, err := p.operand()
		if err != nil {
			return false, err
		}
		c1, ok1 := avCompare(lo, a)
		c2, ok2 := avCompare(a, hi)
		return ok1 && ok2 && c1 <= 0 && c2 <= 0, nil
	}
	b, err := p.operand()
	if err != nil {
		return false, err
	}
	switch op {
	case "=":
		return avEqual(a, b), nil
	case "<>":
		return !avEqual(a, b), nil
	case "<", "<=", ">", ">=":
		c, ok := avCompare(a, b)
		if !ok {
			return false, nil // missing, or of different or unordered types
		}
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op], nil
	}
	return false, fmt.Errorf("unknown operator %q", op)
}

// operand is a value (:v) or the attribute a path names on the item (nil
// when missing).
func (p *condParser) operand() (types.AttributeValue, error) {
	t := p.peek()
	p.i++
	if strings.HasPrefix(t, ":") {
		v, ok := p.values[t]
		if !ok {
			return nil, fmt.Errorf("value %s not in ExpressionAttributeValues", t)
		}
		return v, nil
	}
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: p.item}
	for _, part := range strings.Split(t, ".") {
		name, rest, _ := strings.Cut(part, "[")
		n, ok := p.names[name]
		if !ok {
			return nil, fmt.Errorf("name %s not in ExpressionAttributeNames", name)
		}
		m, ok := cur.(*types.AttributeValueMemberM)
		if !ok {
			return nil, nil
		}
		if cur = m.Value[n]; cur == nil {
			return nil, nil
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			k, err := strconv.Atoi(idx)
			if err != nil {
				return nil, fmt.Errorf("path %s: index %q", t, idx)
			}
			l, ok := cur.(*types.AttributeValueMemberL)
			if !ok || k >= len(l.Value) {
				return nil, nil
			}
			cur = l.Value[k]
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return cur, nil
}

// goValue converts an attribute value with attributevalue: numbers as
// exact rationals, everything else as attributevalue decodes it.
func goValue(v types.AttributeValue) (any, bool) {
	if v == nil {
		return nil, false
	}
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		var num attributevalue.Number
		if err := attributevalue.Unmarshal(n, &num); err != nil {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(string(num))
		return r, ok
	}
	var out any
	if err := attributevalue.Unmarshal(v, &out); err != nil {
		return nil, false
	}
	return out, true
}

// avEqual is DynamoDB's = : same type and value; a missing attribute
// equals nothing.
func avEqual(a, b types.AttributeValue) bool {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	x, ok1 := goValue(a)
	y, ok2 := goValue(b)
	if !ok1 || !ok2 {
		return false
	}
	if rx, ok := x.(*big.Rat); ok {
		return rx.Cmp(y.(*big.Rat)) == 0
	}
	return reflect.DeepEqual(x, y)
}

// avCompare orders two numbers, two strings or two binaries; ok is false
// for anything else (DynamoDB's comparison is then false).
func avCompare(a, b types.AttributeValue) (int, bool) {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return 0, false
	}
	switch x := a.(type) {
	case *types.AttributeValueMemberN:
		rx, ok1 := goValue(x)
		ry, ok2 := goValue(b)
		if !ok1 || !ok2 {
			return 0, false
		}
		return rx.(*big.Rat).Cmp(ry.(*big.Rat)), true
	case *types.AttributeValueMemberS:
		return strings.Compare(x.Value, b.(*types.AttributeValueMemberS).Value), true
	case *types.AttributeValueMemberB:
		return strings.Compare(string(x.Value), string(b.(*types.AttributeValueMemberB).Value)), true
	}
	return 0, false
}
