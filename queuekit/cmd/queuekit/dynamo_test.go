package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

func runDynamoCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestSeedAccessResetAgainstDynamoDBLocal(t *testing.T) {
	c := ddbtest.NewCatalog(t) // deletes the table at the end
	ep, table := ddbtest.Endpoint(t), c.Table()

	out, errOut, code := runDynamoCLI(t, "seed", "--sample", "--endpoint", ep, "--table", table)
	if code != 0 || !strings.Contains(out, "seeded 39 items") {
		t.Fatalf("seed: code %d, out %q, err %q", code, out, errOut)
	}
	out, errOut, code = runDynamoCLI(t, "access", "--batch-date", "2026-05-13", "--window", "02:00", "--json", "--endpoint", ep, "--table", table)
	if code != 0 {
		t.Fatalf("access: code %d, err %q", code, errOut)
	}
	var got map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("access --json: %v in %q", err, out)
	}
	keys := func(m map[string]float64) []string {
		var k []string
		for s := range m {
			k = append(k, s)
		}
		sort.Strings(k)
		return k
	}
	want := []string{"consumed_rcu", "count", "elapsed_ms", "pages", "scanned_count"}
	if len(got) != 2 || !reflect.DeepEqual(keys(got["query"]), want) || !reflect.DeepEqual(keys(got["scan"]), want) {
		t.Fatalf("access --json = %s, want query and scan with keys %v", out, want)
	}
	if q, s := got["query"], got["scan"]; q["count"] != 3 || q["scanned_count"] != 3 || s["count"] != 3 || s["scanned_count"] != 39 {
		t.Fatalf("access --json = %s: want 3 returned by both, 3 scanned by Query, 39 by Scan", out)
	}
	out, errOut, code = runDynamoCLI(t, "access", "--batch-date", "2026-05-13", "--endpoint", ep, "--table", table)
	if code != 0 || !strings.Contains(out, "items scanned") || !strings.Contains(out, "Scan read 39 items to return 10") {
		t.Fatalf("access: code %d, out %q, err %q", code, out, errOut)
	}
	out, errOut, code = runDynamoCLI(t, "reset", "--endpoint", ep, "--table", table)
	if code != 0 || !strings.Contains(out, "seeded the 39 sample jobs") {
		t.Fatalf("reset: code %d, out %q, err %q", code, out, errOut)
	}
}

func TestAccessErrorsAreOneActionableLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"access"}, 2, "--batch-date is required"},
		{[]string{"access", "--batch-date", "2026-05-13", "--window", "2am"}, 2, "HH:MM"},
		{[]string{"access", "--batch-date", "2026-05-13", "--endpoint", "http://127.0.0.1:9"}, 1, "queuekit servers start dynamodb"},
		{[]string{"seed", "--pad-bytes", "-1"}, 2, "--pad-bytes"},
	} {
		_, errOut, code := runDynamoCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: code %d, stderr %q; want code %d and one line with %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

func TestAccessOnMissingTableSaysHowToSeed(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	_, errOut, code := runDynamoCLI(t, "access", "--batch-date", "2026-05-13", "--endpoint", ep, "--table", "no_such_table_here")
	if code != 1 || !strings.Contains(errOut, "seed --sample --table no_such_table_here --endpoint ") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

// A job whose item would pass DynamoDB's 400 KB item limit is refused as bad
// input (exit 2, one line naming the job, the attribute and its size) before
// the table is created: nothing is created, nothing written.
func TestSeedRefusesAnItemOver400KBBeforeCreatingTheTable(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	table := ddbtest.TableName(t)
	big := strings.Repeat("x", 2<<20) // a 2 MB attribute
	line := `{"batch_date":"2026-05-13","window_job_id":"01:00#JOB-20260513-001","job_id":"JOB-20260513-001","requested_window":"01:00",` +
		`"submitted_at":"2026-05-13T00:10:00Z","workload_class":"etl","estimated_runtime_minutes":30,"priority":2,"requires_exclusive_lock":false,` +
		`"status":"` + big + `"}` + "\n"
	file := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(file, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runDynamoCLI(t, "seed", "--file", file, "--endpoint", ep, "--table", table)
	if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line", code, out, errOut)
	}
	for _, w := range []string{"field status", fmt.Sprintf("= %d bytes", len("status")+len(big)), "over DynamoDB's item limit of 409600 bytes", "window_job_id=01:00#JOB-20260513-001"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr %q lacks %q", errOut, w)
		}
	}
	if exists(t, ep, table) {
		t.Errorf("table %s was created for input that cannot be written", table)
	}
}
