package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// fanoutEnv seeds nights generated nights into a table of this test and
// returns the flags that point `fanout` at it, at a results table of this
// test (both deleted at the end) and at the test SQS server.
func fanoutEnv(t *testing.T, nights int) []string {
	t.Helper()
	src := ddbtest.Catalog(t)
	jobs, err := workload.Generate(workload.Config{Nights: nights, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Seed(context.Background(), jobs); err != nil {
		t.Fatalf("seed: %v", err)
	}
	results := ddbtest.NewCatalog(t) // only its name and its deletion: fanout creates it
	return []string{"--endpoint", ddbtest.Endpoint(t), "--table", src.Table(), "--results-table", results.Table(),
		"--sqs-endpoint", sqstest.Endpoint(t)}
}

func decodeFanout(t *testing.T, out string) fanoutResult {
	t.Helper()
	var r fanoutResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("fanout --json: %v in %q", err, out)
	}
	return r
}

func capacityOf(t *testing.T, r fanoutResult) nights.Capacity {
	t.Helper()
	var c nights.Capacity
	if err := json.Unmarshal(r.Result, &c); err != nil {
		t.Fatalf("result: %v in %s", err, r.Result)
	}
	return c
}

func TestFanoutDeadLettersExactlyTheFailingSlicesAndRedriveCompletes(t *testing.T) {
	t.Parallel()
	env := fanoutEnv(t, 12)
	run := "dlq" + strings.ReplaceAll(ddbtest.TableName(t)[len(ddbtest.TableName(t))-8:], "_", "")
	out, errOut, code := runDynamoCLI(t, append([]string{"fanout", "--slices", "12", "--workers", "3", "--fail-slices", "7,2", "--max-receives", "2", "--run", run, "--json"}, env...)...)
	if code != 0 {
		t.Fatalf("fanout: exit %d, %s", code, errOut)
	}
	r := decodeFanout(t, out)
	// Each failing slice is received maxReceiveCount = 2 times (1 redelivery
	// each) and moves to the dead-letter queue on its third receive.
	if r.Slices != 12 || r.Processed != 10 || fmt.Sprint(r.DeadLettered) != "[2 7]" || r.Redelivered != 2 || r.Duplicates != 0 {
		t.Fatalf("fanout = %s; want 12 slices, 10 processed, [2 7] dead-lettered, 2 redelivered", out)
	}
	for _, sl := range []int{2, 7} {
		if want := fmt.Sprintf("slice %d fails (--fail-slices)", sl); r.LastErrors[sl] != want {
			t.Errorf("last_errors[%d] = %q, want %q (the cause its last attempt recorded)", sl, r.LastErrors[sl], want)
		}
	}
	c := capacityOf(t, r)
	if c.Nights != 10 || fmt.Sprint(c.MissingNights) != "[2025-05-13 2025-05-18]" {
		t.Fatalf("capacity = %+v; want 10 nights, missing slices 2 and 7 (2025-05-13, 2025-05-18)", c)
	}
	// The dead-letter queue itself holds exactly those two messages.
	q := sqstest.Client(t)
	dlq, err := q.Open(context.Background(), fanout.QueueName(run)+"-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := q.Depth(context.Background(), dlq); err != nil || d.Visible+d.InFlight != 2 {
		t.Fatalf("dead-letter queue depth %+v (%v), want 2 messages", d, err)
	}
	// The fix: run again without --fail-slices and redrive.
	out, errOut, code = runDynamoCLI(t, append([]string{"fanout", "--slices", "12", "--run", run, "--resume", "--redrive", "--json"}, env...)...)
	if code != 0 {
		t.Fatalf("redrive: exit %d, %s", code, errOut)
	}
	r = decodeFanout(t, out)
	if r.Processed != 12 || len(r.DeadLettered) != 0 || r.Duplicates != 0 {
		t.Fatalf("after redrive = %s; want 12 processed, none dead-lettered", out)
	}
	if c := capacityOf(t, r); c.Nights != 12 || len(c.MissingNights) != 0 {
		t.Fatalf("capacity after redrive = %+v; want all 12 nights", c)
	}
}

// A processor killed with SIGKILL after writing a slice's result and before
// deleting its message: the message comes back after its visibility timeout,
// the next processor finds the result written (the conditional put fails),
// deletes the message, and the slice counts once.
func TestFanoutProcessorKilledAfterWriteDoesNotCountTwice(t *testing.T) {
	t.Parallel()
	env := fanoutEnv(t, 6)
	bin := filepath.Join(t.TempDir(), "queuekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := "kill" + strings.ReplaceAll(ddbtest.TableName(t)[len(ddbtest.TableName(t))-8:], "_", "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"fanout", "--slices", "6", "--workers", "1", "--run", run,
		"--visibility", "2s", "--crash-after-write", "3"}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	crashed := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "crash point: wrote slice 3") {
			crashed = true
			break
		}
	}
	if !crashed {
		_ = cmd.Wait()
		t.Fatalf("the processor never reached its crash point")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("processor exit: %v, want killed", err)
	}
	out, errOut, code := runDynamoCLI(t, append([]string{"fanout", "--slices", "6", "--run", run, "--resume", "--visibility", "2s", "--json"}, env...)...)
	if code != 0 {
		t.Fatalf("resume: exit %d, %s", code, errOut)
	}
	r := decodeFanout(t, out)
	// The killed process wrote slice 3 (and maybe others) without deleting
	// its message; the resumed run writes the rest and finds slice 3 written.
	if r.Processed != 6 || len(r.DeadLettered) != 0 || r.Duplicates < 1 || r.Redelivered < 1 {
		t.Fatalf("resume = %s; want 6 processed, none dead, at least one redelivery found written", out)
	}
	if c := capacityOf(t, r); c.Nights != 6 {
		t.Fatalf("capacity counts %d nights, want 6 (each once)", c.Nights)
	}
}

