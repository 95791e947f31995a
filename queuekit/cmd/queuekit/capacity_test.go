package main

import (
	"encoding/json"
	"strings"
	"testing"
)

var seedArgs = []string{"capacity", "--jobs-per-day", "100000000", "--job-minutes", "5", "--threads-per-machine", "32",
	"--job-memory-mb", "50", "--machine-memory-gb", "16"}

// The defaults (peak factor 1, utilisation 1) reproduce seed 003's plain
// arithmetic, corrected: λ = 10⁸/86,400 = 1,157.4074/s; L = λ·300 s =
// 347,222.22; threads ⌈L/32⌉ = 10,851; memory ⌈L/320⌉ = 1,086; DynamoDB 6 WCU
// and 0.64 RCU a job (queuekit/capacity's tests derive them): 6,944.44 WCU/s,
// 740.74 RCU/s, ⌈2 × 1,157.4/1,000⌉ = 3 shards, $375 + $8 = $383 a day on
// demand, 24 × (6,944.4 × 0.00065 + 740.74 × 0.00013) = $110.64 provisioned;
// SQS 3 requests a job: 3,472.22/s, 3 × 10⁸ × $0.40/10⁶ = $120 a day.
func TestCapacityJSONContract(t *testing.T) {
	out, errOut, code := runCLI(t, append(seedArgs, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		ArrivalsPerSecond float64 `json:"arrivals_per_second"`
		ConcurrentJobs    float64 `json:"concurrent_jobs"`
		Machines          struct {
			ByThreads int    `json:"by_threads"`
			ByMemory  int    `json:"by_memory"`
			Needed    int    `json:"needed"`
			Binding   string `json:"binding"`
		} `json:"machines"`
		DynamoDB map[string]float64 `json:"dynamodb"`
		SQS      map[string]float64 `json:"sqs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// Rates keep 8 significant digits, money cents.
	if got.ArrivalsPerSecond != 1157.4074 || got.ConcurrentJobs != 347222.22 {
		t.Errorf("arrivals %v, concurrent %v; want 1157.4074, 347222.22", got.ArrivalsPerSecond, got.ConcurrentJobs)
	}
	if m := got.Machines; m.ByThreads != 10851 || m.ByMemory != 1086 || m.Needed != 10851 || m.Binding != "threads" {
		t.Errorf("machines %+v; want 10851 by threads, 1086 by memory, 10851 needed, bound by threads", m)
	}
	for k, v := range map[string]float64{"write_units_per_second": 6944.4444, "read_units_per_second": 740.74074, "write_shards": 3,
		"on_demand_usd_per_day": 383, "provisioned_usd_per_day": 110.64} {
		if g, ok := got.DynamoDB[k]; !ok || g != v {
			t.Errorf("dynamodb.%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range map[string]float64{"requests_per_second": 3472.2222, "usd_per_day": 120} {
		if g, ok := got.SQS[k]; !ok || g != v {
			t.Errorf("sqs.%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

func TestCapacityPeakAndBatching(t *testing.T) {
	out, errOut, code := runCLI(t, append(seedArgs, "--peak-factor", "2", "--target-utilization", "0.8", "--sqs-batch", "10", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// ⌈2 × 347,222.2 / (32 × 0.8)⌉ = 27,127 machines; SQS batched: 0.3 a job,
	// $12 a day; requests at the peak 0.3 × 2,314.8 = 694.44/s.
	if n := got["machines"].(map[string]any)["needed"]; n != 27127.0 {
		t.Errorf("machines needed %v, want 27127", n)
	}
	sqs := got["sqs"].(map[string]any)
	if sqs["usd_per_day"] != 12.0 || sqs["requests_per_second"] != 694.44444 {
		t.Errorf("sqs %v, want $12/day and 694.44 requests/s", sqs)
	}
}

// One job a day: rates of about 10⁻⁵ per second stay visible (1/86,400 =
// 1.1574074e-05 jobs/s), never rounded to 0.
func TestCapacityTinyRatesKeepTheirDigits(t *testing.T) {
	out, errOut, code := runCLI(t, "capacity", "--jobs-per-day", "1", "--job-minutes", "5", "--threads-per-machine", "32",
		"--job-memory-mb", "50", "--machine-memory-gb", "16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got["arrivals_per_second"] != 1.1574074e-05 {
		t.Errorf("arrivals %v, want 1.1574074e-05", got["arrivals_per_second"])
	}
}

func TestCapacityText(t *testing.T) {
	out, errOut, code := runCLI(t, seedArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"10851, bound by threads", "$383.00 a day", "3 write shards"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestCapacityBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capacity", "--job-minutes", "5"}, "--jobs-per-day is required"},
		{append(append([]string{}, seedArgs...), "--target-utilization", "0"), "--target-utilization"},
		{append(append([]string{}, seedArgs...), "--peak-factor", "0.5"), "--peak-factor"},
		{append(append([]string{}, seedArgs...), "--sqs-batch", "11"), "SQS batch size"},
		{append(append([]string{}, seedArgs...), "--threads-per-machine", "abc"), "threads-per-machine"},
		{[]string{"capacity", "--jobs-per-day", "-1", "--job-minutes", "5", "--threads-per-machine", "32", "--job-memory-mb", "50", "--machine-memory-gb", "16"}, "jobs per day"},
	} {
		out, errOut, code := runCLI(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, one line naming %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
