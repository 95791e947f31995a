package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// fleetTable is a catalog table name of the test's own; the fleet's table
// <name>_fleet is deleted when the test ends.
func fleetTable(t *testing.T) (endpoint, table string, exists func() bool) {
	t.Helper()
	ep := ddbtest.Endpoint(t)
	table = ddbtest.TableName(t)
	c, err := catalog.New(context.Background(), catalog.WithEndpoint(ep), catalog.WithTable(table+"_fleet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DeleteTable(ctx); err != nil {
			t.Errorf("delete %s: %v", c.Table(), err)
		}
	})
	return ep, table, func() bool {
		ok, err := c.Exists(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
}

// Bad input to every fleet command: exit 2, one line naming the flag, and
// nothing written (the fleet table is never created).
func TestFleetBadInputIsExitTwoAndWritesNothing(t *testing.T) {
	ep, table, exists := fleetTable(t)
	common := []string{"--endpoint", ep, "--table", table}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fleet", "--jobs", "0", "--workers", "2", "--slots", "1", "--shards", "4", "--job-ms", "0"}, "--jobs 0"},
		{[]string{"fleet", "--jobs", "10", "--workers", "2", "--slots", "1", "--shards", "4"}, "--job-ms is required"},
		{[]string{"fleet", "--jobs", "10", "--workers", "2", "--slots", "1", "--shards", "0", "--job-ms", "0"}, "--shards 0"},
		{[]string{"fleet", "--jobs", "10", "--workers", "2", "--slots", "1", "--shards", "4", "--job-ms", "-5"}, "--job-ms -5"},
		{[]string{"fleet", "--jobs", "10", "--workers", "2", "--slots", "1", "--shards", "4", "--job-ms", "0", "--kill-every-s", "0.01"}, "--kill-every-s"},
		{[]string{"fleet", "--jobs", "10", "--workers", "2", "--slots", "1", "--shards", "4", "--job-ms", "0", "--work-log", "/no/such/dir/log"}, "--work-log /no/such/dir/log"},
		{[]string{"fleet-worker", "--shards", "4"}, "--slots 0"},
		{[]string{"fleet-worker", "--slots", "2"}, "--shards 0"},
		{[]string{"fleet", "submit", "--job", "j1", "--create"}, `user_id ""`},
		{[]string{"fleet", "submit", "--user", "u", "--job", "j1", "--at", "tomorrow", "--create"}, `scheduled_job_execution_time "tomorrow"`},
		{[]string{"fleet", "submit", "--user", "u", "--job", "j1", "--priority", "12", "--create"}, `job_priority "12"`},
		{[]string{"fleet", "submit", "--user", "u", "--job", "j1", "--at", "1900-01-01T00:00:00Z", "--interval-s", "60", "--create"}, `scheduled_job_execution_time "1900-01-01T00:00:00Z"`},
		{[]string{"fleet", "submit", "--user", "u", "--job", "j1", "--interval-s", "60", "--repeat-until", "2001-01-01T00:00:00Z", "--create"}, `repeat_until "2001-01-01T00:00:00Z"`},
		{[]string{"fleet", "list"}, "--user is required"},
		{[]string{"fleet", "view", "--user", "u"}, "--user and --job are required"},
	} {
		_, errOut, code := runCLI(t, append(tc.args, common...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %q", tc.args, code, errOut, tc.want)
		}
	}
	if exists() {
		t.Error("bad input created the fleet table")
	}
	// Listing a fleet that was never made names the command that makes it.
	_, errOut, code := runCLI(t, append([]string{"fleet", "list", "--user", "u"}, common...)...)
	// A missing table is the server's answer, not bad input: exit 1.
	if code != 1 || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "queuekit fleet") {
		t.Errorf("list without a fleet: exit %d, %q", code, errOut)
	}
}

// Nothing listening: one line naming the endpoint and how to start DynamoDB
// Local.
func TestFleetUnreachableServerIsOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"fleet", "list", "--user", "u"},
		{"fleet", "--jobs", "10", "--workers", "1", "--slots", "1", "--shards", "2", "--job-ms", "0"},
		{"fleet-worker", "--shards", "2", "--slots", "1"},
	} {
		_, errOut, code := runCLI(t, append(args, "--endpoint", "http://127.0.0.1:9", "--table", "fleet_unreachable")...)
		if code == 0 || !strings.Contains(errOut, "http://127.0.0.1:9") || !strings.Contains(errOut, "queuekit servers start dynamodb") ||
			strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line naming the endpoint and how to start DynamoDB Local", args, code, errOut)
		}
	}
}

