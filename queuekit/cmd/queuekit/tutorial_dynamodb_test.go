package main

import (
	"encoding/json"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// tutorial --source dynamodb reads the nights with Query from a real
// DynamoDB Local and must report exactly what the embedded data gives.
func TestTutorialFromDynamoDBMatchesLocal(t *testing.T) {
	endpoint := ddbtest.Endpoint(t)
	table := ddbtest.TableName(t)
	if _, errOut, code := runCLI(t, "seed", "--sample", "--endpoint", endpoint, "--table", table); code != 0 {
		t.Fatalf("seed: exit %d: %s", code, errOut)
	}
	local, _, code := runCLI(t, "tutorial", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	remote, errOut, code := runCLI(t, "tutorial", "--source", "dynamodb", "--endpoint", endpoint, "--table", table, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var a, b []map[string]any
	if err := json.Unmarshal([]byte(local), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(remote), &b); err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("%d local and %d dynamodb scenarios, want 2 each", len(a), len(b))
	}
	for i := range a {
		for _, k := range []string{"batch_date", "jobs", "average_wait_minutes", "p95_wait_minutes", "average_queue_length", "queue_drained_minute", "rho"} {
			if a[i][k] != b[i][k] {
				t.Errorf("scenario %d %s: local %v, dynamodb %v", i, k, a[i][k], b[i][k])
			}
		}
	}
}
