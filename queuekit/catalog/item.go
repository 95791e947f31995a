package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/data"
	"github.com/nightqueue/workshop/queuekit"
)

// AttrPadding is an optional string attribute that only makes an item bigger
// (see WithPadding); reading ignores it.
const AttrPadding = "padding"

// MarshalJob turns a job into a DynamoDB item with attributevalue and the
// Job struct tags.
func MarshalJob(j queuekit.Job) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(j)
	if err != nil {
		return nil, fmt.Errorf("marshal job %s: %w", j.JobID, err)
	}
	return item, nil
}

// ItemLocation names an item in errors: "dynamodb table T item
// batch_date=D, window_job_id=K".
func ItemLocation(table string, item map[string]types.AttributeValue) string {
	return fmt.Sprintf("dynamodb table %s item %s=%s, %s=%s", table,
		queuekit.AttrBatchDate, keyText(item[queuekit.AttrBatchDate]),
		queuekit.AttrWindowJobID, keyText(item[queuekit.AttrWindowJobID]))
}

func keyText(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return "?"
}

// UnmarshalJob turns an item of the table into a job and validates it for the
// catalog's window. Problems are *queuekit.FieldError values with the same
// text as the JSON Lines loader's, located at the item's key: a missing
// attribute, an attribute of the wrong type, or a value that breaks a rule.
func (c *Catalog) UnmarshalJob(item map[string]types.AttributeValue) (queuekit.Job, error) {
	j, err := unmarshalJob(item, c.opts.Window)
	if err != nil {
		var fe *queuekit.FieldError
		if errors.As(err, &fe) {
			fe.Location = ItemLocation(c.opts.Table, item)
			return queuekit.Job{}, fe
		}
		return queuekit.Job{}, fmt.Errorf("%s: %w", ItemLocation(c.opts.Table, item), err)
	}
	return j, nil
}

func unmarshalJob(item map[string]types.AttributeValue, w queuekit.Window) (queuekit.Job, error) {
	var missing []string
	for _, a := range queuekit.RequiredAttributes {
		if v, ok := item[a]; !ok || isNull(v) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return queuekit.Job{}, &queuekit.FieldError{Field: strings.Join(missing, ", "), Problem: "missing attribute",
			Fix: "every job item needs " + strings.Join(queuekit.RequiredAttributes, ", ")}
	}
	for _, a := range queuekit.RequiredAttributes {
		if !rightKind(a, item[a]) {
			return queuekit.Job{}, &queuekit.FieldError{Field: a, Value: valueText(item[a]), Problem: "wrong type: want " + attrKind(a),
				Fix: "see " + data.SampleNightsFile + " for the format"}
		}
	}
	var j queuekit.Job
	if err := attributevalue.UnmarshalMap(item, &j); err != nil {
		return queuekit.Job{}, fmt.Errorf("decode item: %w", err)
	}
	if err := j.Validate(w); err != nil {
		return queuekit.Job{}, err
	}
	return j, nil
}

func isNull(v types.AttributeValue) bool {
	_, ok := v.(*types.AttributeValueMemberNULL)
	return ok
}

// rightKind checks an attribute's DynamoDB type: S for text, N holding a
// whole number for runtime and priority, BOOL for the exclusive lock.
func rightKind(attr string, v types.AttributeValue) bool {
	switch attr {
	case queuekit.AttrRuntime, queuekit.AttrPriority:
		n, ok := v.(*types.AttributeValueMemberN)
		if !ok {
			return false
		}
		_, err := strconv.Atoi(n.Value)
		return err == nil
	case queuekit.AttrExclusive:
		_, ok := v.(*types.AttributeValueMemberBOOL)
		return ok
	}
	_, ok := v.(*types.AttributeValueMemberS)
	return ok
}

// attrKind matches the JSON Lines loader's wording.
func attrKind(a string) string {
	switch a {
	case queuekit.AttrRuntime, queuekit.AttrPriority:
		return "a whole number"
	case queuekit.AttrExclusive:
		return "true or false"
	}
	return "a string"
}

// valueText renders a value as the JSON Lines loader shows raw JSON.
func valueText(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return strconv.Quote(v.Value)
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(v.Value)
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		return "a set"
	case *types.AttributeValueMemberL:
		return "a list"
	case *types.AttributeValueMemberM:
		return "a map"
	case *types.AttributeValueMemberB:
		return "binary"
	}
	return "?"
}
