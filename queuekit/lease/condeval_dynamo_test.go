package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// condCases are the conditions the evaluator is checked on: every
// condition builder the executor sends for a job (claim, start, heartbeat,
// end, reaper revoke), with arguments that match the items below and that
// do not, and the grammar's corners (a missing attribute under <> and <,
// types that differ, list and map paths, NOT, BETWEEN).
func condCases() map[string]expression.ConditionBuilder {
	const run = "run-1"
	h := fence.Hold{Holder: "w-a", Token: 3}
	until := time.UnixMilli(1_700_000_004_000)
	n := expression.Name
	v := expression.Value
	return map[string]expression.ConditionBuilder{
		"claim at 3":             claimJobCond(jobFence.Acquire(3, "w-b", until), "s-1", 1, run),
		"claim at 2":             claimJobCond(jobFence.Acquire(2, "w-b", until), "s-1", 1, run),
		"claim at 0":             claimJobCond(jobFence.Acquire(0, "w-b", until), "s-1", 0, run),
		"claim other run":        claimJobCond(jobFence.Acquire(3, "w-b", until), "s-1", 1, "run-0"),
		"claim pool v7":          claimPoolCond(run, poolItem{Version: 7, Capacity: 2}, false, 1),
		"claim pool whole":       claimPoolCond(run, poolItem{Version: 7, Capacity: 2}, true, 2),
		"start":                  startCond(jobFence.Renew(h, until), run, 1_700_000_000_000),
		"start other ms":         startCond(jobFence.Renew(h, until), run, 1_700_000_000_001),
		"start other holder":     startCond(jobFence.Renew(fence.Hold{Holder: "w-b", Token: 3}, until), run, 1_700_000_000_000),
		"heartbeat":              heartbeatCond(jobFence.Renew(h, until), run),
		"heartbeat token 4":      heartbeatCond(jobFence.Renew(fence.Hold{Holder: "w-a", Token: 4}, until), run),
		"end":                    endJobCond(jobFence.Release(h), run, nil),
		"revoke seen":            endJobCond(jobFence.Revoke(3), run, reapSeen(1_700_000_002_000)),
		"revoke other until":     endJobCond(jobFence.Revoke(3), run, reapSeen(1_700_000_002_001)),
		"end pool final":         endPoolCond(run, jobItem{JobID: "J1", Slots: []int{0}}, true),
		"end pool slot 1":        endPoolCond(run, jobItem{JobID: "J1", Slots: []int{1}}, false),
		"end pool slot 5":        endPoolCond(run, jobItem{JobID: "J1", Slots: []int{5}}, false),
		"end pool exclusive":     endPoolCond(run, jobItem{JobID: "J1", Exclusive: true, Slots: []int{0, 1}}, true),
		"expired before":         jobFence.Expired(time.UnixMilli(1_700_000_002_001)),
		"expired at":             jobFence.Expired(time.UnixMilli(1_700_000_002_000)),
		"missing <> value":       n("nope").NotEqual(v("x")),
		"missing < value":        n("nope").LessThan(v(5)),
		"missing = value":        n("nope").Equal(v(0)),
		"number = string":        n("attempt").Equal(v("1")),
		"number < string":        n("attempt").LessThan(v("9")),
		"string < string":        n(attrRun).LessThan(v("run-2")),
		"string >= string":       n(attrRun).GreaterThanEqual(v("run-1")),
		"number > number":        n("attempt").GreaterThan(v(0.5)),
		"number <= 1.0":          n("attempt").LessThanEqual(v(1.0)),
		"not exists":             expression.AttributeNotExists(n("worker")),
		"exists":                 expression.AttributeExists(n("worker")),
		"map path":               n("running.J1").Equal(v(12.5)),
		"map path missing":       n("running.J2").Equal(v(12.5)),
		"list path out of range": n("slots[9]").NotEqual(v("J1")),
		"not":                    expression.Not(n("attempt").Equal(v(1))),
		"between":                n("attempt").Between(v(0), v(1)),
		"in":                     n("execution_status").In(v(queuekit.StatusClaimed), v(queuekit.StatusProcessing)),
		"or of missing":          n("nope").Equal(v(1)).Or(n("nope2").NotEqual(v(1))),
		"bool":                   n("flag").Equal(v(true)),
		"name = name":            n("ended").LessThan(n("jobs")),
	}
}

