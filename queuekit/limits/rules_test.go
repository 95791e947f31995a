package limits

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A partition serves at most 1,000 write units a second, whatever the
// table's mode ("Understanding DynamoDB warm throughput in different
// scenarios": "each individual partition is limited to 1,000 write units
// per second and 3,000 read units per second",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html),
// and a request over it is throttled with KeyRangeThroughputExceeded
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html).
// At S = 20 one key takes 50 one-unit writes a second: of 80 writes in one
// second, 50 pass and 30 are throttled; the next second 50 more pass.
func TestHotKeyThrottlesAtThePartitionLimit(t *testing.T) {
	f := newFixture(t, WithScale(20))
	name := f.table(onDemand())
	o := f.puts(name, 80, func(i int) (string, string) { return "2026-11-25", fmt.Sprintf("JOB#%03d", i) })
	if o.ok != 50 || o.byExc[ExcProvisioned] != 30 || o.reasons["TableWriteKeyRangeThroughputExceeded"] != 30 || len(o.other) > 0 {
		t.Fatalf("80 writes on one key in one second at S=20: %v; want 50 ok and 30 ProvisionedThroughputExceededException with TableWriteKeyRangeThroughputExceeded", o)
	}
	if !o.arns[f.arn(name)] || len(o.arns) != 1 {
		t.Errorf("throttled resources %v, want only %s", o.arns, f.arn(name))
	}
	f.clk.Add(time.Second)
	if o := f.puts(name, 60, func(i int) (string, string) { return "2026-11-25", fmt.Sprintf("B%03d", i) }); o.ok != 50 || o.throttled() != 10 {
		t.Errorf("the next second: %v, want 50 ok and 10 throttled", o)
	}
	tot := Totals(f.s.Stats(), name, "")
	if tot.WriteUnits != 100 || tot.Throttled["TableWriteKeyRangeThroughputExceeded"] != 40 || tot.Requests != 140 {
		t.Errorf("counters: %+v, want 100 write units, 40 throttled, 140 requests", tot)
	}
}

// The throttle is answered as AWS answers it: HTTP 400, the JSON 1.0
// content type, a CRC32 of the body, __type, message and ThrottlingReasons
// with reason and resource (API_ThrottlingReason,
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html).
func TestThrottleAnswerShape(t *testing.T) {
	f := newFixture(t, WithScale(1000)) // one write unit a second per partition
	name := f.table(onDemand())
	body := fmt.Sprintf(`{"TableName":%q,"Item":{"pk":{"S":"k"},"sk":{"S":"s"}}}`, name)
	var last *http.Response
	var got []byte
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, f.s.URL, strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("Authorization", localAuth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		last = resp
	}
	if last.StatusCode != 400 || last.Header.Get("Content-Type") != "application/x-amz-json-1.0" || last.Header.Get("X-Amz-Crc32") == "" || len(last.Header.Get("X-Amzn-Requestid")) != 52 {
		t.Fatalf("second write: HTTP %d, headers %v", last.StatusCode, last.Header)
	}
	var m struct {
		Type              string `json:"__type"`
		Message           string `json:"message"`
		ThrottlingReasons []struct{ Reason, Resource string }
	}
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException" || m.Message == "" ||
		len(m.ThrottlingReasons) != 1 || m.ThrottlingReasons[0].Reason != "TableWriteKeyRangeThroughputExceeded" || m.ThrottlingReasons[0].Resource != f.arn(name) {
		t.Errorf("body %s", got)
	}
}

