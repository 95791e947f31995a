package fleetlab_test

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

// The one tier at seed 003's size, by hand (docs/design/fleet.md, fleetplan's
// tests): pk = SHARD is read at 10,851 · ⌈1,000 · 830 / 4,096⌉ = 203 units
// every 1.5 s = 1,468,502 units a second, 489.5x a partition; pk = MEMBER
// written 10,851 / 1.5 = 7,234 a second, 7.2x. The verdict prints them
// grouped, with no exponent, and escapes its dollars.
func TestOneTierVerdictAtSeed003(t *testing.T) {
	d, err := fleetlab.Seed003OneTier()
	if err != nil {
		t.Fatal(err)
	}
	v := fleetlab.OneTierVerdict(d)
	for _, want := range []string{"10,851 workers on 1,000 shards", "**1,468,502 units a second, 489.5x one partition's 3,000**", "7,234, 7.2x", "\\\\$"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q: %s", want, v)
		}
	}
	if strings.Contains(v, "e+") || strings.Contains(v, " $") {
		t.Errorf("verdict has an exponent or a bare dollar: %s", v)
	}
	rows := fleetlab.KeyRows(d)
	if rows[0][0] != "SHARD" || rows[0][3] != "489.5x" || rows[1][5] != "7.2x" {
		t.Errorf("key rows: %q", rows[:2])
	}
}

func TestNightAgainstCeiling(t *testing.T) {
	rows := []claimrate.Row{{Executor: claimrate.Night, Workers: 1, Median: 50}, {Executor: claimrate.Night, Workers: 4, Median: 25},
		{Executor: claimrate.FleetOwned, Workers: 1, Median: 300}}
	got := leaselab.NightAgainstCeiling(rows, 100)
	if !strings.Contains(got, "50.0% with 1 worker and 25.0% with 4 workers") || !strings.Contains(got, "**100 jobs a second**") {
		t.Errorf("got %s", got)
	}
	if got := leaselab.NightAgainstCeiling(rows, 0); !strings.HasPrefix(got, "✗") {
		t.Errorf("no ceiling: %s", got)
	}
}

// Seed 003's right answer costs the two-tier plan's day (docs/design/fleet.md:
// $738.66 = jobs 631.25 + control plane 4.46 + SQS 102.96).
func TestSeed003FleetCostOfTheRightAnswer(t *testing.T) {
	d, _, err := fleetlab.Seed003Fleet().CheckDesign(capacity.Prices2026, 3, 14)
	if err != nil {
		t.Fatal(err)
	}
	rows := fleetlab.CostRows(map[string]fleetplan.Deployment{"mine": d}, "mine")
	if got := strings.Join(rows[0], " | "); got != "mine | $631.25 | $4.46 | $102.96 | $738.66" {
		t.Errorf("cost row %q", got)
	}
}
