package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// leaseTable is a table of the test's own on DynamoDB Local, key "pk".
type leaseTable struct {
	t   *testing.T
	cat *catalog.Catalog
}

func newLeaseTable(t *testing.T) *leaseTable {
	t.Helper()
	cat := ddbtest.NewCatalog(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := cat.DB().CreateAndWait(ctx, &dynamodb.CreateTableInput{
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	return &leaseTable{t: t, cat: cat}
}

func pk(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: k}}
}

// update sends one UpdateItem of step s plus the caller's condition and
// state, asking for the old image on a refusal.
func (lt *leaseTable) update(ctx context.Context, k string, s fence.Step, cond *expression.ConditionBuilder, state string) error {
	c := s.Cond
	if cond != nil {
		c = c.And(*cond)
	}
	u := s.Update
	if state != "" {
		u = u.Set(expression.Name("state"), expression.Value(state))
	}
	e, err := expression.NewBuilder().WithCondition(c).WithUpdate(u).Build()
	if err != nil {
		lt.t.Fatalf("build: %v", err)
	}
	_, err = lt.cat.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(lt.cat.Table()), Key: pk(k),
		ConditionExpression: e.Condition(), UpdateExpression: e.Update(), ExpressionAttributeNames: e.Names(),
		ExpressionAttributeValues: e.Values(), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	return err
}

func (lt *leaseTable) read(ctx context.Context, k string) (fence.Hold, string) {
	out, err := lt.cat.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(lt.cat.Table()), Key: pk(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		lt.t.Fatalf("read %s: %v", k, err)
	}
	st, _ := out.Item["state"].(*types.AttributeValueMemberS)
	if st == nil {
		return fence.Default.HoldOf(out.Item), ""
	}
	return fence.Default.HoldOf(out.Item), st.Value
}

func cond(c expression.ConditionBuilder) *expression.ConditionBuilder { return &c }

// One job item's lease against the real DynamoDB Local, step by step: a
// grant, a lost race for it, a heartbeat, the reaper's revocation of the
// expired lease, the old holder's heartbeat and late end both refused as
// fenced (the item left as the new holder wrote it), a refusal by the
// holder's own condition told apart from fencing, and a release after which
// the holder's writes are fenced too.
func TestLeaseLifeOnDynamoDB(t *testing.T) {
	lt := newLeaseTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := fence.Default
	ready := cond(expression.Name("state").Equal(expression.Value("READY")))
	if _, err := lt.cat.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(lt.cat.Table()),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "job"}, "state": &types.AttributeValueMemberS{Value: "READY"}}}); err != nil {
		t.Fatal(err)
	}
	lease := time.Minute
	a := f.Acquire(0, "a", time.Now().Add(lease))
	if err := lt.update(ctx, "job", a, ready, "RUNNING"); err != nil {
		t.Fatalf("a's grant: %v", err)
	}
	if err := lt.update(ctx, "job", f.Acquire(0, "b", time.Now().Add(lease)), ready, "RUNNING"); !fence.Refused(err) {
		t.Fatalf("b's grant read at token 0 after a's: %v, want refused", err)
	}
	if err := f.Check(lt.update(ctx, "job", f.Renew(a.Hold, time.Now().Add(lease)), nil, ""), "heartbeat", a.Hold); err != nil {
		t.Fatalf("a's heartbeat: %v", err)
	}
	// The reaper may not take a lease that has not expired...
	if err := lt.update(ctx, "job", f.Revoke(a.Hold.Token), cond(f.Expired(time.Now())), "READY"); !fence.Refused(err) {
		t.Fatalf("revoke of a live lease: %v, want refused", err)
	}
	// ... and takes it once it has (a's last heartbeat set an end in the past).
	if err := lt.update(ctx, "job", f.Renew(a.Hold, time.Now().Add(-time.Millisecond)), nil, ""); err != nil {
		t.Fatalf("a's heartbeat: %v", err)
	}
	if err := lt.update(ctx, "job", f.Revoke(a.Hold.Token), cond(f.Expired(time.Now())), "READY"); err != nil {
		t.Fatalf("reaper: %v", err)
	}
	if h, st := lt.read(ctx, "job"); h != (fence.Hold{Token: 2}) || st != "READY" {
		t.Fatalf("after the reaper: %+v %s, want token 2, no holder, READY", h, st)
	}
	err := f.Check(lt.update(ctx, "job", f.Renew(a.Hold, time.Now().Add(lease)), nil, ""), "heartbeat", a.Hold)
	var fe *fence.FencedError
	if !errors.As(err, &fe) || fe.Now != (fence.Hold{Token: 2}) {
		t.Fatalf("a's heartbeat after the reaper: %v, want fenced, item at token 2 held by nobody", err)
	}
	b := f.Acquire(2, "b", time.Now().Add(lease))
	if err := lt.update(ctx, "job", b, ready, "RUNNING"); err != nil || b.Hold != (fence.Hold{Holder: "b", Token: 3}) {
		t.Fatalf("b's grant at token 2: %v, hold %+v", err, b.Hold)
	}
	// a wakes up and ends "its" job: refused, the item is b's, untouched.
	err = f.Check(lt.update(ctx, "job", f.Write(a.Hold), nil, "DONE"), "end", a.Hold)
	if !errors.As(err, &fe) || fe.Now != b.Hold || fe.Op != "end" {
		t.Fatalf("a's late end: %v, want fenced by b's hold %+v", err, b.Hold)
	}
	if h, st := lt.read(ctx, "job"); h != b.Hold || st != "RUNNING" {
		t.Fatalf("after a's late end: %+v %s, want b's hold and RUNNING", h, st)
	}
	// b's own condition fails: refused, but not fenced (the image shows b's hold).
	err = f.Check(lt.update(ctx, "job", f.Write(b.Hold), cond(expression.Name("state").Equal(expression.Value("PAUSED"))), "DONE"), "end", b.Hold)
	if err == nil || errors.Is(err, fence.ErrFenced) || !fence.Refused(err) {
		t.Fatalf("b's write refused by its own condition: %v, want refused and not fenced", err)
	}
	if err := lt.update(ctx, "job", f.Release(b.Hold), nil, "DONE"); err != nil {
		t.Fatalf("b's release: %v", err)
	}
	if h, st := lt.read(ctx, "job"); h != (fence.Hold{Token: 4}) || st != "DONE" {
		t.Fatalf("after b's release: %+v %s, want token 4, no holder, DONE", h, st)
	}
	if err := f.Check(lt.update(ctx, "job", f.Renew(b.Hold, time.Now().Add(lease)), nil, ""), "heartbeat", b.Hold); !errors.Is(err, fence.ErrFenced) {
		t.Fatalf("b's heartbeat after its release: %v, want fenced", err)
	}
}