// condItems are the items the conditions are evaluated against: a claimed
// job, a processing job, a fresh job without fence attributes, a pool.
func condItems(t *testing.T) map[string]map[string]types.AttributeValue {
	mk := func(m map[string]any) map[string]types.AttributeValue {
		item, err := attributevalue.MarshalMap(m)
		if err != nil {
			t.Fatal(err)
		}
		return item
	}
	return map[string]map[string]types.AttributeValue{
		"claimed": mk(map[string]any{attrRun: "run-1", attrToken: 3, "worker": "w-a", attrLeaseTil: int64(1_700_000_002_000),
			"execution_status": queuekit.StatusClaimed, "attempt": 1, attrShard: "s-1", "flag": true}),
		"processing": mk(map[string]any{attrRun: "run-1", attrToken: 3, "worker": "w-a", attrLeaseTil: int64(1_700_000_002_000),
			"execution_status": queuekit.StatusProcessing, "attempt": 1, "started_ms": int64(1_700_000_000_000), "flag": false}),
		"fresh": mk(map[string]any{attrRun: "run-1", "execution_status": queuekit.StatusNotStarted, "attempt": 0, attrShard: "s-1"}),
		"pool": mk(map[string]any{attrRun: "run-1", "version": 7, "state": poolRunning, "busy": 1, "ended": 0, "jobs": 1,
			"exclusive": "", "slots": []string{"J1", ""}, "running": map[string]float64{"J1": 12.5}}),
	}
}

// The evaluator the model check's fake store uses gives DynamoDB Local's
// verdict for every condition on every item: each pair is sent as a
// conditional PutItem of the item onto itself, and the write's refusal
// (ConditionalCheckFailedException) must be exactly the evaluator's false.
func TestCondEvalMatchesDynamoDB(t *testing.T) {
	cat := ddbtest.NewCatalog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := cat.DB().CreateAndWait(ctx, &dynamodb.CreateTableInput{
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	db := cat.Client()
	pass, fail := 0, 0
	for iname, item := range condItems(t) {
		item["pk"] = &types.AttributeValueMemberS{Value: iname}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cat.Table()), Item: item}); err != nil {
			t.Fatalf("put %s: %v", iname, err)
		}
		for cname, c := range condCases() {
			e, err := expression.NewBuilder().WithCondition(c).Build()
			if err != nil {
				t.Fatalf("%s: build: %v", cname, err)
			}
			want, err := evalCondition(*e.Condition(), e.Names(), e.Values(), item)
			if err != nil {
				t.Fatalf("%s on %s: %v", cname, iname, err)
			}
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(cat.Table()), Item: item,
				ConditionExpression: e.Condition(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()})
			var ccf *types.ConditionalCheckFailedException
			switch {
			case err == nil:
				pass++
			case errors.As(err, &ccf):
				fail++
			default:
				t.Fatalf("%s on %s: %v", cname, iname, err)
			}
			if got := err == nil; got != want {
				t.Errorf("%s on %s (%s): DynamoDB Local says %v, the evaluator %v", cname, iname, *e.Condition(), got, want)
			}
		}
	}
	// Both verdicts must occur, or the table tells nothing.
	if pass == 0 || fail == 0 {
		t.Fatalf("DynamoDB Local passed %d and refused %d of the pairs: the table must have both", pass, fail)
	}
	if !t.Failed() {
		t.Logf("%d pairs: %d passed, %d refused, the evaluator agreed on each", pass+fail, pass, fail)
	}
}
