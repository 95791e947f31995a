package fleetplan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
)

// failedRules names the rules of a CheckRoles answer that did not hold.
func failedRules(t *testing.T, tt fleetplan.TwoTier, roles string, d, k int) ([]fleetplan.Rule, []string) {
	t.Helper()
	_, rules, err := tt.CheckRoles(capacity.Prices2026, roles, d, k)
	if err != nil {
		t.Fatal(err)
	}
	return rules, failedNames(rules)
}

// failedNames lists the names of the rules that did not hold, in order.
func failedNames(rules []fleetplan.Rule) []string {
	var out []string
	for _, r := range rules {
		if !r.OK {
			out = append(out, r.Name)
		}
	}
	return out
}

// CheckRoles at seed 003's size: the one tier fails whatever K, and the
// rule that names the binding key names pk = SHARD, by hand 10,851 ·
// ⌈1,000 · 830 / 4,096⌉ = 203 units · 4/6 s = 1,468,502 read units a
// second on 1,000 shards (489.5x a partition), and 10,851 · ⌈16 · 830 /
// 4,096⌉ = 4 · 4/6 = 28,936 on 16; the two tiers are CheckDesign's rules,
// so 3 and 14 pass; an unknown split is one failed rule.
func TestCheckRolesAtSeed003(t *testing.T) {
	tt := fleetplan.TwoTier{Executors: 10851, JobsPerDay: 1e8, Assumptions: fleetplan.Seed003}
	for _, k := range []int{1000, 16} {
		rules, failed := failedRules(t, tt, fleetplan.RolesOneTier, 0, k)
		if !strings.Contains(strings.Join(failed, "; "), "every key, table and index under its limit") ||
			!strings.Contains(strings.Join(failed, "; "), "at least one shard a shard owner") {
			t.Errorf("one tier, K = %d: failed %v, want the limits and one shard an owner among them", k, failed)
		}
		last := rules[len(rules)-1]
		want := map[int]string{1000: "pk = SHARD reads 1,468,50", 16: "pk = SHARD reads 28,93"}[k]
		if !strings.HasPrefix(last.Detail, want) {
			t.Errorf("one tier, K = %d: the limits rule says %q, want it to name the binding key: %q...", k, last.Detail, want)
		}
	}
	if _, failed := failedRules(t, tt, fleetplan.RolesOneTier, 3, 1001); len(failed) == 0 || !strings.Contains(failed[0], "at most 1,000 shards") {
		t.Errorf("one tier, K = 1,001: failed %v, want the shard bound first", failed)
	}
	for _, c := range []struct{ d, k int }{{3, 14}, {2, 14}, {10851, 1000}} {
		want, _, err := tt.CheckDesign(capacity.Prices2026, c.d, c.k)
		if err != nil {
			t.Fatal(err)
		}
		got, rules, err := tt.CheckRoles(capacity.Prices2026, fleetplan.RolesTwoTier, c.d, c.k)
		if err != nil {
			t.Fatal(err)
		}
		_, wantRules, _ := tt.CheckDesign(capacity.Prices2026, c.d, c.k)
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(rules) != fmt.Sprint(wantRules) {
			t.Errorf("two tiers, D = %d, K = %d: CheckRoles differs from CheckDesign", c.d, c.k)
		}
	}
	if _, failed := failedRules(t, tt, fleetplan.RolesTwoTier, 3, 14); len(failed) > 0 {
		t.Errorf("two tiers, 3 and 14: failed %v, want every rule to hold", failed)
	}
	for _, roles := range []string{"", "two tiers", "dispatchers"} {
		dep, rules, err := tt.CheckRoles(capacity.Prices2026, roles, 3, 14)
		if err != nil || len(rules) != 1 || rules[0].OK || dep.Design != "" {
			t.Errorf("roles %q: %v, %+v, design %q: want one failed rule and no deployment", roles, err, rules, dep.Design)
		}
	}
}

// The one tier is a fine design where its keys fit: 100 machines on 100
// shards, 100,000 jobs a day. pk = SHARD: 100 · ⌈100 · 830 / 4,096⌉ = 21
// units · 4/6 = 1,400 read units a second, under 3,000; pk = MEMBER: 100 ·
// 4/6 = 66.7 writes. So the check judges the limits, not the name.
func TestCheckRolesPassesASmallOneTier(t *testing.T) {
	tt := fleetplan.TwoTier{Executors: 100, JobsPerDay: 1e5, Assumptions: fleetplan.Seed003}
	rules, failed := failedRules(t, tt, fleetplan.RolesOneTier, 0, 100)
	if len(failed) > 0 {
		t.Fatalf("one tier, 100 machines on 100 shards: failed %v (%+v), want every rule to hold", failed, rules)
	}
	dep, _, err := tt.CheckRoles(capacity.Prices2026, fleetplan.RolesOneTier, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Keys[0].ReadUnits; got < 1399.9 || got > 1400.1 {
		t.Errorf("pk = SHARD: %.1f read units a second, want 1,400 (by hand)", got)
	}
}
