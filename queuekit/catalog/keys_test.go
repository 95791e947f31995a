package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// A catalog WithItemKeys creates its table with those keys, writes raw items
// with PutItems and reads one partition back with QueryPartition.
func TestItemKeysPutItemsQueryPartition(t *testing.T) {
	ctx := context.Background()
	c := ddbtest.Catalog(t, catalog.WithItemKeys("pk", "sk"))
	var items []map[string]types.AttributeValue
	for i := range 60 { // 3 partitions of 20 items: more than two BatchWriteItem requests
		items = append(items, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("p%d", i%3)},
			"sk": &types.AttributeValueMemberS{Value: fmt.Sprintf("%03d", i)},
		})
	}
	rep, err := c.PutItems(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 60 || rep.Requests < 3 {
		t.Errorf("put %d items in %d requests; want 60 in at least 3 (25 a request)", rep.Items, rep.Requests)
	}
	got, arep, err := c.QueryPartition(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || arep.Count != 20 || arep.ScannedCount != 20 {
		t.Errorf("partition p1: %d items, count %d scanned %d; want 20", len(got), arep.Count, arep.ScannedCount)
	}
	// 20 tiny items are well under 4 KB: one eventually consistent read, 0.5 RCU.
	if arep.ConsumedRCU != 0.5 {
		t.Errorf("consumed %v RCU, want 0.5", arep.ConsumedRCU)
	}
	// The same table opened with the default schema is refused with the schema it wants.
	other, err := catalog.New(ctx, catalog.WithEndpoint(c.Endpoint()), catalog.WithTable(c.Table()))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx); err == nil || !strings.Contains(err.Error(), "batch_date (HASH)") || !strings.Contains(err.Error(), "window_job_id (RANGE)") {
		t.Errorf("default schema on a pk/sk table: %v; want an error naming the wanted schema", err)
	}
	// And other item keys too.
	third, err := catalog.New(ctx, catalog.WithEndpoint(c.Endpoint()), catalog.WithTable(c.Table()), catalog.WithItemKeys("other", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := third.CreateTable(ctx); err == nil || !strings.Contains(err.Error(), "want other (HASH)") {
		t.Errorf("item keys other on a pk/sk table: %v; want an error naming other (HASH)", err)
	}
}
