package fleetplan

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// The two ways to split the fleet's roles that CheckRoles judges.
const (
	// RolesOneTier is package fleet as it runs: every machine joins (a
	// MEMBER item), owns shards of the due index, claims their jobs and
	// writes their status.
	RolesOneTier = "one-tier"
	// RolesTwoTier is the design of docs/design/fleet.md: D dispatchers own
	// the due index's shards and send due jobs to an SQS queue; the
	// machines are executors that claim them and write their status.
	RolesTwoTier = "two-tier"
)

// CheckRoles checks a person's whole design for t's fleet: how the roles
// are split (RolesOneTier or RolesTwoTier), D dispatchers and K shards.
// For the two tiers it is CheckDesign. For the one tier every one of t's
// Executors owns shards (D is not used: the shard owners are the
// machines), on K shards, with t's assumptions: K within package fleet's
// MaxShards, at least one shard a shard owner, and every row of
// OneTier.Plan under its limit (the rule that names the binding key, the
// same rule CheckDesign ends with). Any other roles is one failed rule.
// It returns the deployment (the zero Deployment when K is out of range
// or the roles unknown) and every rule, passed or not. An error is an
// input or a limit no design serves.
func (t TwoTier) CheckRoles(p prices.Table, roles string, dispatchers, shards int) (Deployment, []Rule, error) {
	switch roles {
	case RolesTwoTier:
		return t.CheckDesign(p, dispatchers, shards)
	case RolesOneTier:
	default:
		return Deployment{}, []Rule{{"a split of the roles: " + RolesOneTier + " or " + RolesTwoTier, false, fmt.Sprintf("%q", roles),
			fmt.Sprintf("%q: every machine owns shards and runs jobs; %q: a few dispatchers own the shards, the machines run the jobs", RolesOneTier, RolesTwoTier)}}, nil
	}
	if err := checkInputs(t.Executors, t.JobsPerDay); err != nil {
		return Deployment{}, nil, err
	}
	rules := []Rule{
		{"at most " + gi(fleet.MaxShards) + " shards (package fleet)", shards >= 1 && shards <= fleet.MaxShards, "K = " + gi(shards),
			"K is between 1 and package fleet's most"},
		{"at least one shard a shard owner, so that every machine polls some", shards >= t.Executors,
			fmt.Sprintf("K = %s for %s shard owners (every machine, in the one tier)", gi(shards), gi(t.Executors)),
			"a machine without a shard finds no work of its own: count the shard owners"},
	}
	if shards < 1 || shards > fleet.MaxShards {
		return Deployment{}, rules, nil
	}
	dep, err := OneTier{Workers: t.Executors, JobsPerDay: t.JobsPerDay, Shards: shards, Assumptions: t.Assumptions}.Plan(p)
	if err != nil {
		return Deployment{}, rules, err
	}
	rules = append(rules, limitsRule(dep, "in the one tier every machine reads all K shard items and renews its MEMBER item each ShardLease/4: a key whose load grows with the machines outgrows one partition"))
	return dep, rules, nil
}
