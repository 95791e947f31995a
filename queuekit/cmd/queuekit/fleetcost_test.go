package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// `fleet cost --json` at seed 003: the keys issue 33 fixes, with the values
// derived by hand in fleetplan's TestTwoTierAtSeed003ByHand (3 dispatchers,
// 14 shards; SHARD 6 read and 9.33 write units a second; the table 4,641
// write units; $738.66 a day), and the one-tier rows beside them.
func TestFleetCostJSONContract(t *testing.T) {
	out, errOut, code := runCLI(t, "fleet", "cost", "--executors", "10851", "--jobs-per-day", "100000000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Executors   *int `json:"executors"`
		Dispatchers *int `json:"dispatchers"`
		Shards      *int `json:"shards"`
		Keys        []struct {
			Key        *string  `json:"key"`
			ReadUnits  *float64 `json:"read_units_per_second"`
			WriteUnits *float64 `json:"write_units_per_second"`
		} `json:"keys"`
		Tables []struct {
			Name       *string  `json:"name"`
			ReadUnits  *float64 `json:"read_units_per_second"`
			WriteUnits *float64 `json:"write_units_per_second"`
		} `json:"tables"`
		DollarsPerDay *float64 `json:"dollars_per_day"`
		OneTier       struct {
			Keys []struct {
				Key       string  `json:"key"`
				ReadUnits float64 `json:"read_units_per_second"`
			} `json:"keys"`
			Violations []string `json:"violations"`
		} `json:"one_tier"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Executors == nil || got.Dispatchers == nil || got.Shards == nil || got.DollarsPerDay == nil {
		t.Fatalf("executors, dispatchers, shards or dollars_per_day missing:\n%s", out)
	}
	if *got.Executors != 10851 || *got.Dispatchers != 3 || *got.Shards != 14 || *got.DollarsPerDay != 738.66 {
		t.Errorf("executors %d, dispatchers %d, shards %d, $%v a day; want 10851, 3, 14, $738.66",
			*got.Executors, *got.Dispatchers, *got.Shards, *got.DollarsPerDay)
	}
	if len(got.Keys) != 5 || len(got.Tables) != 2 {
		t.Fatalf("%d keys (SHARD, MEMBER, a due key, USER#, DLQ#), %d tables; want 5 and 2:\n%s", len(got.Keys), len(got.Tables), out)
	}
	for _, k := range got.Keys {
		if k.Key == nil || k.ReadUnits == nil || k.WriteUnits == nil {
			t.Fatalf("a key row without key, read_units_per_second or write_units_per_second:\n%s", out)
		}
		if *k.ReadUnits >= 3000 || *k.WriteUnits >= 1000 {
			t.Errorf("key %s: %v read, %v write units a second: over a partition", *k.Key, *k.ReadUnits, *k.WriteUnits)
		}
	}
	if k := got.Keys[0]; *k.Key != "SHARD" || *k.ReadUnits != 6 || *k.WriteUnits != 9.3333333 {
		t.Errorf("first key %s %v/%v, want SHARD 6 read, 9.3333333 write units a second", *k.Key, *k.ReadUnits, *k.WriteUnits)
	}
	if tb := got.Tables[0]; tb.Name == nil || *tb.WriteUnits != 4640.963 {
		t.Errorf("table row %+v, want 4640.963 write units a second", tb)
	}
	if len(got.OneTier.Keys) == 0 || got.OneTier.Keys[0].ReadUnits != 1468502 || len(got.OneTier.Violations) != 3 {
		t.Errorf("one tier: keys %+v, violations %q; want SHARD at 1,468,502 read units a second and 3 violations", got.OneTier.Keys, got.OneTier.Violations)
	}
}

// The text names the deployment, every key and table with its headroom,
// the dollars a day, and the one tier's rows over their limits.
func TestFleetCostTextShowsRowsAndHeadroom(t *testing.T) {
	out, errOut, code := runCLI(t, "fleet", "cost", "--executors", "10851", "--jobs-per-day", "100000000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"dispatchers", "3 (3 a cell)", "14 (14 a cell)", "SHARD", "MEMBER", "claim_shard = k (due index)",
		"USER#<user_id>", "due index (one cell)", "50.4 %", "Dollars a day", "738.66", "OVER 489.5x", "OVER 7.2x"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Bad input, and a count no design here serves: exit 2, one line, naming
// the flag or the limit that binds.
func TestFleetCostBadInputExitsTwoWithOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--executors", "0", "--jobs-per-day", "1e8"}, "--executors 0"},
		{[]string{"--executors", "-5", "--jobs-per-day", "1e8"}, "--executors -5"},
		{[]string{"--executors", "ten", "--jobs-per-day", "1e8"}, `invalid value "ten" for flag -executors`},
		{[]string{"--executors", "10851", "--jobs-per-day", "0"}, "--jobs-per-day 0"},
		{[]string{"--executors", "10851", "--jobs-per-day", "-1"}, "--jobs-per-day -1"},
		{[]string{"--executors", "10851", "--jobs-per-day", "lots"}, `invalid value "lots" for flag -jobs-per-day`},
		{[]string{"--executors", "10851", "--jobs-per-day", "NaN"}, "--jobs-per-day NaN"},
		{[]string{"--executors", "10851"}, "--jobs-per-day is required"},
		{[]string{"--executors", "10850", "--jobs-per-day", "100000000"}, "binding limit: executor slots"},
		{[]string{"--executors", "100000000", "--jobs-per-day", "1e13"}, "binding limit: tables per region"},
		{[]string{"--executors", "21702", "--jobs-per-day", "1e8", "--peak-factor", "0.5"}, "--peak-factor 0.5: want a number from 1 (the mean) to 1000"},
		{[]string{"--executors", "21702", "--jobs-per-day", "1e8", "--peak-factor", "NaN"}, "--peak-factor NaN"},
		// Enough executors at the mean, not at twice it (fleetplan's
		// TestTwoTierAtTwiceTheMeanByHand derives 21,702).
		{[]string{"--executors", "10851", "--jobs-per-day", "1e8", "--peak-factor", "2"}, "--peak-factor 2: no fleet here serves it: binding limit: executor slots: 694445 needed, 347232 available; 2314.8 jobs a second (2 x the mean)"},
		// 1e12 jobs of 300 s need 108,506,945 executors of 32 slots: beyond
		// the command's own 10^8, so it advises splitting, not a number it refuses.
		{[]string{"--executors", "10", "--jobs-per-day", "1e12"}, "--jobs-per-day 1000000000000: no fleet here serves it: binding limit: executor slots: 3472222223 needed, 320 available; " +
			"11574074.1 jobs a second of 300 s each keep 3472222223 running at once (Little's law), 10 executors x 32 slots hold 320: that is 108506945 executors, more than the 100000000 this planner sizes: split the jobs over at least 2 fleets"},
	} {
		out, errOut, code := runCLI(t, append([]string{"fleet", "cost"}, c.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stdout %q)", c.args, code, out)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q (%d lines), want one line with %q", c.args, errOut, lines, c.want)
		}
		if !strings.HasPrefix(errOut, "queuekit fleet cost: ") {
			t.Errorf("%v: stderr %q: want it to begin \"queuekit fleet cost: \"", c.args, errOut)
		}
	}
}

// --peak-factor F sizes the rows at F times the mean and says so; the JSON
// keeps its contract's keys and adds peak_factor and peak_jobs_per_second.
// At F = 2, seed 003 needs 6 dispatchers and 28 shards (by hand in
// fleetplan's TestTwoTierAtTwiceTheMeanByHand).
func TestFleetCostAtAPeak(t *testing.T) {
	out, errOut, code := runCLI(t, "fleet", "cost", "--executors", "21702", "--jobs-per-day", "100000000", "--peak-factor", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Executors, Dispatchers, Shards int
		PeakFactor                     float64 `json:"peak_factor"`
		PeakPerSecond                  float64 `json:"peak_jobs_per_second"`
		PerSecond                      float64 `json:"jobs_per_second"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Executors != 21702 || got.Dispatchers != 6 || got.Shards != 28 || got.PeakFactor != 2 || got.PeakPerSecond != 2314.8148 || got.PerSecond != 1157.4074 {
		t.Errorf("%+v; want 21702 executors, 6 dispatchers, 28 shards, peak 2: 2314.8148 jobs/s of a mean 1157.4074", got)
	}
	out, _, code = runCLI(t, "fleet", "cost", "--executors", "21702", "--jobs-per-day", "100000000", "--peak-factor", "2")
	if code != 0 || !strings.Contains(out, "sized at 2 x the mean: 2314.8 a second, 694444 running at once") {
		t.Errorf("exit %d, text lacks the peak's line:\n%s", code, out)
	}
	out, _, _ = runCLI(t, "fleet", "cost", "--executors", "10851", "--jobs-per-day", "100000000")
	if !strings.Contains(out, "sized at the mean: no headroom for a peak (--peak-factor)") {
		t.Errorf("the default says nothing of the peak:\n%s", out)
	}
}
