package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attr is a key attribute: its name and scalar type.
type Attr struct {
	Name string
	Type types.ScalarAttributeType
}

// S is a string key attribute.
func S(name string) Attr { return Attr{name, types.ScalarAttributeTypeS} }

// N is a number key attribute.
func N(name string) Attr { return Attr{name, types.ScalarAttributeTypeN} }

// Key is a partition attribute and an optional sort attribute (Sort.Name
// "" for none).
type Key struct{ Partition, Sort Attr }

// Index is a global secondary index. With no Include it projects every
// attribute, so a reader of the index needs no second read of the table;
// with Include it projects the keys and those attributes only (smaller
// entries: fewer read units a page).
type Index struct {
	Name    string
	Key     Key
	Include []string
}

// Spec is an on-demand table as this project creates them: its key, its
// global secondary indexes and, if not nil, its stream.
type Spec struct {
	Key     Key
	Indexes []Index
	Stream  *types.StreamSpecification
}

// Input returns the CreateTableInput of the spec, without a TableName (the
// caller's table supplies it): billing on demand, each key attribute of the
// table and its indexes defined once, in order of first use.
func (s Spec) Input() *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{BillingMode: types.BillingModePayPerRequest, StreamSpecification: s.Stream}
	seen := map[string]bool{}
	schema := func(k Key) []types.KeySchemaElement {
		out := []types.KeySchemaElement{{AttributeName: aws.String(k.Partition.Name), KeyType: types.KeyTypeHash}}
		if k.Sort.Name != "" {
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.Sort.Name), KeyType: types.KeyTypeRange})
		}
		for _, a := range []Attr{k.Partition, k.Sort} {
			if a.Name != "" && !seen[a.Name] {
				seen[a.Name] = true
				in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.Name), AttributeType: a.Type})
			}
		}
		return out
	}
	in.KeySchema = schema(s.Key)
	for _, ix := range s.Indexes {
		proj := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if len(ix.Include) > 0 {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: ix.Include}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name), KeySchema: schema(ix.Key), Projection: proj,
		})
	}
	return in
}
