package fleet_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
)

// The due index projects only what a claim and a dispatcher's message need
// (fleet.DueIndexAttributes) beside the keys, so an entry is about the
// size the cost model assumes (fleetplan's IndexEntryBytes, 200 B): a page
// of 500 entries of one shard, read with ReturnConsumedCapacity on real
// DynamoDB Local, costs at most the model's ½ · ⌈500 · 200 / 4,096⌉ read
// units, and its entries carry no other attribute (holder, job_type,
// result_location, the nonce).
func TestTheDueIndexProjectsOnlyWhatAClaimReads(t *testing.T) {
	t.Parallel()
	f, cat := newFleetOn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.Reset(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const n = 500
	now := time.Now().UTC().Format(fleet.TimeLayout)
	var jobs []fleet.Job
	for i := range n {
		jobs = append(jobs, fleet.Job{UserID: fmt.Sprintf("user-%03d", i%50), JobID: fmt.Sprintf("job-%07d", i), JobType: "report", ScheduledAt: now,
			Priority: 2, MaxRetry: 3, ResultLocation: fmt.Sprintf("s3://results/user-%03d/job-%07d", i%50, i)})
	}
	if _, err := f.SubmitJobs(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	out, err := cat.Client().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(f.Table()), IndexName: aws.String(fleet.IndexDue),
		KeyConditionExpression:    aws.String("claim_shard = :k"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberN{Value: "0"}},
		Limit:                     aws.Int32(n), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != n {
		t.Fatalf("%d entries in shard 0, want %d", len(out.Items), n)
	}
	// lease_until is written by a claim: a job never claimed has none.
	want := slices.DeleteFunc(append([]string{fleet.AttrPK, fleet.AttrSK, "claim_shard", "due_at"}, fleet.DueIndexAttributes...),
		func(a string) bool { return a == "lease_until" })
	sort.Strings(want)
	var got []string
	for name := range out.Items[0] {
		got = append(got, name)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("an entry carries %v; want the keys and the projected attributes %v", got, want)
	}
	a := fleetplan.Seed003
	model := 0.5 * math.Ceil(float64(n*a.IndexEntryBytes)/4096)
	if out.ConsumedCapacity == nil || out.ConsumedCapacity.CapacityUnits == nil {
		t.Fatal("no consumed capacity reported for the page")
	}
	units := *out.ConsumedCapacity.CapacityUnits
	t.Logf("a page of %d entries: %.1f read units (the model: %.1f, entries of %d B)", n, units, model, a.IndexEntryBytes)
	if units > model {
		t.Errorf("a page of %d entries cost %.1f read units; the model's entries of %d B give %.1f", n, units, a.IndexEntryBytes, model)
	}
}
