package fleetlab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// Notebook 10's throttle run, as the cell runs it: through the real limits
// layer at S = 22 (a partition serves 3,000 / 22 = 136 read and 1,000 / 22
// = 45 write units a second), the one-tier control plane of 64 workers on
// 16 aged shard items (lease 2 s: a look and a renewal every 0.5 s) and the
// 2 dispatchers of the two-tier design on 16 more, side by side. By
// fleetplan's rows (TestOneTierThrottlesOnTheLimitsLayerWhereTheDispatcherTierDoesNot
// derives them): the one tier puts 64 · 2 = 128 write units a second on pk
// = MEMBER (2.8x its scaled partition) and, besides the 32 renewals, the
// acquires of 64 workers contending for 16 shards on pk = SHARD; the
// dispatchers put 16 read, 32 + 4 write units a second in all, under. So
// the one tier's SHARD and MEMBER partitions throttle (named by
// PartitionOf, so each throttle is one key's), and the dispatchers' table
// throttles nothing.
func TestControlPlanesOneTierThrottlesTheDispatchersDoNot(t *testing.T) {
	// Not parallel: it counts units and throttles through the limits layer,
	// which a busier DynamoDB Local would change.
	ctx := context.Background()
	s, err := limits.Start(ctx, ddbtest.Endpoint(t), "", limits.WithScale(22))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	began := time.Now()
	res, err := fleetlab.RunControlPlanes(ctx, s, []fleetlab.ControlPlane{
		{Name: "one tier, N = 64", Workers: 64, Shards: 16, Aged: true},
		{Name: "two tiers, D = 2", Workers: 2, Shards: 16, Aged: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("both runs in %.1f s", time.Since(began).Seconds())
	for _, r := range res {
		t.Logf("%s: %d requests, throttled %d (%v), settled %d; %.1f looks/s; joins %d, failed %d (%s)", r.Name, r.Totals.Requests,
			r.Totals.ThrottledTotal(), r.Totals.Throttled, r.Settled, r.LooksPerSecond(), r.Joins, r.FailedJoins, r.FirstError)
		for _, k := range r.Keys {
			t.Logf("  pk = %s: partition %d (shared with %v), %.1f read, %.1f write units/s; throttled %v", k.Key, k.Partition, k.SharedWith, k.ReadUnits, k.WriteUnits, k.Throttled)
		}
	}
	one, two := res[0], res[1]
	if one.Key("SHARD").Partition == one.Key("MEMBER").Partition {
		t.Fatalf("pk = SHARD and MEMBER share partition %d: their throttles cannot be told apart", one.Key("SHARD").Partition)
	}
	if n := throttled(one.Key("SHARD")); n == 0 {
		t.Errorf("one tier: nothing throttled on pk = SHARD's partition")
	}
	if n := one.Key("MEMBER").Throttled["TableWriteKeyRangeThroughputExceeded"]; n == 0 {
		t.Errorf("one tier: no write of pk = MEMBER throttled; its partition: %v", one.Key("MEMBER").Throttled)
	}
	if n := two.Totals.ThrottledTotal(); n != 0 {
		t.Errorf("two tiers: the dispatchers were throttled %d times (%v); the model says they fit", n, two.Totals.Throttled)
	}
	if two.FailedJoins != 0 || two.Looks == 0 {
		t.Errorf("two tiers: %d looks, %d failed joins (%s)", two.Looks, two.FailedJoins, two.FirstError)
	}
	if v := fleetlab.ControlPlaneVerdict(res); !strings.Contains(v, "**two tiers, D = 2**: pk = SHARD's partition throttled **0** requests (none)") {
		t.Errorf("verdict: %s", v)
	}
	rows := fleetlab.ControlPlaneRows(res)
	if len(rows) != 6 || !strings.Contains(rows[0][1], "pk = SHARD") {
		t.Errorf("rows: %q", rows)
	}
}

func throttled(k fleetlab.KeyLoad) int {
	n := 0
	for _, v := range k.Throttled {
		n += v
	}
	return n
}

// A ControlPlane that cannot run names what to change.
func TestControlPlaneRefusesBadSizes(t *testing.T) {
	s, err := limits.Start(context.Background(), ddbtest.Endpoint(t), "", limits.WithScale(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []fleetlab.ControlPlane{{Workers: 0, Shards: 4}, {Workers: 2, Shards: 0}, {Workers: 2, Shards: 1001}} {
		if _, err := c.Execute(context.Background(), s); err == nil || !strings.Contains(err.Error(), "want at least 1 worker") {
			t.Errorf("%d workers, %d shards: %v", c.Workers, c.Shards, err)
		}
	}
}

// The exercise's check: a wrong answer fails a rule and runs nothing; seed
// 003's D = 3 and K = 14 (fleetplan's Plan, derived by hand in its tests)
// pass every rule and, run through the layer, throttle nothing once
// settled; a D sized by the machines fails the rows' limits.
func TestCheckFleetDesignWrongAndRight(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddbtest.Endpoint(t))
	ctx := context.Background()
	for _, c := range [][2]int{{0, 0}, {2, 14}, {3, 12}, {250, 1000}} {
		got, err := fleetlab.CheckFleetDesign(ctx, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if got.OK() || got.RulesOK || got.Ran {
			t.Errorf("D = %d, K = %d: ok %v, rules ok %v, ran %v; want a failed rule and no run", c[0], c[1], got.OK(), got.RulesOK, got.Ran)
		}
	}
	got, err := fleetlab.CheckFleetDesign(ctx, 3, 14)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("D = 3, K = 14 at S = %g: %d requests, throttled %d (%v), settled %d over %s", got.Scale, got.Run.Totals.Requests,
		got.Run.Totals.ThrottledTotal(), got.Run.Totals.Throttled, got.Run.Settled, got.Run.SettledFor)
	if !got.RulesOK || !got.Ran || !got.OK() || got.Run.Looks == 0 {
		t.Errorf("D = 3, K = 14: rules ok %v, ran %v, ok %v, looks %d; want all", got.RulesOK, got.Ran, got.OK(), got.Run.Looks)
	}
	if got.Deployment.USDPerDay.Total <= got.Deployment.USDPerDay.DynamoDBJobs {
		t.Errorf("D = 3, K = 14: a day costs %v, want more than the jobs' own", got.Deployment.USDPerDay)
	}
}

// The verdict says what each run reached, from its own counts: at least 1 %
// of its requests throttled is the wall; fewer is a brush with the limit,
// said as such (a busy machine sends fewer looks); none is none. It never
// claims a wall the run did not reach (a run that throttled 1 request of
// 620 was once followed by prose about the wall).
func TestControlPlaneVerdictSaysWhatTheRunReached(t *testing.T) {
	run := func(name string, requests, throttled int) fleetlab.ControlPlaneResult {
		r := fleetlab.ControlPlaneResult{ControlPlane: fleetlab.ControlPlane{Name: name}, Elapsed: 10 * time.Second, Looks: 120}
		r.Totals.Requests = requests
		if throttled > 0 {
			r.Totals.Throttled = map[string]int{"TableReadKeyRangeThroughputExceeded": throttled}
		}
		return r
	}
	v := fleetlab.ControlPlaneVerdict([]fleetlab.ControlPlaneResult{run("wall", 1000, 50), run("brush", 620, 1), run("none", 300, 0)})
	lines := strings.Split(v, "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), v)
	}
	for i, want := range []string{"It hit the wall: 5.0% of its 1,000 requests were refused.",
		"It only brushed the limit: 1 of 620 requests refused, at 12 looks a second",
		"It throttled nothing in 300 requests."} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %q; want %q", i, lines[i], want)
		}
	}
	if strings.Contains(lines[1], "wall") && !strings.Contains(lines[1], "only brushed") {
		t.Errorf("a run with 1 throttle of 620 is called a wall: %q", lines[1])
	}
}
