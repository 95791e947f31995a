package limits

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// raw sends one DynamoDB request over plain HTTP and returns the status,
// the headers that must match and the body.
func raw(t *testing.T, endpoint, op, body string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("Authorization", localAuth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s at %s: %v", op, endpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type") + "|" + resp.Header.Get("X-Amz-Crc32") + "|" + resp.Header.Get("Content-Length"), b
}

// Property: a request the layer does not throttle gets DynamoDB Local's
// answer byte for byte. Random reads (GetItem, Query, Scan, with and
// without ConsumedCapacity, strong and eventual) are asked of the layer
// and of Local directly; random writes are asked of Local first and then
// again, the same, of the layer and of Local (ReturnValues ALL_OLD makes
// both answers show the item the first write left), and the answers
// compared, status, content type, CRC32, length and body. S = 1: nothing
// is throttled at this rate.
func TestUnthrottledAnswersAreLocalsByteForByte(t *testing.T) {
	f := newFixture(t)
	name := f.table(onDemand())
	rng := rand.New(rand.NewPCG(24, 2026))
	attr := func() string { return strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(3000)) }
	rcc := []string{"", `,"ReturnConsumedCapacity":"TOTAL"`, `,"ReturnConsumedCapacity":"INDEXES"`, `,"ReturnConsumedCapacity":"NONE"`}
	for i := range 200 {
		pk, sk := fmt.Sprintf("p%d", rng.IntN(4)), fmt.Sprintf("s%d", rng.IntN(6))
		key := fmt.Sprintf(`{"pk":{"S":%q},"sk":{"S":%q}}`, pk, sk)
		cc := rcc[rng.IntN(len(rcc))]
		var op, body string
		write := false
		switch rng.IntN(8) {
		case 0:
			op, body = "GetItem", fmt.Sprintf(`{"TableName":%q,"Key":%s,"ConsistentRead":%v%s}`, name, key, rng.IntN(2) == 0, cc)
		case 1:
			op, body = "Query", fmt.Sprintf(`{"TableName":%q,"KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":%q}}%s}`, name, pk, cc)
		case 2:
			op, body = "Scan", fmt.Sprintf(`{"TableName":%q,"Limit":%d%s}`, name, 1+rng.IntN(10), cc)
		case 3, 4:
			op, write = "PutItem", true
			body = fmt.Sprintf(`{"TableName":%q,"Item":{"pk":{"S":%q},"sk":{"S":%q},"v":{"S":%q},"n":{"N":"%d"}},"ReturnValues":"ALL_OLD"%s}`, name, pk, sk, attr(), rng.IntN(1000), cc)
		case 5:
			op, write = "UpdateItem", true
			body = fmt.Sprintf(`{"TableName":%q,"Key":%s,"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":%q}},"ReturnValues":"ALL_NEW"%s}`, name, key, attr(), cc)
		case 7: // no ReturnValues: the layer asks for ALL_NEW and takes it out again
			op, write = "UpdateItem", true
			body = fmt.Sprintf(`{"TableName":%q,"Key":%s,"UpdateExpression":"SET v = :v","ExpressionAttributeValues":{":v":{"S":%q}}%s}`, name, key, attr(), cc)
		case 6:
			op, write = "DeleteItem", true
			body = fmt.Sprintf(`{"TableName":%q,"Key":%s,"ReturnValues":"ALL_OLD"%s}`, name, key, cc)
		}
		if write {
			raw(t, f.ep, op, body) // Local first: the state both answers then see
		}
		s1, h1, b1 := raw(t, f.s.URL, op, body)
		s2, h2, b2 := raw(t, f.ep, op, body)
		if s1 != s2 || h1 != h2 || !bytes.Equal(b1, b2) {
			t.Fatalf("request %d, %s %s:\nlayer HTTP %d %s %s\nLocal HTTP %d %s %s", i, op, body, s1, h1, b1, s2, h2, b2)
		}
		f.clk.Add(time.Second)
	}
	if tot := Totals(f.s.Stats(), name, ""); tot.ThrottledTotal() != 0 || tot.Requests != 200 {
		t.Errorf("counters %+v: want 200 requests, none throttled", tot)
	}
}

// The SDK's standard retryer retries ProvisionedThroughputExceededException
// with backoff (aws/retry's throttle codes; the exception's doc: "The AWS
// SDKs for DynamoDB automatically retry requests that receive this
// exception"): three writes at once on a key that takes one write every
// 10 seconds all land, and the layer counts the throttles the SDK saw.
// Real clock here: the retryer waits for real.
func TestStandardRetryerRecoversFromThrottles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, WithScale(2000), WithClock(time.Now)) // one key: 0.5 write units a second
	name := f.table(onDemand())
	db := client(f.s.URL, retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 30; o.MaxBackoff = time.Second }))
	var wg sync.WaitGroup
	errs := make([]error, 3)
	attempts := make([]int, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: item("hot", fmt.Sprint(i))})
			errs[i] = err
			if err == nil {
				if r, ok := retry.GetAttemptResults(out.ResultMetadata); ok {
					attempts[i] = len(r.Results)
				}
			}
		}()
	}
	wg.Wait()
	sum := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		sum += attempts[i]
	}
	tot := Totals(f.s.Stats(), name, "")
	if tot.WriteUnits != 3 || tot.Throttled["TableWriteKeyRangeThroughputExceeded"] < 2 || sum != 3+tot.Throttled["TableWriteKeyRangeThroughputExceeded"] {
		t.Fatalf("3 writes landed with %d attempts; counters %+v: want 3 write units and at least 2 throttles, attempts = 3 + throttles", sum, tot)
	}
}

// Two real transactions on the same item at once: the second is
// cancelled with TransactionConflict, and a PutItem on the item the first
// holds fails with TransactionConflictException, as the transactions page
// says ("Transaction conflict handling in DynamoDB",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
// The first is held in flight by WithTransactionHold; the test waits until
// the layer shows it holding the item (no timing assumption), then sends
// the others.
func TestTransactionConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, WithTransactionHold(2*time.Second))
	name := f.table(onDemand())
	ctx := context.Background()
	put := func(sk string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(name), Item: item("night", "POOL", "n", sk)}},
			{Put: &types.Put{TableName: aws.String(name), Item: item("night", "JOB#"+sk)}},
		}}
	}
	first := make(chan error, 1)
	go func() { _, err := f.db.TransactWriteItems(ctx, put("1")); first <- err }()
	for held := false; !held; {
		f.s.mu.Lock()
		held = len(f.s.txHeld) == 2
		f.s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	_, err := f.db.TransactWriteItems(ctx, put("2"))
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "TransactionConflict" || aws.ToString(tce.CancellationReasons[1].Code) != "None" {
		t.Fatalf("second transaction: %v, want TransactionCanceledException [TransactionConflict, None]", err)
	}
	_, err = f.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item("night", "POOL")})
	var tcx *types.TransactionConflictException
	if !errors.As(err, &tcx) {
		t.Fatalf("PutItem on the held item: %v, want TransactionConflictException", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	out, err := f.direct.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item("night", "POOL"), ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item["n"].(*types.AttributeValueMemberS).Value != "1" {
		t.Fatalf("the pool item after: %v %v, want the first transaction's", out, err)
	}
	if tot := Totals(f.s.Stats(), name, ""); tot.Throttled["TransactionConflict"] != 2 {
		t.Errorf("counters %+v, want 2 TransactionConflict", tot)
	}
}
