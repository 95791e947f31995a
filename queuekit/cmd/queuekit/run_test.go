package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// seededForRun is a catalog table with the sample nights and an executor on
// it; both tables are deleted at the end.
func seededForRun(t *testing.T) (ep, table string, ex *lease.Executor) {
	t.Helper()
	c := ddbtest.Catalog(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seed(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	ex, err = lease.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ex.DeleteTable(ctx); err != nil {
			t.Errorf("delete %s: %v", ex.Table(), err)
		}
	})
	return ddbtest.Endpoint(t), c.Table(), ex
}

// run --json carries exactly the documented keys; realised and forecast
// carry the metric keys of simulate --json; --policy easy runs EASY backfilling.
func TestRunJSONAndStatus(t *testing.T) {
	t.Parallel()
	ep, table, _ := seededForRun(t)
	out, errOut, code := runDynamoCLI(t, "run", "--batch-date", "2026-05-14", "--workers", "2", "--policy", "easy",
		"--minute-ms", "5", "--json", "--endpoint", ep, "--table", table)
	if code != 0 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("run --json: %v in %s", err, out)
	}
	want := []string{"batch_date", "claims", "dead_lettered", "forecast", "index_write_units_per_job", "lost_attempts", "policy", "realised", "retries", "schedule",
		"table_write_units_per_job", "workers"}
	if k := sortedKeys(got); !reflect.DeepEqual(k, want) {
		t.Fatalf("run --json keys %v, want %v", k, want)
	}
	// Every job is claimed, started and ended: its start alone is 1 table
	// unit and moves lease_until in the "leases" index (2 index units).
	var tab, idx float64
	if json.Unmarshal(got["table_write_units_per_job"], &tab) != nil || json.Unmarshal(got["index_write_units_per_job"], &idx) != nil || tab < 1 || idx < 2 {
		t.Errorf("write units per job %s + %s, want numbers of at least 1 + 2", got["table_write_units_per_job"], got["index_write_units_per_job"])
	}
	if string(got["policy"]) != `"easy"` {
		t.Errorf("policy %s, want easy for --policy easy", got["policy"])
	}
	simOut, _, code := runCLI(t, "simulate", "--batch-date", "2026-05-14", "--workers", "2", "--policy", "backfill", "--json")
	if code != 0 {
		t.Fatal("simulate failed")
	}
	var simJSON map[string]json.RawMessage
	if err := json.Unmarshal([]byte(simOut), &simJSON); err != nil {
		t.Fatal(err)
	}
	var realised, forecast map[string]json.RawMessage
	if err := json.Unmarshal(got["realised"], &realised); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got["forecast"], &forecast); err != nil {
		t.Fatal(err)
	}
	for _, k := range sortedKeys(realised) {
		if _, ok := simJSON[k]; !ok {
			t.Errorf("realised key %q is not a simulate --json key", k)
		}
	}
	if !reflect.DeepEqual(sortedKeys(realised), sortedKeys(forecast)) {
		t.Errorf("realised keys %v differ from forecast keys %v", sortedKeys(realised), sortedKeys(forecast))
	}
	if string(forecast["average_wait_minutes"]) != string(simJSON["average_wait_minutes"]) {
		t.Errorf("forecast average wait %s, simulate says %s", forecast["average_wait_minutes"], simJSON["average_wait_minutes"])
	}
	var sched []map[string]json.RawMessage
	if err := json.Unmarshal(got["schedule"], &sched); err != nil || len(sched) != 12 {
		t.Fatalf("schedule: %v, %d entries, want 12", err, len(sched))
	}
	wantEntry := []string{"attempt", "exclusive", "finish_minute", "job_id", "start_minute", "worker_ids", "workers"}
	if k := sortedKeys(sched[0]); !reflect.DeepEqual(k, wantEntry) {
		t.Fatalf("schedule entry keys %v, want %v", k, wantEntry)
	}
	out, errOut, code = runDynamoCLI(t, "status", "--batch-date", "2026-05-14", "--json", "--endpoint", ep, "--table", table)
	if code != 0 {
		t.Fatalf("status: exit %d, %s", code, errOut)
	}
	var st lease.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "DONE" || st.Statuses[queuekit.StatusSuccess] != 12 || st.Ended != 12 || len(st.DeadLetters) != 0 {
		t.Fatalf("status %+v: want DONE with 12 SUCCESS", st)
	}
}