// seed 003's API from the command line: submit (creating the table), list
// (a Query of the user's jobs), view; a second submit of the same job is
// refused.
func TestFleetSubmitListView(t *testing.T) {
	ep, table, _ := fleetTable(t)
	common := []string{"--endpoint", ep, "--table", table}
	out, errOut, code := runCLI(t, append([]string{"fleet", "submit", "--create", "--shards", "4", "--user", "u1", "--job", "j1",
		"--type", "etl", "--priority", "2", "--interval-s", "60", "--json"}, common...)...)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("submit --json: %v: %s", err, out)
	}
	for k, want := range map[string]any{"user_id": "u1", "job_id": "j1", "job_type": "etl", "job_priority": 2.0, "execution_status": "NOT_STARTED",
		"current_retry": 0.0, "max_retry": 3.0, "lost_attempts": 0.0, "job_interval": 60.0, "result_location": "s3://results/u1/j1"} {
		if j[k] != want {
			t.Errorf("submitted %s = %v, want %v", k, j[k], want)
		}
	}
	if _, ok := j["scheduled_job_execution_time"].(string); !ok {
		t.Errorf("no scheduled_job_execution_time in %s", out)
	}
	if _, errOut, code := runCLI(t, append([]string{"fleet", "submit", "--user", "u1", "--job", "j1"}, common...)...); code != 1 || !strings.Contains(errOut, "exists already") {
		t.Errorf("second submit: exit %d, %q; want exit 1 (the server's answer), exists already", code, errOut)
	}
	if _, errOut, code := runCLI(t, append([]string{"fleet", "submit", "--user", "u1", "--job", "j2"}, common...)...); code != 0 {
		t.Fatalf("submit j2: %s", errOut)
	}
	out, errOut, code = runCLI(t, append([]string{"fleet", "list", "--user", "u1", "--json"}, common...)...)
	var list []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || list[0]["job_id"] != "j1" || list[1]["job_id"] != "j2" {
		t.Errorf("list: exit %d, %s %s; want j1, j2", code, out, errOut)
	}
	out, _, code = runCLI(t, append([]string{"fleet", "view", "--user", "u1", "--job", "j2"}, common...)...)
	if code != 0 || !strings.Contains(out, "job j2 of user u1: NOT_STARTED") || !strings.Contains(out, "retry 0 of 3 (its own failures), lost attempts 0 (leases run out)") {
		t.Errorf("view: exit %d, %q", code, out)
	}
	if _, errOut, code := runCLI(t, append([]string{"fleet", "view", "--user", "u2", "--job", "j2"}, common...)...); code != 1 || !strings.Contains(errOut, "no job j2 for user u2") {
		t.Errorf("view a missing job: exit %d, %q", code, errOut)
	}
}

// queuekit fleet --json prints exactly the keys of the contract, and a
// small run ends every job.
func TestFleetJSONKeysAreTheContract(t *testing.T) {
	t.Parallel()
	ep, table, _ := fleetTable(t)
	bin := filepath.Join(t.TempDir(), "queuekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "fleet", "--jobs", "60", "--workers", "2", "--slots", "2", "--shards", "4", "--job-ms", "1",
		"--endpoint", ep, "--table", table, "--json").Output()
	if err != nil {
		t.Fatalf("fleet: %v", err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The contract's keys, and those added since (issue 25: resumed,
	// kept_finished, submitted); none renamed.
	want := []string{"attempts", "claims", "fatal", "jobs", "jobs_per_second", "kept_finished", "resumed", "seconds", "shards", "slots",
		"submitted", "succeeded", "workers", "write_ceiling_per_second", "writes_per_job"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", keys, want)
	}
	var claims map[string]int
	if err := json.Unmarshal(got["claims"], &claims); err != nil || len(claims) != 2 || claims["won"] < 60 {
		t.Errorf("claims %s: want {won, lost} with at least 60 won", got["claims"])
	}
	var succeeded int
	_ = json.Unmarshal(got["succeeded"], &succeeded)
	if succeeded != 60 {
		t.Errorf("succeeded %d, want 60", succeeded)
	}
}

// The test-only clock offset: a value that is not a Go duration within
// ±24h is bad input, exit 2, one line naming the variable.
func TestFleetBadClockOffsetIsExitTwo(t *testing.T) {
	ep, table, _ := fleetTable(t)
	for _, v := range []string{"soon", "48h"} {
		t.Setenv(fleet.ClockOffsetEnv, v)
		_, errOut, code := runCLI(t, "fleet", "list", "--user", "u", "--endpoint", ep, "--table", table)
		if code != 2 || !strings.Contains(errOut, fleet.ClockOffsetEnv) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
			t.Errorf("%s=%s: exit %d, %q; want exit 2, one line naming the variable", fleet.ClockOffsetEnv, v, code, errOut)
		}
	}
}