// A new on-demand table serves 4,000 write units a second at first
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html,
// "Initial throughput and scaling properties"): four partitions of 1,000.
// Writes spread over many keys get four partitions' worth (4 x 50 at
// S = 20); after 30 minutes past a peak the table serves double that peak
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html:
// "throttling can still occur if the throughput exceeds twice the previous
// peak within the same 30 minutes").
func TestNewOnDemandTableAndDoubleThePeak(t *testing.T) {
	f := newFixture(t, WithScale(20))
	name := f.table(onDemand())
	if lim, _ := f.s.Limits(name, ""); lim.Partitions != 4 {
		t.Fatalf("a new on-demand table has %d partitions, want 4 (4,000 write units / 1,000)", lim.Partitions)
	}
	spread := func(prefix string) func(int) (string, string) {
		return func(i int) (string, string) { return fmt.Sprintf("%s-%d", prefix, i%64), fmt.Sprint(i) }
	}
	if o := f.puts(name, 320, spread("a")); o.ok != 200 || o.reasons["TableWriteKeyRangeThroughputExceeded"] != 120 {
		t.Fatalf("320 writes over 64 keys in one second: %v, want 200 ok (4 partitions x 50) and 120 throttled", o)
	}
	f.clk.Add(PeakWindow + time.Second)
	if o := f.puts(name, 1, spread("b")); o.ok != 1 {
		t.Fatalf("one write after 30 minutes: %v", o)
	}
	if lim, _ := f.s.Limits(name, ""); lim.Partitions != 8 || lim.Throughput.Write != 8000 {
		t.Fatalf("after a peak of 200 units/s at S=20 (4,000 on AWS) and 30 minutes: %+v, want 8 partitions and 8,000 write units", lim)
	}
	f.clk.Add(time.Second)
	if o := f.puts(name, 600, spread("c")); o.ok != 400 {
		t.Fatalf("600 writes over 64 keys, 8 partitions: %v, want 400 ok", o)
	}
}

// Provisioned capacity with burst: DynamoDB keeps up to 300 seconds of
// unused capacity ("DynamoDB currently retains up to 5 minutes (300
// seconds) of unused read and write capacity",
// https://repost.aws/knowledge-center/dynamodb-spiky-workloads-short-intervals
// and the Developer Guide's "Burst capacity",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html);
// past it the reason is TableWriteProvisionedThroughputExceeded. With 100
// WCU at S = 100 (1 unit/s, burst 300 units, partition 10 units/s), 10
// writes a second for 40 seconds after 300 idle seconds get the burst plus
// one unit a second: 300 + 40 = 340, within one unit (the bucket is read
// per request, not per second).
func TestProvisionedBurst(t *testing.T) {
	f := newFixture(t, WithScale(100))
	in := &dynamodb.CreateTableInput{BillingMode: types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(100), WriteCapacityUnits: aws.Int64(100)}}
	name := f.table(in)
	first := f.puts(name, 3, func(i int) (string, string) { return "x", fmt.Sprint(i) })
	if first.ok != 1 || first.reasons["TableWriteProvisionedThroughputExceeded"] != 2 {
		t.Fatalf("3 writes at once on a new 100 WCU table at S=100: %v, want 1 ok and 2 TableWriteProvisionedThroughputExceeded", first)
	}
	f.clk.Add(BurstSeconds * time.Second)
	total := &outcome{}
	for s := range 40 {
		o := f.puts(name, 10, func(i int) (string, string) { return fmt.Sprintf("k%d", i), fmt.Sprintf("%d-%d", s, i) })
		total.ok += o.ok
		for r, n := range o.reasons {
			total.add(nil)
			total.ok--
			total.reasons[r] += n
		}
		f.clk.Add(time.Second)
	}
	if total.ok < 339 || total.ok > 341 {
		t.Fatalf("40 s of 10 writes/s after 300 s idle: %d ok (%v), want 340 ± 1 (burst 300 + 40 s x 1)", total.ok, total.reasons)
	}
	if total.reasons["TableWriteProvisionedThroughputExceeded"] == 0 {
		t.Errorf("no TableWriteProvisionedThroughputExceeded once the burst ran out: %v", total.reasons)
	}
}

