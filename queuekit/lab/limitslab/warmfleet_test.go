package limitslab_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// The warm-throughput exercise at seed 003's average, 1,157.4 jobs a
// second, at S = 20. By hand: the table takes 3 write units a job, 3,472
// a second, 4,340 at 80 %: more than a new table's 4,000, so it needs a
// warm throughput; the due index takes 4, 4,630 a second (5,787 at 80 %),
// over its own 4,000. The right answer (K = 16, table 5,000, index
// 10,000: 10 index partitions, 289 units a shard key, two keys at most on
// one partition by the layer's hash, logged through PartitionOf) lands
// every write and passes every check; the skeleton (no warm throughput, 1 shard) fails:
// one key takes all 4,630 index units, 4.6x one partition; the old
// answer (the table's 7 units a job on the table, nothing on the index)
// fails the index's check.
func TestWarmFleetWrongAndRight(t *testing.T) {
	// Not parallel: it counts units and throttles through the limits layer,
	// which a busier DynamoDB Local would change.
	ctx := context.Background()
	s, err := limits.Start(ctx, ddbtest.Endpoint(t), "", limits.WithScale(20))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		w    limitslab.WarmFleet
		want bool
	}{
		{limitslab.WarmFleet{Jobs: 1157.4, Shards: 1}, false},
		{limitslab.WarmFleet{Jobs: 1157.4, Shards: 16, TableWarm: 5000, IndexWarm: 10000}, true},
		{limitslab.WarmFleet{Jobs: 1157.4, Shards: 16, TableWarm: 8102, IndexWarm: 0}, false},
	} {
		r, err := limitslab.RunWarmFleet(ctx, s, c.w)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(limitslab.WarmFleetSummary(r))
		if got := limitslab.CheckWarmFleet(r); got != c.want {
			t.Errorf("%+v: check %v, want %v", c.w, got, c.want)
		}
		perPart := map[int]int{}
		for k := range c.w.Shards {
			p, err := s.PartitionOf(r.Table, "due", &types.AttributeValueMemberS{Value: strconv.Itoa(k)})
			if err != nil {
				t.Fatal(err)
			}
			perPart[p]++
		}
		t.Logf("shard keys per index partition: %v", perPart)
		if (c.want && r.IndexPartitions != 10) || r.TablePartitions < 4 {
			t.Errorf("%+v: %d table and %d index partitions", c.w, r.TablePartitions, r.IndexPartitions)
		}
	}
}
