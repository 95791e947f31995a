package fleetlab_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/lab/fleetlab"
)

// The exercise with the split of the roles: the one tier at seed 003's size
// fails on paper whatever K (its limits rule names pk = SHARD, the key that
// binds) and runs nothing; an unknown split is one failed rule; the two
// tiers with 3 and 14 pass every rule and run through the layer,
// throttling nothing once settled (as TestCheckFleetDesignWrongAndRight).
func TestCheckFleetRolesWrongAndRight(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddbtest.Endpoint(t))
	ctx := context.Background()
	for _, c := range []struct {
		roles string
		d, k  int
	}{{fleetplan.RolesOneTier, 0, 1000}, {fleetplan.RolesOneTier, 3, 14}, {"", 3, 14}, {"two tiers", 3, 14}} {
		got, err := fleetlab.CheckFleetRoles(ctx, c.roles, c.d, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if got.OK() || got.RulesOK || got.Ran || got.Roles != c.roles {
			t.Errorf("%q, D = %d, K = %d: ok %v, rules ok %v, ran %v, roles %q; want a failed rule and no run", c.roles, c.d, c.k, got.OK(), got.RulesOK, got.Ran, got.Roles)
		}
		if c.roles == fleetplan.RolesOneTier {
			last := got.Rules[len(got.Rules)-1]
			if last.OK || !strings.HasPrefix(last.Detail, "pk = SHARD reads ") {
				t.Errorf("one tier, K = %d: the limits rule %+v, want it failed, naming pk = SHARD", c.k, last)
			}
		}
	}
	got, err := fleetlab.CheckFleetRoles(ctx, fleetplan.RolesTwoTier, 3, 14)
	if err != nil {
		t.Fatal(err)
	}
	if !got.RulesOK || !got.Ran || !got.OK() {
		t.Errorf("two tiers, D = 3, K = 14: rules ok %v, ran %v, ok %v; want all", got.RulesOK, got.Ran, got.OK())
	}
}

// The cost cell's line: the one tier is priced on paper and said to be
// unbuyable (its dollars escaped), a design that fails its rules is sent
// back, and the two tiers' right answer is introduced by its D and K.
func TestDesignCostVerdict(t *testing.T) {
	one, err := fleetlab.Seed003OneTier()
	if err != nil {
		t.Fatal(err)
	}
	tt := fleetlab.Seed003Fleet()
	for _, c := range []struct {
		roles string
		d, k  int
		want  []string
	}{
		{fleetplan.RolesOneTier, 0, 1000, []string{"one tier on 1,000 shards", "\\\\$17,025.71 a day", "jobs' own reads and writes are \\\\$631.25", "no price buys it"}},
		{fleetplan.RolesTwoTier, 2, 14, []string{"does not hold yet"}},
		{"", 3, 14, []string{"does not hold yet"}},
		{fleetplan.RolesTwoTier, 3, 14, []string{"two tiers with D = 3 and K = 14"}},
	} {
		mine, rules, err := tt.CheckRoles(capacity.Prices2026, c.roles, c.d, c.k)
		if err != nil {
			t.Fatal(err)
		}
		got := fleetlab.DesignCostVerdict(one, mine, rules)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q, %d and %d: %q lacks %q", c.roles, c.d, c.k, got, w)
			}
		}
	}
}
