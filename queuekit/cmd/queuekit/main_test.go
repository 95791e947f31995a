package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), code
}

// tutorial --json lists both reference scenarios with the hand-derived
// figures pinned in queuekit/sim's TestReferenceScenarios.
func TestTutorialJSON(t *testing.T) {
	out, errOut, code := runCLI(t, "tutorial", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not a JSON list: %v\n%s", err, out)
	}
	if len(got) != 2 {
		t.Fatalf("%d scenarios, want 2", len(got))
	}
	keys := []string{"batch_date", "jobs", "workers", "lambda_per_hour", "mu_per_hour", "rho", "average_wait_minutes",
		"p95_wait_minutes", "average_queue_length", "max_queue_length", "worker_utilization", "overflow_jobs",
		"overflow_fraction", "queue_drained_minute"}
	for _, s := range got {
		for _, k := range keys {
			if _, ok := s[k]; !ok {
				t.Errorf("scenario %v lacks key %q", s["batch_date"], k)
			}
		}
	}
	want := []map[string]float64{
		{"workers": 3, "jobs": 10, "average_wait_minutes": 29, "p95_wait_minutes": 50, "max_queue_length": 3, "overflow_jobs": 0, "queue_drained_minute": 160, "lambda_per_hour": 2.5},
		{"workers": 2, "jobs": 12, "average_wait_minutes": 2960.0 / 12, "p95_wait_minutes": 390, "max_queue_length": 10, "overflow_jobs": 9, "overflow_fraction": 0.75, "queue_drained_minute": 490, "worker_utilization": 1, "lambda_per_hour": 3},
	}
	for i, w := range want {
		for k, v := range w {
			if g, _ := got[i][k].(float64); g != v {
				t.Errorf("scenario %d %s = %v, want %v", i, k, got[i][k], v)
			}
		}
	}
	if got[0]["batch_date"] != "2026-05-13" || got[1]["batch_date"] != "2026-05-14" {
		t.Errorf("batch dates %v, %v", got[0]["batch_date"], got[1]["batch_date"])
	}
}

func TestTutorialTextCallsOutTheGap(t *testing.T) {
	out, _, code := runCLI(t, "tutorial")
	if code != 0 {
		t.Fatal(code)
	}
	for _, w := range []string{"Night 2026-05-13", "Night 2026-05-14", "29.00 min", "246.67 min", "Gap: M/M/c predicts", "no steady state"} {
		if !strings.Contains(out, w) {
			t.Errorf("tutorial output lacks %q", w)
		}
	}
}