// Bad input: one line naming the value and what to do, exit status 2, and
// nothing written (the execution table is not even created). A night or run
// the server does not have is exit 1 (the server's answer, not usage), also
// one line and nothing written.
func TestRunBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	ep, table, ex := seededForRun(t)
	at := []string{"--endpoint", ep, "--table", table}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--workers", "3"}, 2, "--batch-date is required"},
		{[]string{"run", "--batch-date", "2030-01-01", "--workers", "3"}, 1, "night 2030-01-01 has no jobs"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "0"}, 2, "--workers 0"},
		// Limits before writes (issue 15): the pool is one item of at most 400 KB.
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "1000000"}, 2, "--workers 1000000 is beyond the limit of 2000: the pool is one DynamoDB item"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "20000", "--slots", "0"}, 2, "--workers 20000 is beyond the limit of 2000"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--slots", "4"}, 2, "--slots 4"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--slots", "-2"}, 2, "--slots -2"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--minute-ms", "0"}, 2, "--minute-ms 0"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--minute-ms", "-5"}, 2, "--minute-ms -5"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--max-retry", "1000000000"}, 2, "--max-retry 1000000000"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--lease-ms", "99999999999999"}, 2, "--lease-ms 99999999999999"},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--policy", "fifo"}, 2, `--policy "fifo": use barrier, easy or conservative`},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--policy", "Conservative"}, 2, `--policy "Conservative"`},
		{[]string{"run", "--batch-date", "2026-05-13", "--workers", "3", "--policy", ""}, 2, `--policy ""`},
		{[]string{"worker", "--batch-date", "2026-05-13", "--slots", "0"}, 2, "--slots 0"},
		{[]string{"worker", "--batch-date", "2026-05-13", "--slots", "1000000000"}, 2, "--slots 1000000000"},
		{[]string{"worker", "--batch-date", "2026-05-13", "--slots", "1", "--wait", "0s"}, 1, "no run of night 2026-05-13"},
		{[]string{"status"}, 2, "--batch-date is required"},
	} {
		_, errOut, code := runDynamoCLI(t, append(tc.args, at...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	ctx := context.Background()
	if st, err := ex.Status(ctx, "2026-05-13"); err != nil || st.State != "" {
		t.Fatalf("after bad input the night was touched: %+v, %v", st, err)
	}
	// Unreachable DynamoDB: exit 1, one line naming the endpoint and how to start it.
	_, errOut, code := runDynamoCLI(t, "run", "--batch-date", "2026-05-13", "--workers", "3", "--endpoint", "http://127.0.0.1:9", "--table", table)
	if code != 1 || !strings.Contains(errOut, "http://127.0.0.1:9") || !strings.Contains(errOut, "queuekit servers start dynamodb") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable: exit %d, stderr %q", code, errOut)
	}
}

// A night already running is refused, and the running night is untouched.
func TestRunRefusesANightAlreadyRunning(t *testing.T) {
	ep, table, ex := seededForRun(t)
	ctx := context.Background()
	n, err := ex.Night(ctx, "2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	runID, err := ex.Prepare(ctx, n, lease.Config{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	before, err := ex.Status(ctx, "2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runDynamoCLI(t, "run", "--batch-date", "2026-05-13", "--workers", "3", "--endpoint", ep, "--table", table)
	if code != 2 || !strings.Contains(errOut, "already running") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 (issue 15's contract) and one line saying the night is already running", code, errOut)
	}
	// It names the run, when it started, and which host and pid hold it.
	for _, want := range []string{"run " + runID, "started 20", "by host " + host + " pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not name %q", errOut, want)
		}
	}
	after, err := ex.Status(ctx, "2026-05-13")
	if err != nil || !reflect.DeepEqual(before, after) {
		t.Fatalf("the running night changed: %+v -> %+v (%v)", before, after, err)
	}
}

// --policy takes exactly barrier, easy and conservative, with backfill an
// alias of easy (issue 10); anything else is one usage line.
func TestRunPolicyNames(t *testing.T) {
	for in, want := range map[string]sim.Policy{"barrier": sim.Barrier, "easy": sim.Easy, "backfill": sim.Easy, "conservative": sim.Conservative} {
		got, err := parsePolicy(in)
		if err != nil || got != want {
			t.Errorf("parsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"fifo", "EASY", "conservative-backfill", ""} {
		if _, err := parsePolicy(in); err == nil {
			t.Errorf("parsePolicy(%q): no error", in)
		}
	}
}

// run --policy conservative runs the night for real and names the policy;
// its forecast is the simulator's conservative run.
func TestRunConservative(t *testing.T) {
	ep, table, _ := seededForRun(t)
	out, errOut, code := runDynamoCLI(t, "run", "--batch-date", "2026-05-13", "--workers", "3", "--policy", "conservative",
		"--minute-ms", "5", "--json", "--endpoint", ep, "--table", table)
	if code != 0 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	var got struct {
		Policy   string `json:"policy"`
		Forecast struct {
			AverageWait float64 `json:"average_wait_minutes"`
		} `json:"forecast"`
		Schedule []json.RawMessage `json:"schedule"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("run --json: %v in %s", err, out)
	}
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(n, sim.Config{Workers: 3, Policy: sim.Conservative})
	if err != nil {
		t.Fatal(err)
	}
	if got.Policy != "conservative" || len(got.Schedule) != len(n.Jobs) || math.Abs(got.Forecast.AverageWait-r.AverageWait) > 0.01 {
		t.Fatalf("policy %q, %d attempts, forecast average wait %v; want conservative, %d, %v",
			got.Policy, len(got.Schedule), got.Forecast.AverageWait, len(n.Jobs), r.AverageWait)
	}
}