// In a transaction (a counter item, then the fenced item), Check with the
// fenced item's index tells a fenced holder from a refusal of the counter's
// condition.
func TestTransactionRefusalsOnDynamoDB(t *testing.T) {
	lt := newLeaseTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := fence.Default
	table := aws.String(lt.cat.Table())
	for _, it := range []map[string]types.AttributeValue{
		{"pk": &types.AttributeValueMemberS{Value: "pool"}, "busy": &types.AttributeValueMemberN{Value: "1"}},
		{"pk": &types.AttributeValueMemberS{Value: "job"}, f.Token: &types.AttributeValueMemberN{Value: "7"}, f.Holder: &types.AttributeValueMemberS{Value: "a"}},
	} {
		if _, err := lt.cat.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	end := func(h fence.Hold, minBusy int) error {
		pool, err := expression.NewBuilder().WithCondition(expression.Name("busy").GreaterThanEqual(expression.Value(minBusy))).
			WithUpdate(expression.Add(expression.Name("busy"), expression.Value(-1))).Build()
		if err != nil {
			t.Fatal(err)
		}
		rel := f.Release(h)
		job, err := expression.NewBuilder().WithCondition(rel.Cond).WithUpdate(rel.Update).Build()
		if err != nil {
			t.Fatal(err)
		}
		_, err = lt.cat.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: table, Key: pk("pool"), ConditionExpression: pool.Condition(), UpdateExpression: pool.Update(),
				ExpressionAttributeNames: pool.Names(), ExpressionAttributeValues: pool.Values()}},
			{Update: &types.Update{TableName: table, Key: pk("job"), ConditionExpression: job.Condition(), UpdateExpression: job.Update(),
				ExpressionAttributeNames: job.Names(), ExpressionAttributeValues: job.Values(),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		}})
		return f.Check(err, "end", h, 1)
	}
	// A stale holder: fenced (item 1 refused), and the image names the real hold.
	err := end(fence.Hold{Holder: "a", Token: 6}, 1)
	var fe *fence.FencedError
	if !errors.As(err, &fe) || fe.Now != (fence.Hold{Holder: "a", Token: 7}) {
		t.Fatalf("stale token: %v, want fenced with the item at token 7 held by a", err)
	}
	// The holder is right but the counter's condition fails: not fenced.
	err = end(fence.Hold{Holder: "a", Token: 7}, 2)
	if err == nil || errors.Is(err, fence.ErrFenced) || !fence.Refused(err, 0) || fence.Refused(err, 1) {
		t.Fatalf("counter refused: %v, want refused at item 0 only, not fenced", err)
	}
	if err := end(fence.Hold{Holder: "a", Token: 7}, 1); err != nil {
		t.Fatalf("the holder's end: %v", err)
	}
	if h, _ := lt.read(ctx, "job"); h != (fence.Hold{Token: 8}) {
		t.Fatalf("after the end: %+v, want token 8 and no holder", h)
	}
}

