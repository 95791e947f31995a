package timers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/timers"
)

// newTimers creates a timers table and its state table for this test and
// deletes both when it ends.
func newTimers(t *testing.T) *timers.Timers {
	t.Helper()
	tm := timers.New(ddbtest.NewCatalog(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if err := tm.DeleteTables(context.Background()); err != nil {
			t.Errorf("delete tables: %v", err)
		}
	})
	if err := tm.CreateTables(ctx); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	return tm
}

func schedule(t *testing.T, tm *timers.Timers, due time.Time, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := tm.Schedule(context.Background(), timers.Timer{ID: id, Due: due, Payload: "job " + id}); err != nil {
			t.Fatalf("schedule %s: %v", id, err)
		}
	}
}

// runUntil runs a consumer with opts until done holds, or fails the test
// after 3 minutes (Local's sweep visits a table of under 20 items every
// 10 s, so every timer here is deleted within about 20 s of its due time).
func runUntil(t *testing.T, tm *timers.Timers, opts timers.ConsumerConfig, done func(timers.Stats) bool) timers.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	finished := false
	opts.Until = func(s timers.Stats) bool { finished = done(s); return finished }
	c := tm.Consumer(opts)
	if err := c.Run(ctx); err != nil {
		t.Fatalf("consumer: %v (stats %+v)", err, c.Stats())
	}
	if !finished {
		t.Fatalf("timers did not fire within 3 minutes: stats %+v", c.Stats())
	}
	return c.Stats()
}

func firedIDs(t *testing.T, tm *timers.Timers) []string {
	t.Helper()
	fires, err := tm.Fires(context.Background())
	if err != nil {
		t.Fatalf("fires: %v", err)
	}
	var ids []string
	for _, f := range fires {
		ids = append(ids, f.ID)
	}
	sort.Strings(ids)
	return ids
}

func TestEveryTimerFiresOnceAndNothingElseFires(t *testing.T) {
	t.Parallel()
	tm := newTimers(t)
	ctx := context.Background()
	due := time.Now().Add(time.Second)
	schedule(t, tm, due, "a", "b", "c", "d", "e")
	// Not fires: a timer updated (MODIFY) and one cancelled with DeleteItem
	// (a user's REMOVE), both due in an hour.
	later := time.Now().Add(time.Hour)
	schedule(t, tm, later, "updated", "cancelled")
	if err := tm.Schedule(ctx, timers.Timer{ID: "updated", Due: later, Payload: "changed"}); err != nil {
		t.Fatal(err)
	}
	if err := tm.Cancel(ctx, "cancelled"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	st := runUntil(t, tm, timers.ConsumerConfig{OnFire: func(f timers.Fire) {
		mu.Lock()
		seen[f.ID]++
		mu.Unlock()
		if f.Delay < 0 {
			t.Errorf("timer %s fired %s before it was due", f.ID, -f.Delay)
		}
	}}, func(s timers.Stats) bool { return s.Fired >= 5 && s.Ignored[timers.KindUserDelete] >= 1 })
	// A second consumer passes over the stream again from the checkpoint:
	// nothing more may fire.
	st2 := runUntil(t, tm, timers.ConsumerConfig{}, func(timers.Stats) bool { return true })
	if st2.Fired != 0 {
		t.Errorf("a second pass fired %d more", st2.Fired)
	}
	// Records: 7 inserts + 1 update, one user delete, five TTL deletes.
	if st.Fired != 5 || st.Duplicates != 0 || st.Ignored[timers.KindInsert] != 7 || st.Ignored[timers.KindUpdate] != 1 || st.Ignored[timers.KindUserDelete] != 1 {
		t.Errorf("stats = %+v; want 5 fired, 0 duplicates, ignored 7 inserts, 1 update, 1 user delete", st)
	}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if seen[id] != 1 {
			t.Errorf("timer %s fired %d times, want once", id, seen[id])
		}
	}
	if got := fmt.Sprint(firedIDs(t, tm)); got != "[a b c d e]" {
		t.Errorf("fire records %s, want [a b c d e]", got)
	}
	if n, err := tm.Pending(ctx); err != nil || n != 1 {
		t.Errorf("pending = %d, %v; want 1 (the updated timer, due in an hour)", n, err)
	}
}

