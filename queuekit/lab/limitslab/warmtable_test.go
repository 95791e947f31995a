package limitslab

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A new on-demand table with a warm throughput of 13,000 write units a
// second serves that much (AWS, "Understanding DynamoDB warm throughput"):
// in the layer's model ceil(13,000 / 1,000) = 13 partitions at least.
func TestCreateWarmTable(t *testing.T) {
	ctx := context.Background()
	s, err := StartLimits(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := CreateWarmTable(ctx, s, fmt.Sprintf("warm_%d", time.Now().UnixNano()), 13000)
	if err != nil {
		t.Fatal(err)
	}
	if l.Throughput.Write != 13000 || l.Partitions < 13 {
		t.Fatalf("limits = %+v, want warm write throughput 13,000 and at least 13 partitions", l)
	}
}
