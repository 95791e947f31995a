package limits

import (
	"encoding/json"
	"regexp"
	"strings"
)

// request is the part of a DynamoDB request the layer reads: one struct
// for every operation it meters (unknown fields are ignored).
type request struct {
	TableName                 string
	IndexName                 string
	Key                       wireItem
	Item                      wireItem
	ConsistentRead            bool
	KeyConditionExpression    string
	UpdateExpression          string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]wireValue
	ReturnValues              string
	ProjectionExpression      string
	AttributesToGet           []string
	Select                    string
	RequestItems              map[string]json.RawMessage
	TransactItems             []transactItem

	// CreateTable and UpdateTable.
	KeySchema                   []keyElement
	BillingMode                 string
	ProvisionedThroughput       *provisioned
	OnDemandThroughput          *onDemandMax
	WarmThroughput              *warmThroughput
	GlobalSecondaryIndexes      []gsiDefinition
	GlobalSecondaryIndexUpdates []struct {
		Create *gsiDefinition
		Update *gsiDefinition
		Delete *struct{ IndexName string }
	}
}

type transactItem struct {
	Get, Put, Update, Delete, ConditionCheck *struct {
		TableName string
		Key       wireItem
		Item      wireItem
	}
}

type keyElement struct{ AttributeName, KeyType string }

type provisioned struct{ ReadCapacityUnits, WriteCapacityUnits float64 }

type onDemandMax struct{ MaxReadRequestUnits, MaxWriteRequestUnits float64 }

type warmThroughput struct{ ReadUnitsPerSecond, WriteUnitsPerSecond float64 }

type gsiDefinition struct {
	IndexName  string
	KeySchema  []keyElement
	Projection *struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
	ProvisionedThroughput *provisioned
	OnDemandThroughput    *onDemandMax
	WarmThroughput        *warmThroughput
}

func keys(ks []keyElement) (pk, sk string) {
	for _, k := range ks {
		switch k.KeyType {
		case "HASH":
			pk = k.AttributeName
		case "RANGE":
			sk = k.AttributeName
		}
	}
	return pk, sk
}

var equality = regexp.MustCompile(`(#?[A-Za-z0-9_.\-]+)\s*=\s*(:[A-Za-z0-9_]+)`)

// queryKey finds the partition key value of a Query's key condition
// ("pk = :v" or "#n = :v"), as a scalar string, or "".
func (r *request) queryKey(pk string) string {
	for _, m := range equality.FindAllStringSubmatch(r.KeyConditionExpression, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = r.ExpressionAttributeNames[name]
		}
		if name != pk {
			continue
		}
		w, ok := r.ExpressionAttributeValues[m[2]]
		if !ok {
			return ""
		}
		av, err := w.value()
		if err != nil {
			return ""
		}
		return scalar(av)
	}
	return ""
}

var attrToken = regexp.MustCompile(`#?[A-Za-z0-9_\-]+`)

// updatedNames lists the attribute names an UpdateExpression names (#names
// resolved), or nil when there is none.
func (r *request) updatedNames() map[string]bool {
	if r.UpdateExpression == "" {
		return nil
	}
	out := map[string]bool{}
	for _, w := range attrToken.FindAllString(r.UpdateExpression, -1) {
		if strings.HasPrefix(w, "#") {
			w = r.ExpressionAttributeNames[w]
		}
		out[w] = true
	}
	return out
}
