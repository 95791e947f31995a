package limits

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// The layer's units are DynamoDB's: a write is its item's size per KB
// rounded up, a read per 4 KB, half when eventually consistent, a
// transaction twice that
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling),
// sized by the project's item-size rules (dynamo.ItemSize). Each call
// asks DynamoDB Local for its ConsumedCapacity, and the layer's counter
// for that second must move by exactly that much.
func TestUnitsAreWhatLocalReports(t *testing.T) {
	f := newFixture(t) // S = 1: nothing throttles
	in := onDemand()
	in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS}}
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("by_status"),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}
	name := f.table(in)
	ctx := context.Background()
	total := func() (float64, float64) {
		tot := Totals(f.s.Stats(), name, "")
		return tot.ReadUnits, tot.WriteUnits
	}
	check := func(what string, cc *types.ConsumedCapacity, read bool, r0, w0, want float64) {
		t.Helper()
		r1, w1 := total()
		got := w1 - w0
		if read {
			got = r1 - r0
		}
		if cc == nil {
			t.Fatalf("%s: Local reported no ConsumedCapacity", what)
		}
		if local := aws.ToFloat64(cc.CapacityUnits); local != want || got != want {
			t.Errorf("%s: layer %v, Local (table) %v, want %v", what, got, local, want)
		}
	}
	for _, n := range []int{10, 1000, 1500, 5000, 9000} {
		it := item("u", strings.Repeat("s", 3), "body", strings.Repeat("x", n))
		want := WriteUnits(dynamo.ItemSize(it))
		r0, w0 := total()
		out, err := f.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: it, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		if err != nil {
			t.Fatal(err)
		}
		// Each put replaces a smaller item, so its own size counts (the
		// items have no status: the index is not written).
		check("put", out.ConsumedCapacity, false, r0, w0, want)
		for _, cons := range []bool{true, false} {
			r0, w0 = total()
			g, err := f.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item("u", "sss"), ConsistentRead: aws.Bool(cons), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			if err != nil {
				t.Fatal(err)
			}
			check("get", g.ConsumedCapacity, true, r0, w0, ReadUnits(dynamo.ItemSize(it), cons))
		}
	}
	it := item("t", "1", "body", strings.Repeat("y", 2500))
	r0, w0 := total()
	tx, err := f.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(name), Item: it}}},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil || len(tx.ConsumedCapacity) != 1 {
		t.Fatalf("transaction: %v %v", err, tx)
	}
	r1, w1 := total()
	if want := 2 * WriteUnits(dynamo.ItemSize(it)); aws.ToFloat64(tx.ConsumedCapacity[0].CapacityUnits) != want || w1-w0 != want || r1 != r0 {
		t.Errorf("transactional put of %d bytes: layer %v, Local %v, want %v", dynamo.ItemSize(it), w1-w0, aws.ToFloat64(tx.ConsumedCapacity[0].CapacityUnits), want)
	}
	r0, _ = total()
	q, err := f.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "u"}}, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	r1, _ = total()
	if local := aws.ToFloat64(q.ConsumedCapacity.CapacityUnits); local != r1-r0 {
		t.Errorf("query: layer %v, Local %v; %+v", r1-r0, local, f.s.Stats())
	}
}

// GSI writes (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes):
// an item that enters an index costs one put there, one that leaves it a
// delete, and a change of the index key a delete and a put; a write that
// leaves the index entry as it was costs the index nothing. The expected
// units come from those rules, one-unit items.
func TestGSIWriteUnits(t *testing.T) {
	f := newFixture(t)
	in := onDemand()
	in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS}}
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("by_status"),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}
	name := f.table(in)
	ctx := context.Background()
	idx := func() float64 { return Totals(f.s.Stats(), name, "by_status").WriteUnits }
	steps := []struct {
		what string
		do   func() error
		want float64
	}{
		{"put without the index key", func() error {
			_, err := f.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item("g", "1")})
			return err
		}, 0},
		{"update that adds the index key (a put)", func() error {
			_, err := f.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item("g", "1"), UpdateExpression: aws.String("SET #s = :s"),
				ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "DUE"}}})
			return err
		}, 1},
		{"update of an unprojected attribute (nothing)", func() error {
			_, err := f.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item("g", "1"), UpdateExpression: aws.String("SET note = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "x"}}})
			return err
		}, 0},
		{"update of the index key (a delete and a put)", func() error {
			_, err := f.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item("g", "1"), UpdateExpression: aws.String("SET #s = :s"),
				ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "DONE"}}})
			return err
		}, 2},
		{"delete (the entry's delete)", func() error {
			_, err := f.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: item("g", "1")})
			return err
		}, 1},
	}
	for _, s := range steps {
		before := idx()
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := idx() - before; got != s.want {
			t.Errorf("%s: %v index write units, want %v", s.what, got, s.want)
		}
	}
}