// On demand, the per-table quota (40,000 units a second by default,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#default-limits-throughput)
// throttles with TableWriteAccountLimitExceeded, and a table's own
// MaxWriteRequestUnits with TableWriteMaxOnDemandThroughputExceeded
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-ondemand-capacity-exceeded-mitigation.html),
// both ThrottlingException.
func TestQuotaAndOnDemandMaximum(t *testing.T) {
	f := newFixture(t, WithScale(400)) // quota 100 units/s, partition 2.5
	in := onDemand()
	in.WarmThroughput = &types.WarmThroughput{ReadUnitsPerSecond: aws.Int64(1_200_000), WriteUnitsPerSecond: aws.Int64(400_000)}
	name := f.table(in)
	if lim, _ := f.s.Limits(name, ""); lim.Partitions != 400 {
		t.Fatalf("warm throughput 400,000 write units: %d partitions, want 400", lim.Partitions)
	}
	o := f.puts(name, 150, func(i int) (string, string) { return fmt.Sprintf("q%d", i), "s" })
	if o.ok != 100 || o.byExc[ExcThrottling] != 50 || o.reasons["TableWriteAccountLimitExceeded"] != 50 {
		t.Fatalf("150 writes on 150 keys at quota 40,000/400: %v, want 100 ok and 50 ThrottlingException TableWriteAccountLimitExceeded", o)
	}

	g := newFixture(t, WithScale(20))
	in = onDemand()
	in.OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(40_000), MaxWriteRequestUnits: aws.Int64(2000)}
	name = g.table(in)
	o = g.puts(name, 150, func(i int) (string, string) { return fmt.Sprintf("m%d", i), "s" })
	if o.ok != 100 || o.byExc[ExcThrottling] != 50 || o.reasons["TableWriteMaxOnDemandThroughputExceeded"] != 50 {
		t.Fatalf("150 writes at MaxWriteRequestUnits 2,000 / 20: %v, want 100 ok and 50 TableWriteMaxOnDemandThroughputExceeded", o)
	}
}

// A GSI has partitions of its own, keyed by the index's key, and a GSI
// that throttles pushes back on the table's writes
// ("GSI back-pressure", IndexWriteKeyRangeThroughputExceeded with the
// index's ARN: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html
// and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes).
// Writes on 80 different table keys all with status DUE put one GSI key
// at 50 units a second (S = 20): 50 pass, 30 are throttled by the index.
func TestHotGSIKeyPushesBackOnTableWrites(t *testing.T) {
	f := newFixture(t, WithScale(20))
	in := onDemand()
	in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS}}
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("by_status"),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}
	name := f.table(in)
	o := f.puts(name, 80, func(i int) (string, string) { return fmt.Sprintf("job%d", i), "s" }, "status", "DUE")
	if o.ok != 50 || o.reasons["IndexWriteKeyRangeThroughputExceeded"] != 30 || !o.arns[f.arn(name)+"/index/by_status"] {
		t.Fatalf("80 writes with one GSI key: %v (arns %v), want 50 ok, 30 IndexWriteKeyRangeThroughputExceeded on the index", o, o.arns)
	}
	if tot := Totals(f.s.Stats(), name, "by_status"); tot.WriteUnits != 50 || tot.Throttled["IndexWriteKeyRangeThroughputExceeded"] != 30 {
		t.Errorf("index counters %+v", tot)
	}
}

// An UpdateItem that changes an item's GSI entry writes the index
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes),
// so a dry index partition throttles it as it throttles a put; an update
// that names no attribute of the entry does not write the index and is
// not throttled by it. At S = 20 the key "DUE" serves 50 index units a
// second: 40 puts leave 10, so of 20 updates removing the key 10 pass (one
// index delete each) and 10 are throttled on the index; updates of an
// attribute the KEYS_ONLY entry lacks all pass.
func TestUpdatesThatMoveAGSIEntryThrottleOnTheIndex(t *testing.T) {
	f := newFixture(t, WithScale(20))
	in := onDemand()
	in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS}}
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("by_status"),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}
	name := f.table(in)
	if o := f.puts(name, 40, func(i int) (string, string) { return fmt.Sprintf("job%d", i), "s" }, "status", "DUE"); o.ok != 40 {
		t.Fatalf("40 puts: %v", o)
	}
	update := func(i int, expr string, names map[string]string) error {
		_, err := f.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(name),
			Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("job%d", i)}, "sk": &types.AttributeValueMemberS{Value: "s"}},
			UpdateExpression: aws.String(expr), ExpressionAttributeNames: names,
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "x"}}})
		return err
	}
	other := &outcome{}
	for i := range 5 {
		other.add(update(i, "SET note = :v", nil))
	}
	if other.ok != 5 {
		t.Fatalf("updates naming no index attribute: %v, want 5 ok", other)
	}
	moved := &outcome{}
	for i := range 20 {
		moved.add(update(i, "SET note = :v REMOVE #s", map[string]string{"#s": "status"}))
	}
	if moved.ok != 10 || moved.reasons["IndexWriteKeyRangeThroughputExceeded"] != 10 {
		t.Fatalf("20 updates removing the GSI key with 10 index units left: %v, want 10 ok and 10 IndexWriteKeyRangeThroughputExceeded", moved)
	}
}

