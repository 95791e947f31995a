package schemalab

import (
	"context"
	"fmt"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// The AWS rules: a status change costs a dense index nothing when status is
// not projected, one write when it is, two when status is the index key;
// a sparse index pays only for the items it holds.
func TestIndexDesignCostByTheRules(t *testing.T) {
	for _, tc := range []struct {
		d              IndexDesign
		index, perJobs float64 // index write units of the night; AWS units per status change
		right          bool
	}{
		{BestDenseIndex, 10, 1, true},
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: queuekit.AttrBatchDate, Projection: ProjectAll}, 30, 2, true},
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: AttrMaintenanceDate, Projection: ProjectAll}, 3, 1.1, true},
		{IndexDesign{Kind: LSI, SortKey: AttrMaintenanceDate, Projection: ProjectKeysOnly}, 1, 1, true},
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrStatus, Projection: ProjectAll}, 50, 3, false},
	} {
		c, err := IndexDesignCost(tc.d)
		if err != nil {
			t.Fatal(err)
		}
		per, _ := c.PerChange()
		if c.AWS.Index != tc.index || per != tc.perJobs || c.Right() != tc.right || c.AWS.Table != 30 {
			t.Errorf("%s: index %v table %v per change %v right %v (%s); want index %v table 30 per change %v right %v",
				tc.d, c.AWS.Index, c.AWS.Table, per, c.Right(), c.Wrong, tc.index, tc.perJobs, tc.right)
		}
	}
}

func TestIndexDesignBound(t *testing.T) {
	bound, err := IndexDesignCost(BestDenseIndex)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d     IndexDesign
		under bool
	}{
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: queuekit.AttrBatchDate, Projection: ProjectAll}, false},
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: queuekit.AttrBatchDate, Projection: ProjectKeysOnly}, false},
		{IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: AttrMaintenanceDate, Projection: ProjectAll}, true},
		{IndexDesign{Kind: LSI, SortKey: AttrMaintenanceDate, Projection: ProjectKeysOnly}, true},
		{IndexDesign{Kind: LSI, SortKey: queuekit.AttrWorkloadClass, Projection: ProjectAll}, false},
	} {
		c, err := IndexDesignCost(tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NightDollars() <= bound.NightDollars(); got != tc.under {
			t.Errorf("%s: %v <= bound %v is %v, want %v", tc.d, c.NightDollars(), bound.NightDollars(), got, tc.under)
		}
	}
}

func TestIndexDesignCheck(t *testing.T) {
	for _, d := range []IndexDesign{
		{},
		{Kind: GSI, Projection: ProjectAll},
		{Kind: GSI, PartitionKey: "nightly", Projection: ProjectAll},
		{Kind: GSI, PartitionKey: queuekit.AttrExclusive, Projection: ProjectAll},
		{Kind: LSI, Projection: ProjectAll},
		{Kind: LSI, SortKey: queuekit.AttrWindowJobID, Projection: ProjectAll},
		{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, Projection: "SOME"},
		{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, Projection: ProjectInclude},
	} {
		if err := d.Check(); err == nil {
			t.Errorf("%+v: no error", d)
		}
	}
}

// On DynamoDB Local: what Local charges for the night's index writes and D's
// reads agrees with the rules for these designs, and D's answer is judged
// on what Local returned.
func TestMeasureIndexDesignOnLocal(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	for _, d := range []IndexDesign{BestDenseIndex,
		{Kind: LSI, SortKey: AttrMaintenanceDate, Projection: ProjectKeysOnly},
		{Kind: GSI, PartitionKey: queuekit.AttrStatus, Projection: ProjectAll}} {
		c, err := MeasureIndexDesign(context.Background(), d, catalog.WithEndpoint(ep))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := IndexDesignCost(d)
		if c.Local != c.AWS || c.ReadUnits != c.AWSReadUnits || c.Right() != want.Right() {
			t.Errorf("%s: Local %+v reads %v right %v; rules %+v reads %v right %v", d, c.Local, c.ReadUnits, c.Right(), c.AWS, c.AWSReadUnits, want.Right())
		}
	}
}

func ExampleMeasureIndexDesign() {
	ep, err := ddbtest.Find()
	if err != nil {
		fmt.Println(err)
		return
	}
	d := IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: AttrMaintenanceDate, Projection: ProjectAll}
	c, err := MeasureIndexDesign(context.Background(), d, catalog.WithEndpoint(ep))
	if err != nil {
		fmt.Println(err)
		return
	}
	perChange, _ := c.PerChange()
	fmt.Printf("%s: right %v, %.1f write units a status change\n", d, c.Right(), perChange)
	// Output: GSI workload_class + maintenance_date, ALL: right true, 1.1 write units a status change
}

func ExampleIndexCostTable() {
	bar, err := IndexDesignCost(BestDenseIndex)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := IndexDesignCost(IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: queuekit.AttrBatchDate, Projection: ProjectAll})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Local, c.ReadUnits = c.AWS, c.AWSReadUnits // as Local reported them for this design
	fmt.Println(IndexCostTable(c, bar))
	// Output:
	// | night 2026-05-13, 10 jobs | GSI workload\_class + batch\_date, ALL | the bar: the best index that holds every item |
	// |---|---|---|
	// | items in the index (of 379) | 379 | 379 |
	// | write units of the night, table: Local / AWS rules | 30 / 30 | 30 |
	// | write units of the night, index: Local / AWS rules | 30 / 30 | 10 |
	// | write units a status change, table + index (AWS rules) | 2 | 1 |
	// | Queries for D, then GetItems for the runtime | 1, 0 | 1, 0 |
	// | read units for D: Local / AWS rules | 1.5 / 1.5 | 1 |
	// | on demand, 1,000 nights and one D a night (AWS rules) | \\$0.0377 | \\$0.0251 |
}
