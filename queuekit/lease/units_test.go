package lease_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// The write units a job of the night executor costs, as
// ReturnConsumedCapacity INDEXES reports them, against DynamoDB's rules
// (developer guide: "Capacity unit consumption for write operations",
// "Capacity management for transactions", global secondary index writes):
//
//   - a write of an item of at most 1 KB (the larger of its old and new
//     image) costs 1 WCU; inside TransactWriteItems AWS documents 2 WCU per
//     item (prepare and commit);
//   - an index write of an item of at most 1 KB costs 1 WCU: 1 when the item
//     enters the index, 1 when it leaves, 2 when its index key changes (a
//     delete and a put);
//   - both indexes project ALL; the companion table has "claimable" (keys
//     claim_shard, due_key) and "leases" (keys lease_shard, lease_until).
//
// With a pool of one slot every claim transaction claims one job, and a job
// that succeeds at its first attempt with h heartbeats writes:
//
//	claim  TransactWriteItems: the job, a new attempt item, the pool;
//	       the job leaves "claimable" and enters "leases"
//	start  UpdateItem on the job: 1 table; lease_until moves: 2 index
//	h ×    heartbeat UpdateItem: 1 table; lease_until moves: 2 index each
//	end    TransactWriteItems: the job, the pool, the attempt item;
//	       the job leaves "leases" (lease_shard removed)
//
// By AWS's documented rule that is 6 + 1 + h + 6 = 13 + h table WCU (notebook
// 08's "at least 13"). DynamoDB Local (3.3.1) does not charge a transaction
// per item: it reports 2 for a transaction of one, two, three or four
// 100-byte puts, and 4 table units for each of the executor's three-item
// transactions (measured while writing this test, ReturnConsumedCapacity on a
// scratch table: Local's rule, not AWS's), and it doubles the index writes of
// a transaction (2 per index entered or left). On Local a job therefore
// reports 4 + 1 + h + 4 = 9 + h table units and (2+2) + 2 + 2h + 2 = 8 + 2h
// index units: h = table - 9 must come out whole, within the work's length
// over the heartbeat period (a quarter lease) plus one for a late timer, and
// index must be 8 + 2h. The non-transactional writes (start, heartbeats)
// follow AWS's rule exactly; the test would catch any write counted twice,
// missed, or an index entry left behind.
func TestWriteUnitsPerJobFollowDynamoDBRules(t *testing.T) {
	n := partWays(t)
	ex, cat := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 1, Minute: 2 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: lease.DefaultMaxRetry}.WithDefaults()
	rep, err := ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: 1})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) || rep.Retries != 0 {
		t.Fatalf("statuses %v, retries %d: want every job SUCCESS at its first attempt (the rule above assumes it)", rep.Statuses, rep.Retries)
	}
	// Every item must be at most 1 KB for the rule above: an upper bound of
	// each item's size as read back, plus room for the pool's one running
	// entry while a job runs.
	out, err := cat.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(ex.Table())})
	if err != nil {
		t.Fatalf("scan %s: %v", ex.Table(), err)
	}
	for _, it := range out.Items {
		if sz := itemSizeBound(it) + 100; sz > 1024 {
			t.Fatalf("item %v may be %d bytes: over 1 KB, the rule above does not apply", it["sk"], sz)
		}
	}
	// The longest job: 40 job-minutes of 2 ms, heartbeats every 500 ms.
	longest := 40 * cfg.Minute
	maxH := math.Ceil(float64(longest)/float64(cfg.Lease/4)) + 1
	tab, idx := rep.TableWUPerJob, rep.IndexWUPerJob
	t.Logf("write units per job: %.3f table + %.3f index (Local's rule: 9 + h and 8 + 2h, h ≤ %.0f)", tab, idx, maxH)
	// h is the heartbeats per job, on average: a whole number of
	// heartbeats over the night's jobs.
	h := tab - 9
	if hs := h * float64(len(n.Jobs)); h < -1e-9 || h > maxH+1e-9 || math.Abs(hs-math.Round(hs)) > 1e-9 {
		t.Errorf("table write units per job %.3f, want 9 + h with 0 ≤ h ≤ %.0f heartbeats per job (a whole number over %d jobs)", tab, maxH, len(n.Jobs))
	}
	if math.Abs(idx-(8+2*h)) > 1e-9 {
		t.Errorf("index write units per job %.3f, want 8 + 2h = %.3f", idx, 8+2*h)
	}
	if rep.TableWU != tab*float64(len(n.Jobs)) || rep.IndexWU != idx*float64(len(n.Jobs)) {
		t.Errorf("totals %.3f + %.3f do not match per job figures × %d jobs", rep.TableWU, rep.IndexWU, len(n.Jobs))
	}
}

// itemSizeBound is an upper bound of an item's size by DynamoDB's rules:
// attribute names and string values by their UTF-8 length, numbers at most
// 21 bytes, booleans and nulls 1, lists and maps 3 bytes plus 1 per element
// (maps their keys too).
func itemSizeBound(it map[string]types.AttributeValue) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSizeBound(v)
	}
	return n
}

func valueSizeBound(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return 21
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSizeBound(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSizeBound(e)
		}
		return n
	}
	return 1024 // a type the executor does not write: fail the bound
}
