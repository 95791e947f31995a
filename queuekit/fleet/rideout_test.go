package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/fleetrun"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
)

// Bursts of lost replies on every link of a fleet run: the coordinator
// (fleetrun.Run, as `queuekit fleet` runs it) and its two fleet-worker
// processes all reach DynamoDB Local through one Toxiproxy proxy. Three
// times, for 3 s, every reply is lost (`timeout` on the downstream, half
// of the connections reset by `reset_peer`), 2 s apart, while the jobs
// run. The coordinator rides its counts of unfinished jobs through them
// (Fleet.Unfinished, up to Fleet.RideOut) and the workers ride out theirs:
// the run returns no error, no worker exited on its own, and read back raw
// every job is SUCCESS, ended exactly once.
func TestFleetRidesOutBurstsOfLostReplies(t *testing.T) {
	t.Parallel()
	const jobs, users = 120, 4
	f0 := newFleet(t)
	px := toxitest.NewProxy(t, f0.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cat, err := catalog.New(ctx, catalog.WithEndpoint(px.URL), catalog.WithTable(f0.Table()))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.New(cat, fleet.WithLease(4*time.Second), fleet.WithShardLease(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	logf := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		t.Log(msg)
		if strings.HasPrefix(msg, "starting") {
			once.Do(func() { close(started) })
		}
	}
	type result struct {
		rep fleetrun.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := fleetrun.Run(ctx, f, fleetrun.Config{Bin: buildCLI(t), Jobs: jobs, Workers: 2, Slots: 2, Shards: 2,
			Job: 400 * time.Millisecond, Users: users, MaxRetry: 10, Ceiling: -1, Seed: 11, Logf: logf})
		done <- result{rep, err}
	}()
	select {
	case <-started:
	case res := <-done:
		t.Fatalf("the fleet run ended before its workers started: %v", res.err)
	}
	time.Sleep(time.Second)
	bursts := 0
	var res result
	finished := false
	for i := range 3 {
		select {
		case res = <-done:
			finished = true
		default:
		}
		if finished {
			break
		}
		remove := []func(){px.Add(t, "reset_peer", "downstream", 0.5, toxiproxy.Attributes{"timeout": 0}),
			px.LoseReplies(t, 1, 300*time.Millisecond)}
		time.Sleep(3 * time.Second)
		for _, r := range remove {
			r()
		}
		bursts++
		if i < 2 {
			time.Sleep(2 * time.Second)
		}
	}
	if !finished {
		res = <-done
	}
	if res.err != nil {
		t.Fatalf("fleet run across %d bursts of lost replies: %v", bursts, res.err)
	}
	if bursts < 2 {
		t.Fatalf("only %d bursts before the run ended: lengthen the run", bursts)
	}
	all := allJobs(t, f0, users)
	if len(all) != jobs {
		t.Fatalf("%d jobs in the table, want %d", len(all), jobs)
	}
	for id, j := range all {
		if j.Status != queuekit.StatusSuccess || j.Ends != 1 || j.Runs != 1 {
			t.Errorf("job %s: %s, ends %d, runs %d; want SUCCESS ended exactly once", id, j.Status, j.Ends, j.Runs)
		}
	}
	if res.rep.Succeeded != jobs {
		t.Errorf("report: %d succeeded, want %d", res.rep.Succeeded, jobs)
	}
	t.Logf("%d bursts of 3 s; %d jobs in %d attempts, %.1f s; claims won %d lost %d", bursts, jobs, res.rep.Attempts, res.rep.Seconds,
		res.rep.Claims.Won, res.rep.Claims.Lost)
}

// The coordinator's count of unfinished jobs (Fleet.Unfinished, which
// `queuekit fleet` waits on) through DynamoDB unreachable for 6 s (its
// Toxiproxy proxy disabled: connections closed, new ones refused): three
// 2 s leases, within its bound (Fleet.RideOut, 10 s here), longer than
// the SDK's standard retryer can wait (3 tries, at most 6 s of backoff):
// it rides the outage out and returns the right count once DynamoDB is
// back. Cut for longer than its bound, it gives up past it with one line
// that says what to do.
func TestFleetUnfinishedRidesOutAnOutage(t *testing.T) {
	t.Parallel()
	const jobs = 30
	f0 := newFleet(t)
	px := toxitest.NewProxy(t, f0.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f0.Reset(ctx, 4); err != nil {
		t.Fatal(err)
	}
	submitJobs(t, ctx, f0, jobs, 3)
	cat, err := catalog.New(ctx, catalog.WithEndpoint(px.URL), catalog.WithTable(f0.Table()))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.New(cat, fleet.WithLease(2*time.Second), fleet.WithShardLease(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if f.RideOut() != 10*time.Second {
		t.Fatalf("RideOut %s with 2 s leases, want 10s (at least 10 s, at least two leases)", f.RideOut())
	}
	for _, tc := range []struct {
		cut   time.Duration
		gives bool
	}{{6 * time.Second, false}, {14 * time.Second, true}} {
		px.Cut(t)
		began := time.Now()
		healed := make(chan struct{})
		go func() {
			time.Sleep(tc.cut)
			px.Restore(t)
			close(healed)
		}()
		left, err := f.Unfinished(ctx, 4)
		took := time.Since(began)
		<-healed
		if tc.gives {
			var gave *dynamo.OutageError
			if !errors.As(err, &gave) || !strings.Contains(err.Error(), "longer than the 10s it rides out") ||
				!strings.Contains(err.Error(), "run the same fleet again") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("unreachable for %s: %d, %v after %.1f s; want one line saying it gave up past its 10 s and what to do", tc.cut, left, err, took.Seconds())
			}
			if took < 10*time.Second || took > tc.cut {
				t.Fatalf("gave up after %.1f s; want past its 10 s bound and before DynamoDB came back at %s", took.Seconds(), tc.cut)
			}
			t.Logf("unreachable for %s: gave up after %.1f s: %v", tc.cut, took.Seconds(), err)
			continue
		}
		if err != nil || left != jobs {
			t.Fatalf("unreachable for %s: %d unfinished, %v; want %d and no error", tc.cut, left, err, jobs)
		}
		if took < tc.cut {
			t.Fatalf("answered after %.1f s although DynamoDB was unreachable for %s: the outage was not injected", took.Seconds(), tc.cut)
		}
		t.Logf("unreachable for %s: counted %d unfinished jobs after %.1f s", tc.cut, left, took.Seconds())
	}
}
