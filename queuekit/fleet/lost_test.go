package fleet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fleet"
)

// A job whose holders die (claimed, never renewed, never ended) is taken
// over as a lost attempt, not a failure: with max_retry 0 it is claimed
// again and again, lost_attempts counting each lease that ran out and
// current_retry staying 0, until lost attempts pass the fleet's MaxLost
// (2 here); the claim after that ends it FATAL_FAILURE and dead-letters it,
// saying why. Real DynamoDB Local; the leases run out for real.
func TestLostAttemptsAreBoundedApartFromRetries(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	f := newFleet(t, fleet.WithLease(lease), fleet.WithMaxLost(2))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.Reset(ctx, 1); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(fleet.TimeLayout)
	if _, err := f.SubmitJobs(ctx, []fleet.Job{{UserID: "user-000", JobID: "dies", JobType: "report", ScheduledAt: now, MaxRetry: 0}}); err != nil {
		t.Fatal(err)
	}
	read := func() fleet.Job {
		t.Helper()
		js, err := f.ListAllJobs(ctx, "user-000")
		if err != nil || len(js) != 1 {
			t.Fatalf("list: %v, %v", js, err)
		}
		return js[0]
	}
	// Attempt 1 and two takeovers (lost 1, lost 2): each holder dies.
	for want := range 3 {
		j := read()
		if j.Attempt != want || j.LostAttempts != max(0, want-1) || j.CurrentRetry != 0 {
			t.Fatalf("before claim %d: attempt %d, lost %d, retry %d; want %d, %d, 0", want+1, j.Attempt, j.LostAttempts, j.CurrentRetry, want, max(0, want-1))
		}
		a, res, _, err := f.Claim(ctx, j, "dies-"+string(rune('a'+want)))
		if err != nil || res != fleet.Claimed || a == nil {
			t.Fatalf("claim %d: %v, %v", want+1, res, err)
		}
		if got := a.Job; got.LostAttempts != want || got.CurrentRetry != 0 {
			t.Errorf("claim %d: lost %d, retry %d; want %d lost (every lease before it ran out), 0 retries (max_retry 0 not spent)", want+1, got.LostAttempts, got.CurrentRetry, want)
		}
		time.Sleep(lease + 100*time.Millisecond) // the holder dies: no heartbeat, no end
	}
	// A third lost attempt is past the bound of 2: the claim ends the job.
	j := read()
	a, res, _, err := f.Claim(ctx, j, "dies-d")
	if err != nil || res != fleet.EndedFatal || a != nil {
		t.Fatalf("claim after 2 lost attempts and a third lease run out: %v, %v; want EndedFatal", res, err)
	}
	j = read()
	if j.Status != queuekit.StatusFatalFailure || j.CurrentRetry != 0 || j.Attempt != 3 {
		t.Errorf("after: %s, retry %d, attempt %d; want FATAL_FAILURE, 0, 3", j.Status, j.CurrentRetry, j.Attempt)
	}
	dl, err := f.DeadLetters(ctx)
	if err != nil || len(dl) != 1 {
		t.Fatalf("dead letters %v, %v; want one", dl, err)
	}
	if !strings.Contains(dl[0].LastError, "lost attempts 3, past the fleet's bound of 2") {
		t.Errorf("dead letter says %q; want it to name the lost attempts and the bound", dl[0].LastError)
	}
}

// Dead letters are spread over fleet.DeadLetterKeys partition keys, not one
// (a dead letter is a transactional put of 2 write units: one key would
// hold at most 500 a second): 64 jobs dead-lettered land on at least 10 of
// the 16 keys, none holding more than 10 (64 balls in 16 bins: 4 on
// average), and DeadLetters reads every one back, ordered by job.
func TestDeadLettersAreSpreadOverKeys(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	f, cat := newFleetOn(t, fleet.WithLease(lease), fleet.WithMaxLost(0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.Reset(ctx, 4); err != nil {
		t.Fatal(err)
	}
	const n = 64
	submitJobs(t, ctx, f, n, 0)
	read, err := f.ListAllJobs(ctx, "user-000")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range read { // every holder dies
		if _, res, _, err := f.Claim(ctx, j, "dies"); err != nil || res != fleet.Claimed {
			t.Fatalf("claim %s: %v, %v", j.JobID, res, err)
		}
	}
	time.Sleep(lease + 100*time.Millisecond)
	if read, err = f.ListAllJobs(ctx, "user-000"); err != nil {
		t.Fatal(err)
	}
	for _, j := range read { // MaxLost 0: the first lost attempt dead-letters the job
		if _, res, _, err := f.Claim(ctx, j, "taker"); err != nil || res != fleet.EndedFatal {
			t.Fatalf("claim %s after its holder died: %v, %v; want EndedFatal", j.JobID, res, err)
		}
	}
	perKey := map[string]int{}
	for k := range fleet.DeadLetterKeys {
		key := fmt.Sprintf("DLQ#%02d", k)
		out, err := cat.Client().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(f.Table()), KeyConditionExpression: aws.String("pk = :k"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberS{Value: key}}, Select: types.SelectCount})
		if err != nil {
			t.Fatal(err)
		}
		if out.Count > 0 {
			perKey[key] = int(out.Count)
		}
	}
	total, most := 0, 0
	for _, c := range perKey {
		total, most = total+c, max(most, c)
	}
	t.Logf("%d dead letters on %d keys, at most %d on one", total, len(perKey), most)
	if total != n || len(perKey) < 10 || most > 10 {
		t.Errorf("%d dead letters on %d keys (at most %d on one): want %d on at least 10 keys, at most 10 on one", total, len(perKey), most, n)
	}
	dl, err := f.DeadLetters(ctx)
	if err != nil || len(dl) != n {
		t.Fatalf("DeadLetters: %d, %v; want %d", len(dl), err, n)
	}
	for i, d := range dl {
		if want := fmt.Sprintf("job-%02d", i); d.JobID != want || !strings.Contains(d.LastError, "lost attempts 1, past the fleet's bound of 0") {
			t.Errorf("dead letter %d: %s %q; want %s, lost attempts named", i, d.JobID, d.LastError, want)
			break
		}
	}
}