// A consumer stopped after a commit, and one killed between its handler and
// its commit, leave a checkpoint from which the next one neither loses nor
// repeats a fire. The stop is the context ending inside the process: every
// DynamoDB call after it fails before it is sent, exactly like a process
// that died there, because the state a restart reads is only in DynamoDB.
func TestRestartNeitherLosesNorRepeats(t *testing.T) {
	t.Parallel()
	tm := newTimers(t)
	ids := []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}
	schedule(t, tm, time.Now().Add(time.Second), ids...)
	var mu sync.Mutex
	committed := map[string]int{}
	onFire := func(f timers.Fire) { mu.Lock(); committed[f.ID]++; mu.Unlock() }

	// A: stops right after its third commit (OnFire runs after the commit,
	// so the stop lands between two records).
	ctxA, cancelA := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelA()
	fa := 0
	a := tm.Consumer(timers.ConsumerConfig{OnFire: func(f timers.Fire) {
		onFire(f)
		if fa++; fa == 3 {
			cancelA()
		}
	}})
	if err := a.Run(ctxA); err != nil || a.Stats().Fired != 3 {
		t.Fatalf("consumer A: %v, stats %+v; want 3 fired", err, a.Stats())
	}
	// B: commits one, then dies inside the handler of the next (no commit).
	handled := 0
	ctxB, cancelB := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelB()
	bh := tm.Consumer(timers.ConsumerConfig{OnFire: onFire, Attempts: 1, Handler: func(ctx context.Context, f timers.Fire) error {
		handled++
		if handled == 2 {
			cancelB() // dies here: the handler ran, the commit never will
			return ctx.Err()
		}
		return nil
	}})
	if err := bh.Run(ctxB); err != nil {
		t.Fatalf("consumer B: %v", err)
	}
	if st := bh.Stats(); st.Fired != 1 {
		t.Fatalf("consumer B committed %d fires before dying, want 1", st.Fired)
	}
	// C: runs to the end.
	st := runUntil(t, tm, timers.ConsumerConfig{OnFire: onFire}, func(s timers.Stats) bool { return s.Fired >= 4 })
	if st.Fired != 4 || st.Duplicates != 0 {
		t.Errorf("consumer C: %+v, want the 4 fires left and no duplicates", st)
	}
	for _, id := range ids {
		if committed[id] != 1 {
			t.Errorf("timer %s committed %d times, want once", id, committed[id])
		}
	}
	if got := fmt.Sprint(firedIDs(t, tm)); got != fmt.Sprint(ids) {
		t.Errorf("fire records %s, want %v", got, ids)
	}
}