// Keep with a real heartbeat: a holder works under its lease, renewed on
// DynamoDB; another process takes the lease over (the token moves on); the
// holder's next heartbeat is fenced and its work's context cancelled with a
// cause matching ErrFenced; the item keeps the new token.
func TestKeepOnDynamoDB(t *testing.T) {
	lt := newLeaseTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := fence.Default
	lease := 800 * time.Millisecond
	since := time.Now()
	a := f.Acquire(0, "a", since.Add(lease))
	if err := lt.update(ctx, "job", a, nil, "RUNNING"); err != nil {
		t.Fatal(err)
	}
	beat := func(ctx context.Context, until time.Time) error {
		return f.Check(lt.update(ctx, "job", f.Renew(a.Hold, until), nil, ""), "heartbeat", a.Hold)
	}
	err := fence.Do(ctx, since, lease, beat, func(wctx context.Context) error {
		time.Sleep(2 * lease) // outlives the first lease: only heartbeats keep it
		if h, _ := lt.read(ctx, "job"); h != a.Hold {
			t.Errorf("while a works: %+v, want a's hold", h)
		}
		if wctx.Err() != nil {
			t.Errorf("work cancelled while the lease was renewed: %v", context.Cause(wctx))
		}
		if err := lt.update(ctx, "job", f.Revoke(a.Hold.Token), nil, "READY"); err != nil { // another process takes over
			t.Errorf("take over: %v", err)
		}
		select {
		case <-wctx.Done():
		case <-time.After(time.Minute):
			t.Error("the work was not stopped within a minute of losing its lease")
		}
		return nil
	})
	if !errors.Is(err, fence.ErrFenced) {
		t.Fatalf("Do = %v, want ErrFenced", err)
	}
	if h, st := lt.read(ctx, "job"); h != (fence.Hold{Token: 2}) || st != "READY" {
		t.Fatalf("after the take-over: %+v %s", h, st)
	}
}
