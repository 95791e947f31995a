package fleetplan_test

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
)

// CheckDesign at seed 003 (1 cell, 1,157.4 jobs a second): by hand, the
// dispatchers must hand off 1,157.4 jobs a second at 400 each (500 at
// 80 %): D ≥ 3; K ≥ 4·D = 12, and ≥ 1,157.4 · 6 / 500 = 13.9, so K ≥ 14
// (Plan's 3 and 14). Every wrong answer fails a rule, each its own; a
// D sized by the machines (10,851) fails the rows' limits: 10,851 ·
// ⌈14 · 830 / 4,096⌉ · 4/6 = 21,702 read units a second on pk = SHARD.
func TestCheckDesignAtSeed003(t *testing.T) {
	tt := fleetplan.TwoTier{Executors: 10851, JobsPerDay: 1e8, Assumptions: fleetplan.Seed003}
	failed := func(d, k int) []string {
		t.Helper()
		_, rules, err := tt.CheckDesign(capacity.Prices2026, d, k)
		if err != nil {
			t.Fatal(err)
		}
		return failedNames(rules)
	}
	for _, c := range []struct {
		d, k int
		want string // words of a failed rule; "" for a design that passes
	}{
		{0, 0, "at least 2 dispatchers"},
		{2, 14, "hand off"},
		{3, 12, "index writes"},
		{3, 11, "shards a dispatcher"},
		{10851, 1000, "shards a dispatcher"},
		{3, 1001, "at most 1,000 shards"},
		{3, 14, ""},
		{4, 16, ""},
		{6, 40, ""},
	} {
		got := failed(c.d, c.k)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("D = %d, K = %d: failed %v, want every rule to hold", c.d, c.k, got)
		case c.want != "" && !strings.Contains(strings.Join(got, "; "), c.want):
			t.Errorf("D = %d, K = %d: failed %v, want a rule with %q among them", c.d, c.k, got, c.want)
		}
	}
	// A D sized by the machines, with shards enough for it: only the rows fail.
	dep, rules, err := tt.CheckDesign(capacity.Prices2026, 250, 1000)
	if err != nil {
		t.Fatal(err)
	}
	last := rules[len(rules)-1]
	if last.OK || !strings.Contains(last.Detail, "pk = SHARD reads 33,833.3") {
		t.Errorf("D = 250, K = 1,000: the rows' rule %+v, want it failed on pk = SHARD (250 · 203 · 4/6 = 33,833 read units a second)", last)
	}
	if r := dep.Keys[0].ReadUnits; r < 33833 || r > 33834 {
		t.Errorf("D = 250, K = 1,000: pk = SHARD reads %.1f units a second, want 33,833.3 by hand", r)
	}
	// The right answer's deployment is Plan's.
	plan, err := tt.Plan(capacity.Prices2026)
	if err != nil {
		t.Fatal(err)
	}
	dep, _, err = tt.CheckDesign(capacity.Prices2026, 3, 14)
	if err != nil {
		t.Fatal(err)
	}
	if dep.USDPerDay != plan.USDPerDay || dep.Keys[0] != plan.Keys[0] {
		t.Errorf("D = 3, K = 14: %+v, want Plan's %+v", dep.USDPerDay, plan.USDPerDay)
	}
}