func TestPoisonTimerGoesToTheDeadLetterQueueAndRecurringTimersReschedule(t *testing.T) {
	t.Parallel()
	tm := newTimers(t)
	q := sqstest.Client(t)
	ctx := context.Background()
	dlq, err := q.Create(ctx, sqstest.Name(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	sqstest.Cleanup(t, q, dlq)
	due := time.Now().Add(time.Second)
	schedule(t, tm, due, "ok1", "poison", "ok2")
	if err := tm.Schedule(ctx, timers.Timer{ID: "every2s", Due: due, Every: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	recurring := 0
	st := runUntil(t, tm, timers.ConsumerConfig{Queues: q, DLQ: dlq, Attempts: 2, Backoff: 10 * time.Millisecond,
		Handler: func(ctx context.Context, f timers.Fire) error {
			if f.ID == "poison" {
				return errors.New("poison")
			}
			return nil
		},
		OnFire: func(f timers.Fire) {
			if f.ID == "every2s" {
				recurring++
			}
		}}, func(s timers.Stats) bool { return s.DeadLettered >= 1 && s.Fired >= 2 && recurring >= 2 })
	if st.DeadLettered != 1 {
		t.Errorf("dead-lettered %d, want 1", st.DeadLettered)
	}
	out, err := q.SQS().ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("DLQ holds %d messages, want 1", len(out.Messages))
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(aws.ToString(out.Messages[0].Body)), &body); err != nil || body["timer_id"] != "poison" || body["error"] != "poison" {
		t.Errorf("DLQ message %s (%v), want timer poison with its error", aws.ToString(out.Messages[0].Body), err)
	}
	ids := firedIDs(t, tm)
	if len(ids) < 4 || fmt.Sprint(ids[:2]) != "[every2s every2s]" || ids[len(ids)-2] != "ok1" || ids[len(ids)-1] != "ok2" {
		t.Errorf("fire records %v, want every2s at least twice, ok1, ok2 and no poison", ids)
	}
}

func TestClassify(t *testing.T) {
	img := map[string]stypes.AttributeValue{"timer_id": &stypes.AttributeValueMemberS{Value: "x"}}
	ttl := &stypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}
	for _, c := range []struct {
		name string
		r    stypes.Record
		want timers.Kind
	}{
		{"AWS TTL delete", stypes.Record{EventName: stypes.OperationTypeRemove, UserIdentity: ttl, Dynamodb: &stypes.StreamRecord{OldImage: img}}, timers.KindTTLDelete},
		{"AWS user delete", stypes.Record{EventName: stypes.OperationTypeRemove, Dynamodb: &stypes.StreamRecord{OldImage: img}}, timers.KindUserDelete},
		{"other service identity", stypes.Record{EventName: stypes.OperationTypeRemove, UserIdentity: &stypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("example.com")}, Dynamodb: &stypes.StreamRecord{OldImage: img}}, timers.KindUserDelete},
		{"Local 3.3.1 TTL delete", stypes.Record{EventName: timers.Local331TTLEventName, Dynamodb: &stypes.StreamRecord{OldImage: img}}, timers.KindTTLDelete},
		{"unknown name without image", stypes.Record{EventName: timers.Local331TTLEventName, Dynamodb: &stypes.StreamRecord{}}, timers.KindOther},
		{"insert", stypes.Record{EventName: stypes.OperationTypeInsert, Dynamodb: &stypes.StreamRecord{NewImage: img}}, timers.KindInsert},
		{"modify", stypes.Record{EventName: stypes.OperationTypeModify, Dynamodb: &stypes.StreamRecord{NewImage: img, OldImage: img}}, timers.KindUpdate},
	} {
		if got := timers.Classify(c.r); got != c.want {
			t.Errorf("%s: Classify = %s, want %s", c.name, got, c.want)
		}
	}
}

// Kind's String names every constant and any other value without panicking.
func TestKindStringNamesEveryValue(t *testing.T) {
	for k, want := range map[timers.Kind]string{timers.KindInsert: "insert", timers.KindUpdate: "update",
		timers.KindUserDelete: "user delete", timers.KindTTLDelete: "TTL delete", timers.KindOther: "other",
		timers.Kind(9): "Kind(9)", timers.Kind(-1): "Kind(-1)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

// Timers due an hour ago and timers due in an hour: the filter on the TTL
// attribute hides the expired ones whether or not TTL has deleted them yet
// (Local deletes within seconds, AWS typically within a few days), so the
// filtered count is exactly the future timers, and the unfiltered one lies
// between that and all of them.
func TestVisibleFiltersExpiredTimersStillInTheTable(t *testing.T) {
	tm := newTimers(t)
	now := time.Now()
	schedule(t, tm, now.Add(-time.Hour), "expired-1", "expired-2")
	schedule(t, tm, now.Add(time.Hour), "future-1", "future-2", "future-3")
	all, live, err := tm.Visible(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if live != 3 || all < 3 || all > 5 {
		t.Fatalf("all %d, live %d: want live = 3 (the future timers) and 3 ≤ all ≤ 5", all, live)
	}
}

// The catalog lists a timers table among the tables with TTL on, and not its
// state table (no TTL): what notebook 06 counts against DynamoDB Local's
// limit of catalog.LocalTTLSweepers tables swept at a time.
func TestTTLTablesListsTheTimersTableNotItsStateTable(t *testing.T) {
	cat := ddbtest.NewCatalog(t)
	tm := timers.New(cat)
	t.Cleanup(func() { _ = tm.DeleteTables(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tm.CreateTables(ctx); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	names, err := cat.TTLTables(ctx)
	if err != nil {
		t.Fatalf("TTL tables: %v", err)
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	if !has[tm.Table()] || has[tm.StateTable()] {
		t.Errorf("TTL tables %v: want %s listed and %s not", names, tm.Table(), tm.StateTable())
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("TTL tables %v: not sorted", names)
	}
}