func TestSimulateReplicationsJSONHasIntervals(t *testing.T) {
	out, errOut, code := runCLI(t, "simulate", "--batch-date", "2026-05-14", "--workers", "3", "--replications", "200", "--runtime-cv", "0.4", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := json.Unmarshal(got["p95_wait_minutes"], &m); err != nil {
		t.Fatalf("p95_wait_minutes: %v in %s", err, got["p95_wait_minutes"])
	}
	if _, ok := m["ci95_low"]; !ok || !(m["ci95_low"] <= m["mean"] && m["mean"] <= m["ci95_high"]) {
		t.Errorf("p95_wait_minutes = %s, want mean inside [ci95_low, ci95_high]", got["p95_wait_minutes"])
	}
	var p map[string]float64
	if err := json.Unmarshal(got["overflow_probability"], &p); err != nil {
		t.Fatalf("overflow_probability: %v in %s", err, got["overflow_probability"])
	}
	if _, ok := p["wilson95_high"]; !ok || p["estimate"] < 0 || p["estimate"] > 1 {
		t.Errorf("overflow_probability = %s", got["overflow_probability"])
	}
}

// The sample file's night 2026-05-13 on 3 workers waits 29 minutes on
// average: the reference scenario derived by hand from SPEC.md's rules
// (queuekit/sim's TestReferenceScenarios), exactly, not 29.9 or 290.
func TestSimulateFromFile(t *testing.T) {
	out, errOut, code := runCLI(t, "simulate", "--file", "../../../data/sample_nights.jsonl", "--batch-date", "2026-05-13", "--workers", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Wait *float64 `json:"average_wait_minutes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v in %s", err, out)
	}
	if got.Wait == nil || *got.Wait != 29 {
		t.Errorf("average_wait_minutes = %v, want exactly 29 (hand-derived); output %s", got.Wait, out)
	}
}

func TestMMCJSON(t *testing.T) {
	out, _, code := runCLI(t, "mmc", "--lambda", "2", "--mu", "1", "--workers", "3", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	var got struct {
		Analytic  map[string]float64 `json:"analytic"`
		Simulated map[string]float64 `json:"simulated"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if v := got.Analytic["wait_p95"]; v < 2.184802 || v > 2.184803 {
		t.Errorf("wait_p95 = %v, want 2.184802", v)
	}
	if got.Simulated != nil {
		t.Error("simulated present without --simulate")
	}
	out, _, code = runCLI(t, "mmc", "--lambda", "2", "--mu", "1", "--workers", "3", "--simulate", "--customers", "200000", "--json")
	if code != 0 || !strings.Contains(out, `"wq_ci95_low"`) || !strings.Contains(out, `"events_per_second"`) {
		t.Errorf("exit %d, output %s", code, out)
	}
}

// Bad flags or input: one line on stderr, exit status 2, nothing on stdout.
func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"batch_date":"2026-05-13"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"nosuch"},
		{"tutorial", "--workers", "0"},
		{"tutorial", "--batch-date", "13/05/2026"},
		{"tutorial", "--source", "csv"},
		{"simulate", "--batch-date", "2026-05-13"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "x"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "2", "--policy", "lifo"},
		{"simulate", "--file", bad, "--workers", "2"},
		{"simulate", "--batch-date", "2026-06-01", "--workers", "2"},
		{"mmc", "--lambda", "3", "--mu", "1", "--workers", "3"},
		{"mmc", "--lambda", "-1", "--mu", "1", "--workers", "3"},
		{"mmc", "stray"},
		{"mmc", "--lambda", "2", "--mu", "1"},
		{"mmc", "--lambda", "abc", "--mu", "1", "--workers", "3"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "3", "--replications", "10", "--runtime-cv", "NaN"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "3", "--runtime-cv", "1e300"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "3", "--arrival-jitter", "-Inf"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "3", "--arrival-jitter", "1e300"},
		{"simulate", "--batch-date", "2026-05-13", "--workers", "1000000000"},
		{"tutorial", "--workers", "1000000000"},
		{"mmc", "--lambda", "2", "--mu", "1", "--workers", "3", "--simulate", "--customers", "1000000000000"},
		{"access", "--batch-date", "2026-05-13", "--segments", "100000000"},
		{"seed", "--generate-nights", "1000000"},
		{"seed", "--sample", "--start", "garbage"},
		{"seed", "--writers", "100000"},
		{"capacity", "--jobs-per-day", "1e308", "--job-minutes", "5", "--threads-per-machine", "32", "--job-memory-mb", "50", "--machine-memory-gb", "16"},
		{"capacity", "--jobs-per-day", "1e8", "--job-minutes", "5", "--threads-per-machine", "32", "--job-memory-mb", "50", "--machine-memory-gb", "16", "--heartbeats", "1000000000"},
	} {
		out, errOut, code := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut)
		}
		if strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || errOut == "" {
			t.Errorf("%v: stderr %q, want exactly one line", args, errOut)
		}
		if strings.Count(errOut, "queuekit "+args[0]+":") > 1 || strings.Contains(errOut, ": "+args[0]+": ") {
			t.Errorf("%v: prefix repeated in %q", args, errOut)
		}
		if strings.Contains(errOut, "goroutine") || out != "" {
			t.Errorf("%v: stack trace or stdout output: %q %q", args, errOut, out)
		}
	}
	if _, errOut, code := runCLI(t, "mmc", "--lambda", "2", "--mu", "1"); code != 2 || !strings.Contains(errOut, "--workers is required") {
		t.Errorf("missing --workers: exit %d, %q; want 2 and a line saying it is required", code, errOut)
	}
	_, errOut, code := runCLI(t, "simulate", "--file", bad, "--workers", "2")
	if code != 2 || !strings.Contains(errOut, bad+":1") || !strings.Contains(errOut, "missing attribute") {
		t.Errorf("bad file: exit %d, error %q; want 2, naming %s:1 and the missing attributes", code, errOut, bad)
	}
}

// --window restricts the night and says so, in text and JSON.
func TestTutorialWindowIsShown(t *testing.T) {
	out, _, code := runCLI(t, "tutorial", "--batch-date", "2026-05-13", "--window", "02:00")
	if code != 0 || !strings.Contains(out, "only the jobs requested for 02:00") || !strings.Contains(out, "3 workers") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	out, errOut, code := runCLI(t, "tutorial", "--batch-date", "2026-05-13", "--window", "02:00", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"requested_window": "02:00"`) || !strings.Contains(out, `"jobs": 3`) {
		t.Errorf("JSON lacks the window filter:\n%s", out)
	}
}

// --policy takes barrier, easy and conservative, with backfill kept as an
// alias of easy; the JSON names the policy that ran.
func TestSimulatePolicyNamesAndAlias(t *testing.T) {
	for in, want := range map[string]string{"barrier": "barrier", "easy": "easy", "backfill": "easy", "conservative": "conservative"} {
		out, errOut, code := runCLI(t, "simulate", "--batch-date", "2026-05-13", "--workers", "3", "--policy", in, "--json")
		if code != 0 {
			t.Fatalf("--policy %s: exit %d: %s", in, code, errOut)
		}
		var got struct {
			Policy string `json:"policy"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("--policy %s: %v in %s", in, err, out)
		}
		if got.Policy != want {
			t.Errorf("--policy %s: JSON policy %q, want %q", in, got.Policy, want)
		}
	}
}