func TestTimersCLIFiresEveryTimerOnce(t *testing.T) {
	t.Parallel()
	ep := ddbtest.Endpoint(t)
	out, errOut, code := runDynamoCLI(t, "timers", "--count", "6", "--due-in", "1", "--json", "--endpoint", ep)
	if code != 0 {
		t.Fatalf("timers: exit %d, %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("timers --json: %v in %q", err, out)
	}
	d, _ := got["delay_seconds"].(map[string]any)
	if got["scheduled"] != 6.0 || got["fired"] != 6.0 || got["duplicates"] != 0.0 || d == nil {
		t.Fatalf("timers = %s; want 6 scheduled, 6 fired, 0 duplicates, delay_seconds", out)
	}
	// TTL never deletes before the due time, and p50 <= p95 <= max.
	if !(d["p50"].(float64) >= 0 && d["p50"].(float64) <= d["p95"].(float64) && d["p95"].(float64) <= d["max"].(float64)) {
		t.Fatalf("delay_seconds = %v; want 0 <= p50 <= p95 <= max", d)
	}
}

// Bad input to timers and fanout is exit 2, one line, checked before any
// server is contacted; what a server answers (unreachable, a missing table,
// night or run) is exit 1, one line, and nothing is created.
func TestTimersAndFanoutBadInput(t *testing.T) {
	t.Parallel()
	ep := ddbtest.Endpoint(t)
	sqsEP := sqstest.Endpoint(t)
	sq := []string{"--sqs-endpoint", sqsEP}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"timers", "--count", "0"}, 2, "--count 0"},
		{[]string{"timers", "--count", "1000000000"}, 2, "--count 1000000000: schedule 1 to 1000 timers"},
		{[]string{"timers", "--due-in", "-1"}, 2, "--due-in -1"},
		{[]string{"timers", "--due-in", "1e300"}, 2, "--due-in 1e+300: want a number of seconds from 0 to 86400"},
		{[]string{"timers", "--due-in", "NaN"}, 2, "--due-in NaN"},
		{[]string{"timers", "--count", "1", "--endpoint", "http://127.0.0.1:1"}, 1, "DynamoDB Local at http://127.0.0.1:1 is unreachable"},
		{append([]string{"fanout", "--slices", "0"}, sq...), 2, "--slices 0"},
		{append([]string{"fanout", "--slices", "1000000000"}, sq...), 2, "--slices 1000000000: want 1 to 10000"},
		{append([]string{"fanout", "--slices", "4", "--source-rate", "NaN"}, sq...), 2, "--source-rate NaN"},
		{append([]string{"fanout", "--slices", "4", "--source-rate", "+Inf"}, sq...), 2, "--source-rate +Inf"},
		{append([]string{"fanout", "--slices", "4", "--visibility", "1500ms"}, sq...), 2, "--visibility 1.5s: SQS takes whole seconds"},
		{append([]string{"fanout", "--slices", "4", "--poll", "500ms"}, sq...), 2, "--poll 500ms"},
		{append([]string{"fanout", "--slices", "4", "--workers", "1000000000"}, sq...), 2, "--workers 1000000000"},
		{append([]string{"fanout", "--slices", "4", "--fail-slices", "1,4"}, sq...), 2, `"4" is not a slice index`},
		{append([]string{"fanout", "--slices", "4", "--fail-slices", "x"}, sq...), 2, `"x" is not a slice index`},
		{append([]string{"fanout", "--slices", "4", "--max-receives", "0"}, sq...), 2, "--max-receives 0"},
		{append([]string{"fanout", "--slices", "4", "--workers", "0"}, sq...), 2, "--workers 0"},
		{append([]string{"fanout", "--slices", "4", "--start", "garbage"}, sq...), 2, "--start"},
		{[]string{"fanout", "--slices", "4", "--sqs-endpoint", "not a url"}, 2, `--sqs-endpoint "not a url": not a URL`},
		{append([]string{"fanout", "--slices", "4", "--redrive"}, sq...), 2, "--redrive needs --resume"},
		{append([]string{"fanout", "--slices", "4", "--endpoint", "http://127.0.0.1:1"}, sq...), 1, "DynamoDB Local at http://127.0.0.1:1 is unreachable"},
		{append([]string{"fanout", "--slices", "4", "--endpoint", ep, "--table", "no_such_table_here"}, sq...), 1, "does not exist"},
		{append([]string{"fanout", "--slices", "5", "--endpoint", ep, "--table", seededTable(t)}, sq...), 1, "night 2025-05-15 has no jobs"},
		{[]string{"fanout", "--slices", "4", "--endpoint", ep, "--table", seededTable(t), "--sqs-endpoint", "http://127.0.0.1:1"}, 1, "SQS at http://127.0.0.1:1 is unreachable"},
	} {
		_, errOut, code := runDynamoCLI(t, c.args...)
		if code != c.code || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want status %d and one line containing %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// fanout --resume of a run that does not exist refuses (exit 1: the server
// says so) before it creates anything: no results table, no queues.
func TestFanoutResumeOfAnUnknownRunCreatesNothing(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	results := ddbtest.TableName(t)
	args := []string{"fanout", "--slices", "4", "--endpoint", ep, "--table", seededTable(t), "--sqs-endpoint", sqstest.Endpoint(t),
		"--results-table", results, "--run", "nosuchrun", "--resume"}
	_, errOut, code := runDynamoCLI(t, args...)
	if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--run nosuchrun: queue queuekit-fanout-nosuchrun does not exist") ||
		!strings.Contains(errOut, "drop --resume") {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying run nosuchrun does not exist", code, errOut)
	}
	if exists(t, ep, results) {
		t.Errorf("results table %s created before the unknown run was refused", results)
	}
	q := sqstest.Client(t)
	if _, err := q.Open(context.Background(), fanout.QueueName("nosuchrun")); err == nil {
		t.Errorf("queue %s exists after a refused --resume", fanout.QueueName("nosuchrun"))
	}
}

// seeded holds each test's seeded table: a table made with ddbtest.Catalog is
// deleted when its test ends, so it is never shared between tests. Tests run
// in parallel, hence the sync.Map.
var seeded sync.Map // test name -> table

// seededTable returns a table holding four generated nights (2025-05-11 to
// 2025-05-14: the first and last of 4 slices), seeded once per test.
func seededTable(t *testing.T) string {
	t.Helper()
	if table, ok := seeded.Load(t.Name()); ok {
		return table.(string)
	}
	c := ddbtest.Catalog(t)
	jobs, err := workload.Generate(workload.Config{Nights: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seed(context.Background(), jobs); err != nil {
		t.Fatal(err)
	}
	seeded.Store(t.Name(), c.Table())
	t.Cleanup(func() { seeded.Delete(t.Name()) })
	return c.Table()
}

// Processors SIGKILLed on receiving slice 3, before anything is recorded,
// until SQS has counted maxReceiveCount receives of it; slice 5 fails on
// every attempt. Both are dead-lettered, and the report tells them apart:
// slice 5 by its own failures (its cause recorded), slice 3 by crashes (no
// failure recorded: a healthy slice that SQS's rule dead-lettered), and says
// how to redrive them; the redrive then completes the run with slice 3.
func TestFanoutReportSeparatesSlicesDeadLetteredByCrashes(t *testing.T) {
	t.Parallel()
	env := fanoutEnv(t, 6)
	bin := filepath.Join(t.TempDir(), "queuekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := "crash" + strings.ReplaceAll(ddbtest.TableName(t)[len(ddbtest.TableName(t))-8:], "_", "")
	common := []string{"fanout", "--slices", "6", "--workers", "1", "--run", run, "--visibility", "1s", "--max-receives", "2",
		"--fail-slices", "5", "--retry-after", "1s"}
	kills := 0
	for attempt := range 2 { // receives 1 and 2 of slice 3 end in a SIGKILL
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		args := append(append([]string{}, common...), "--crash-before-process", "3")
		if attempt > 0 {
			args = append(args, "--resume")
		}
		cmd := exec.CommandContext(ctx, bin, append(args, env...)...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		crashed := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "crash point: received slice 3") {
				crashed = true
				break
			}
		}
		if !crashed {
			_ = cmd.Wait()
			cancel()
			t.Fatalf("run %d: the processor never received slice 3", attempt+1)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		kills++
	}
	out, errOut, code := runDynamoCLI(t, append(append(append([]string{}, common...), "--resume", "--json"), env...)...)
	if code != 0 {
		t.Fatalf("resume: exit %d, %s", code, errOut)
	}
	r := decodeFanout(t, out)
	if fmt.Sprint(r.DeadLettered) != "[3 5]" || fmt.Sprint(r.DeadByCrash) != "[3]" || fmt.Sprint(r.DeadByFailure) != "[5]" || r.Processed != 4 {
		t.Fatalf("after %d kills: %s; want 4 processed, [3 5] dead-lettered: [3] by crashes, [5] by failures", kills, out)
	}
	if r.LastErrors[5] != "slice 5 fails (--fail-slices)" || r.LastErrors[3] != fanout.NoCauseRecorded {
		t.Errorf("last errors %v: want slice 5's cause and none for slice 3", r.LastErrors)
	}
	if want := "queuekit fanout --slices 6 --run " + run + " --resume --redrive"; r.Redrive != want {
		t.Errorf("redrive %q, want %q", r.Redrive, want)
	}
	if !strings.Contains(errOut, "slice 3 (night") || !strings.Contains(errOut, "dead-lettered by crashes") {
		t.Errorf("the run's log does not say slice 3 was dead-lettered by crashes:\n%s", errOut)
	}
	// The redrive, with stable processors and slice 5 fixed, completes it.
	out, errOut, code = runDynamoCLI(t, append([]string{"fanout", "--slices", "6", "--run", run, "--resume", "--redrive", "--visibility", "1s", "--json"}, env...)...)
	if code != 0 {
		t.Fatalf("redrive: exit %d, %s", code, errOut)
	}
	if r := decodeFanout(t, out); r.Processed != 6 || len(r.DeadLettered) != 0 {
		t.Fatalf("after redrive: %s; want 6 processed, none dead-lettered", out)
	}
}
