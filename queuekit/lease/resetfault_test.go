package lease_test

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// resetKind is leaseKind with the reset's read of the night's old items
// told apart: a Query of the execution table (exec) on its key, no index;
// the first such Query of a run is the reset's (the night's jobs are read
// from the catalog's table before).
func resetKind(exec, catalog string) toxitest.Classify {
	table := []byte(`"TableName":"` + exec + `"`)
	cat := []byte(`"TableName":"` + catalog + `"`)
	return func(op string, body []byte) string {
		switch {
		case op == "Query" && bytes.Contains(body, table) && !bytes.Contains(body, []byte(`"IndexName"`)):
			return "night-read"
		case op == "Query" && bytes.Contains(body, cat):
			return "catalog-read"
		}
		return leaseKind(op, body)
	}
}

// `queuekit run` (a real process, the CLI's own client) rides out lost
// replies on each call of its reset in turn: the Query of the night's jobs
// in the catalog (its first call), the Query of the night's old items, the fenced transactions that rewrite the night, and the pool's
// update to WAITING (with the heartbeat, the UpdateItems of kind run-pool).
// Every reply of the kind is lost until the SDK has sent five requests of it
// again (so at least one whole call, every try of it, got no answer), then
// none: the run must ride that out as docs/reliability.md promises (it is
// far shorter than CoordinatorRideOut), exit 0, and end every job SUCCESS.
// Before the Query and the final update were ridden out, `run` exited 1
// ("reset night D: query night D ...") on the first whole call lost.
func TestRunRidesOutLostRepliesDuringItsReset(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	for _, kind := range []string{"catalog-read", "night-read", "reset", "run-pool"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			n := sample(t, "2026-05-13")
			ex, cat := setup(t, n.Jobs)
			if err := ex.CreateTable(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := toxitest.NewRouter(t, cat.Endpoint(), resetKind(ex.Table(), cat.Table()), "catalog-read", "night-read", "reset", "run-pool")
			front := r.Serve(t)
			restore := r.Proxy(t, kind).LoseReplies(t, 1, 250*time.Millisecond)
			r.AfterRetries(kind, 5, restore)
			run := startRun(t, bin, n.BatchDate, front, cat.Table(), 20)
			jobs := run.rodeOut(t, r, kind, ex, cat, n)
			t.Logf("%s: %d requests, %d sent again; %d jobs SUCCESS", kind, r.Count(kind), r.Retries(kind), jobs)
		})
	}
}

// phaseKind tells apart the coordinator's calls after its reset: "coord"
// is its reads of the pool (GetItem POOL), its heartbeat (the UpdateItem of
// run_seen_ms) and its looks at the workers (Query of WORKER#); "done" is
// the UpdateItem that marks the night DONE. The rest is leaseKind's.
func phaseKind(op string, body []byte) string {
	has := func(s string) bool { return bytes.Contains(body, []byte(s)) }
	switch {
	case op == "UpdateItem" && has(`"DONE"`):
		return "done"
	case op == "GetItem" && has(`"POOL"`), op == "Query" && has(`"WORKER#`), op == "UpdateItem" && has(`"run_seen_ms"`) && !has(`"WAITING"`) && !has(`"RUNNING"`):
		return "coord"
	}
	return leaseKind(op, body)
}

// `queuekit run` rides out lost replies in each phase after its reset in
// turn (the reset and the update to WAITING are
// TestRunRidesOutLostRepliesDuringItsReset): "running", once the test reads
// the pool RUNNING (directly, not through the proxy), every reply to the
// coordinator's pool reads, heartbeats and looks at the workers is lost
// (workers read the pool too, and ride it out) until five requests of them
// were sent again; "ending", every reply to the update that marks the night
// DONE is lost until it was sent again five times. The run must exit 0 with
// the pool DONE and every job SUCCESS.
func TestRunRidesOutLostRepliesInEachPhase(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	for _, phase := range []string{"running", "ending"} {
		t.Run(phase, func(t *testing.T) {
			t.Parallel()
			n := sample(t, "2026-05-14")
			ex, cat := setup(t, n.Jobs)
			if err := ex.CreateTable(context.Background()); err != nil {
				t.Fatal(err)
			}
			kind := map[string]string{"running": "coord", "ending": "done"}[phase]
			r := toxitest.NewRouter(t, cat.Endpoint(), phaseKind, "coord", "done")
			front := r.Serve(t)
			if phase == "ending" {
				r.AfterRetries(kind, 5, r.Proxy(t, kind).LoseReplies(t, 1, 250*time.Millisecond))
			}
			run := startRun(t, bin, n.BatchDate, front, cat.Table(), 40)
			if phase == "running" { // lose the coordinator's replies once the night runs
				var injected bool
				for !injected {
					select {
					case err := <-run.done:
						t.Fatalf("run ended (%v) before the test saw the night RUNNING: %s", err, run.stderr.String())
					case <-time.After(20 * time.Millisecond):
					}
					if pool, _ := rawNight(t, ex, cat.Client(), n.BatchDate); pool.State == "RUNNING" {
						r.AfterRetries(kind, 5, r.Proxy(t, kind).LoseReplies(t, 1, 250*time.Millisecond))
						injected = true
					}
				}
			}
			jobs := run.rodeOut(t, r, kind, ex, cat, n)
			t.Logf("%s: %d requests of kind %s, %d sent again; %d jobs SUCCESS", phase, r.Count(kind), kind, r.Retries(kind), jobs)
		})
	}
}

// nightRun is one `queuekit run` process of a fault test, started.
type nightRun struct {
	stderr *bytes.Buffer
	done   chan error // its exit
}

// startRun starts `queuekit run` of night date through endpoint (3
// workers of 3 slots, minuteMS a night minute); the process is killed when
// the test ends or after 3 minutes.
func startRun(t *testing.T, bin, date, endpoint, table string, minuteMS int) nightRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, "run", "--batch-date", date, "--workers", "3", "--slots", "3",
		"--minute-ms", strconv.Itoa(minuteMS), "--endpoint", endpoint, "--table", table)
	run := nightRun{stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = io.Discard, run.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { run.done <- cmd.Wait() }()
	return run
}

// rodeOut waits for the run and checks that it rode out the lost replies
// of kind: exit 0, at least five requests of the kind sent again (the fault
// was injected), the pool DONE and every job of n SUCCESS of that run, read
// back from the table. It returns the jobs read back.
func (run nightRun) rodeOut(t *testing.T, r *toxitest.Router, kind string, ex *lease.Executor, cat *catalog.Catalog, n queuekit.Night) int {
	t.Helper()
	if err := <-run.done; err != nil {
		t.Fatalf("run with the %s replies lost (%d requests of the kind sent again): %v\nstderr:\n%s", kind, r.Retries(kind), err, run.stderr.String())
	}
	if r.Retries(kind) < 5 {
		t.Fatalf("%d requests of kind %s sent again, want at least 5: the fault was not injected", r.Retries(kind), kind)
	}
	pool, jobs := rawNight(t, ex, cat.Client(), n.BatchDate)
	if pool.State != "DONE" {
		t.Errorf("the pool is %s after the run, want DONE", pool.State)
	}
	if len(jobs) != len(n.Jobs) {
		t.Fatalf("%d jobs in the execution table, want %d", len(jobs), len(n.Jobs))
	}
	for _, j := range jobs {
		if j.Status != queuekit.StatusSuccess || j.RunID != pool.RunID {
			t.Errorf("%s: %s of run %s, want SUCCESS of run %s", j.SK, j.Status, j.RunID, pool.RunID)
		}
	}
	return len(jobs)
}