// Reads: 3,000 read units a second per partition; a strongly consistent
// read of up to 4 KB is one unit, an eventually consistent one half
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
// At S = 100 one key serves 30 units: 30 strong reads or 60 eventual ones.
func TestReadsThrottleAtThreeThousandPerPartition(t *testing.T) {
	f := newFixture(t, WithScale(100))
	name := f.table(onDemand())
	if o := f.puts(name, 1, func(int) (string, string) { return "r", "1" }); o.ok != 1 {
		t.Fatal(o)
	}
	read := func(n int, consistent bool) *outcome {
		o := &outcome{}
		for range n {
			_, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(name), Key: item("r", "1"), ConsistentRead: aws.Bool(consistent)})
			o.add(err)
		}
		return o
	}
	f.clk.Add(time.Second)
	if o := read(40, true); o.ok != 30 || o.reasons["TableReadKeyRangeThroughputExceeded"] != 10 {
		t.Fatalf("40 strong reads: %v, want 30 ok, 10 TableReadKeyRangeThroughputExceeded", o)
	}
	f.clk.Add(time.Second)
	if o := read(80, false); o.ok != 60 || o.throttled() != 20 {
		t.Fatalf("80 eventual reads: %v, want 60 ok, 20 throttled", o)
	}
}

var _ = bytes.NewReader

// localAuth is an Authorization header DynamoDB Local accepts (it reads
// the key id and region, never the signature).
const localAuth = "AWS4-HMAC-SHA256 Credential=local/20261125/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"

// BatchWriteItem: the items a partition cannot take come back as
// UnprocessedItems, and the call fails only when none is taken
// (BatchWriteItem API reference, "If none of the items can be processed
// due to insufficient provisioned throughput on all of the tables in the
// request, then BatchWriteItem returns a
// ProvisionedThroughputExceededException",
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html).
// A transaction out of capacity is cancelled with ThrottlingError
// (TransactionCanceledException's cancellation reasons,
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
// At S = 100 a key takes 10 write units a second.
func TestBatchAndTransactionThrottles(t *testing.T) {
	f := newFixture(t, WithScale(100))
	name := f.table(onDemand())
	ctx := context.Background()
	var reqs []types.WriteRequest
	for i := range 25 {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item("hot", fmt.Sprint(i))}})
	}
	out, err := f.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs}})
	if err != nil || len(out.UnprocessedItems[name]) != 15 {
		t.Fatalf("25 puts on one key: %v, %d unprocessed; want 15 unprocessed (10 taken)", err, len(out.UnprocessedItems[name]))
	}
	for i, r := range out.UnprocessedItems[name] {
		if got := r.PutRequest.Item["sk"].(*types.AttributeValueMemberS).Value; got != fmt.Sprint(10+i) {
			t.Fatalf("unprocessed item %d is %s, want %d (the ones after the first 10)", i, got, 10+i)
		}
	}
	n, err := f.direct.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"), Select: types.SelectCount,
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "hot"}}, ConsistentRead: aws.Bool(true)})
	if err != nil || n.Count != 10 {
		t.Fatalf("items stored: %v %v, want 10", n, err)
	}
	_, err = f.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs[:3]}})
	var pte *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pte) {
		t.Fatalf("a batch none of whose items is taken: %v, want ProvisionedThroughputExceededException", err)
	}
	_, err = f.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(name), Item: item("cold", "1")}},
		{Put: &types.Put{TableName: aws.String(name), Item: item("hot", "tx")}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "None" || aws.ToString(tce.CancellationReasons[1].Code) != "ThrottlingError" {
		t.Fatalf("a transaction with an item on the spent key: %v, want TransactionCanceledException [None, ThrottlingError]", err)
	}
}
