package dynamo

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A table keyed (pk S, sk S) with an index (shard N, due N) and another
// sharing pk: four attribute definitions, each once with its type; key
// schemas hash then range; every index projects all; billing on demand.
func TestSpecInputDefinesEachAttributeOnce(t *testing.T) {
	in := Spec{Key: Key{S("pk"), S("sk")}, Indexes: []Index{
		{Name: "due", Key: Key{N("shard"), N("due")}},
		{Name: "by_pk", Key: Key{Partition: S("pk")}},
	}}.Input()
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	if want := []string{"pk:S", "sk:S", "shard:N", "due:N"}; !reflect.DeepEqual(defs, want) {
		t.Errorf("attribute definitions %v, want %v", defs, want)
	}
	if in.BillingMode != types.BillingModePayPerRequest || in.TableName != nil || in.StreamSpecification != nil {
		t.Errorf("billing %s, table name %v, stream %v: want on demand, none, none", in.BillingMode, in.TableName, in.StreamSpecification)
	}
	key := func(ks []types.KeySchemaElement) []string {
		var out []string
		for _, k := range ks {
			out = append(out, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
		}
		return out
	}
	if got := key(in.KeySchema); !reflect.DeepEqual(got, []string{"pk:HASH", "sk:RANGE"}) {
		t.Errorf("table key %v", got)
	}
	if len(in.GlobalSecondaryIndexes) != 2 {
		t.Fatalf("%d indexes, want 2", len(in.GlobalSecondaryIndexes))
	}
	for i, want := range [][]string{{"shard:HASH", "due:RANGE"}, {"pk:HASH"}} {
		ix := in.GlobalSecondaryIndexes[i]
		if got := key(ix.KeySchema); !reflect.DeepEqual(got, want) || ix.Projection.ProjectionType != types.ProjectionTypeAll {
			t.Errorf("index %s: key %v projection %s, want %v ALL", aws.ToString(ix.IndexName), got, ix.Projection.ProjectionType, want)
		}
	}
}
