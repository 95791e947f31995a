package limits

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PartitionOf names the partition a key's writes and Queries are counted
// on: a new on-demand table has 4 partitions (12,000 read, 4,000 write units
// warm); after a put and a Query of each of several keys, the only
// partition with units in Stats for a key's second is the one PartitionOf
// names, and a table the layer never saw is an error.
func TestPartitionOfIsWhereAKeysUnitsAreCounted(t *testing.T) {
	f := newFixture(t)
	name := f.table(onDemand())
	ctx := context.Background()
	for i, pk := range []string{"SHARD", "MEMBER", "META", "USER#u1"} {
		f.clk.Add(2e9) // a second of its own for each key
		if o := f.puts(name, 1, func(int) (string, string) { return pk, "x" }); o.ok != 1 {
			t.Fatalf("put %s: %s", pk, o)
		}
		if _, err := f.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}}); err != nil {
			t.Fatal(err)
		}
		want, err := f.s.PartitionOf(name, "", &types.AttributeValueMemberS{Value: pk})
		if err != nil {
			t.Fatal(err)
		}
		sec := f.clk.Now().Unix()
		seen := 0
		for _, x := range f.s.Stats() {
			if x.Table != name || x.Partition < 0 || x.Second.Unix() != sec {
				continue
			}
			seen++
			if x.Partition != want {
				t.Errorf("key %d (%s): units on partition %d, PartitionOf says %d", i, pk, x.Partition, want)
			}
			if x.WriteUnits == 0 || x.ReadUnits == 0 {
				t.Errorf("key %s: partition %d took %.1f write and %.1f read units, want both", pk, x.Partition, x.WriteUnits, x.ReadUnits)
			}
		}
		if seen != 1 {
			t.Errorf("key %s: %d partitions took units in its second, want 1", pk, seen)
		}
	}
	if _, err := f.s.PartitionOf("no_such_table", "", &types.AttributeValueMemberS{Value: "x"}); err == nil {
		t.Error("a table the layer never saw: want an error")
	}
}
