package fleet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
)

// A departing worker's shards are free the moment it has left, even after
// lost replies (issue 34): one in-process worker owns both shards while
// every reply of one kind is lost (the write lands, the SDK sends it again,
// its retries' replies are lost too):
//
//   - shard_renew: the keeper's renewals land but none is answered, so it
//     gives the shard up although the lease was kept alive by them; before
//     the fix such a shard was never released, and stayed held by the
//     worker that had left until its lease ran out;
//   - shard_release: the release lands and its answer is lost;
//   - shard_acquire: every acquire lands and none is answered, so the
//     worker never knows it holds a shard; before the fix such a shard
//     stayed held by the worker that had left until its lease ran out
//     (seen once in make test on the two tiers' dispatchers, at a stop
//     that cancelled an acquire in flight).
//
// Right after Join returns, each shard is read back: held by nobody.
func TestDepartingWorkerReleasesShardsAfterLostReplies(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"shard_renew", "shard_release", "shard_acquire"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			lease := 2 * time.Second
			g := newRoutedRig(t, ctx, 2, 4, 0, lease, fleetKind, fleetKinds...)
			g.r.Proxy(t, kind).LoseReplies(t, 1, 250*time.Millisecond)
			// One worker, stopped as soon as it counts a shard lost (the
			// keeper gave up on it) for shard_renew, or after two leases.
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			lostOne := make(chan struct{})
			var once sync.Once
			type result struct {
				st  fleet.Stats
				err error
			}
			done := make(chan result, 1)
			go func() {
				st, err := g.f.Join(wctx, fleet.WorkerConfig{Name: "w0", Slots: 2, Shards: g.shards, Work: fleet.Sleep(lease / 4),
					StatsEvery: 20 * time.Millisecond, OnStats: func(st fleet.Stats) {
						if st.ShardsLost > 0 {
							once.Do(func() { close(lostOne) })
						}
					}})
				done <- result{st, err}
			}()
			waitFor(t, "w0 to hold both shards", time.Minute, func() bool {
				if kind == "shard_acquire" {
					return true // it never learns that it does
				}
				st, err := g.f0.ShardStates(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held := 0
				for _, s := range st {
					if s.Holder == "w0" {
						held++
					}
				}
				return held == 2
			})
			if kind == "shard_renew" {
				select {
				case <-lostOne:
				case <-time.After(time.Minute):
					t.Fatalf("no shard lost in a minute of unanswered renewals (%d sent, %d again)", g.r.Count(kind), g.r.Retries(kind))
				}
			} else {
				time.Sleep(2 * lease)
			}
			stop()
			res := <-done
			w := joined{stats: []fleet.Stats{res.st}, errs: []error{res.err}}
			left := time.Now()
			st, err := g.f0.ShardStates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range st {
				if s.Holder != "" {
					t.Errorf("shard %d still held by %s (token %d, lease until %s) right after the worker left",
						s.Shard, s.Holder, s.Token, time.UnixMilli(s.UntilMS).Sub(left).Round(time.Millisecond))
				}
			}
			if kind == "shard_renew" && w.stats[0].ShardsLost == 0 {
				t.Errorf("no shard lost: the lost renewal replies were not exercised (%d renewals, %d sent again)", g.r.Count(kind), g.r.Retries(kind))
			}
			if g.r.Count(kind) == 0 {
				t.Fatalf("no %s request: the fault was not injected", kind)
			}
			t.Logf("%s: %d requests, %d sent again; shards acquired %d, released %d, lost %d; worker error %v",
				kind, g.r.Count(kind), g.r.Retries(kind), w.stats[0].ShardsAcquired, w.stats[0].ShardsReleased, w.stats[0].ShardsLost, w.errs[0])
		})
	}
}
