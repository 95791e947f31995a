package fleetlab

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/limitslab"
)

// Seed003Fleet is seed 003's fleet as notebook 10 sizes it: 10,851
// executors (capacity.Seed003's machines) and 100 M jobs a day, on
// fleetplan's Seed003 assumptions.
func Seed003Fleet() fleetplan.TwoTier {
	return fleetplan.TwoTier{Executors: 10851, JobsPerDay: capacity.Seed003.JobsPerDay, Assumptions: fleetplan.Seed003}
}

// Seed003OneTier is package fleet's one-tier fleet at seed 003's size: every
// one of the 10,851 machines a worker and a shard owner, on the most shards
// package fleet allows (1,000), shard lease 6 s.
func Seed003OneTier() (fleetplan.Deployment, error) {
	t := Seed003Fleet()
	return fleetplan.OneTier{Workers: t.Executors, JobsPerDay: t.JobsPerDay, Shards: 1000, Assumptions: t.Assumptions}.Plan(capacity.Prices2026)
}

// bigInts are whole numbers of 4 digits or more in a sentence.
var bigInts = regexp.MustCompile(`\b\d{4,}\b`)

// grouped is text with its whole numbers' thousands grouped (fleetplan's
// item descriptions print counts bare).
func grouped(text string) string {
	return bigInts.ReplaceAllStringFunc(text, format.Group)
}

// KeyRows is a row per key class of d: the key, which items, read and write
// units a second, and each against one partition (3,000 and 1,000).
func KeyRows(d fleetplan.Deployment) [][]string {
	rows := make([][]string, 0, len(d.Keys))
	for _, k := range d.Keys {
		rows = append(rows, []string{k.Key, grouped(k.Items), format.Num(math.Round(10*k.ReadUnits) / 10), lab.Over(k.ReadUnits, fleetplan.PartitionReadUnits),
			format.Num(math.Round(10*k.WriteUnits) / 10), lab.Over(k.WriteUnits, fleetplan.PartitionWriteUnits)})
	}
	return rows
}

// TableRows is a row per table and index of d (one cell): read and write
// units a second against the per-table quota.
func TableRows(d fleetplan.Deployment) [][]string {
	rows := make([][]string, 0, len(d.Tables))
	for _, t := range d.Tables {
		rows = append(rows, []string{t.Name, format.Num(math.Round(10*t.ReadUnits) / 10), format.Num(math.Round(10*t.WriteUnits) / 10),
			lab.Over(math.Max(t.ReadUnits, t.WriteUnits), fleetplan.TableQuota)})
	}
	return rows
}

// ShowFleetRows shows d's key rows and table rows against AWS's limits.
func ShowFleetRows(d fleetplan.Deployment) {
	lab.ShowTable([]string{"partition key", "items", "read units/s", "x one partition (3,000)", "write units/s", "x one partition (1,000)"}, KeyRows(d))
	lab.ShowTable([]string{"table or index", "read units/s", "write units/s", "the larger x the quota (40,000)"}, TableRows(d))
}

// usd is dollars with cents and thousands grouped ("$16,394.01"); Markdown
// output escapes it (ShowTable, format.EscapeMarkdown).
func usd(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return "$" + format.Group(strconv.FormatFloat(v, 'f', 2, 64))
}

// CostRows is a row per design: the jobs' own DynamoDB cost, the control
// plane's, SQS, and the total, dollars a day on demand.
func CostRows(designs map[string]fleetplan.Deployment, order ...string) [][]string {
	rows := make([][]string, 0, len(order))
	for _, name := range order {
		c := designs[name].USDPerDay
		rows = append(rows, []string{name, usd(c.DynamoDBJobs), usd(c.DynamoDBControlPlane), usd(c.SQS), usd(c.Total)})
	}
	return rows
}

// CostHeaders are CostRows' headers.
var CostHeaders = []string{"design", "the jobs (DynamoDB)", "control plane (DynamoDB)", "SQS", "a day in all"}

// DesignCheck is the outcome of CheckFleetDesign: the rules, the run through
// the layer (when it ran), and the design's deployment.
type DesignCheck struct {
	Roles      string // the split of the roles: fleetplan.RolesOneTier or RolesTwoTier
	Deployment fleetplan.Deployment
	Rules      []fleetplan.Rule
	RulesOK    bool
	Ran        bool               // the control plane ran through the layer
	Run        ControlPlaneResult // that run
	Scale      float64            // its S
	Why        string             // why it did not run, when it did not
}

// OK is whether every rule held and the run (when it ran) throttled
// nothing once settled.
func (c DesignCheck) OK() bool { return c.RulesOK && (!c.Ran || c.Run.Settled == 0) }

// Laptop bounds: the largest dispatcher control plane CheckFleetDesign runs
// through the layer on a laptop (more is checked by the rules only).
const (
	MaxRunDispatchers = 16
	MaxRunShards      = 96
)

// CheckFleetDesign is CheckFleetRoles for the two tiers: a person's D
// dispatchers and K shards for seed 003's cell.
func CheckFleetDesign(ctx context.Context, dispatchers, shards int) (DesignCheck, error) {
	return CheckFleetRoles(ctx, fleetplan.RolesTwoTier, dispatchers, shards)
}

// CheckFleetRoles is notebook 10's exercise: a person's split of the roles
// (fleetplan.RolesOneTier: every machine owns shards; RolesTwoTier: D
// dispatchers own them), D and K for seed 003's fleet, checked against
// fleetplan.TwoTier.CheckRoles's rules (one self-check line each; the one
// tier's last names the key that binds). When they hold, the two tiers'
// size runs on a laptop, it runs as package fleet's shard protocol through a
// limits layer: the D dispatchers on K aged shard items, shard lease 2 s,
// started half a second apart, at the S that puts the busiest control-plane
// key at half a scaled partition (so the run has a margin of 2 on AWS's
// limits, scaled; S at least 1, at most 50). The run must throttle nothing
// once settled. An error is a server or a run that failed, not a wrong
// answer.
func CheckFleetRoles(ctx context.Context, roles string, dispatchers, shards int) (DesignCheck, error) {
	t := Seed003Fleet()
	dep, rules, err := t.CheckRoles(capacity.Prices2026, roles, dispatchers, shards)
	if err != nil {
		return DesignCheck{}, err
	}
	c := DesignCheck{Roles: roles, Deployment: dep, Rules: rules, RulesOK: true}
	for _, r := range rules {
		lab.Report(r.OK, r.Name, r.Detail, r.Hint)
		c.RulesOK = c.RulesOK && r.OK
	}
	switch {
	case !c.RulesOK:
		c.Why = "a rule does not hold"
		return c, nil
	case roles != fleetplan.RolesTwoTier:
		c.Why = fmt.Sprintf("the one tier of %s machines is more than a laptop runs; its rules are checked on paper", format.Int(t.Executors))
		return c, nil
	case dispatchers > MaxRunDispatchers || shards > MaxRunShards:
		c.Why = fmt.Sprintf("more than %d dispatchers or %d shards: too many to run on a laptop, checked by the rules only", MaxRunDispatchers, MaxRunShards)
		return c, nil
	}
	const lease = 2 * time.Second
	a := t.Assumptions
	a.ShardLease = lease
	model, err := fleetplan.OneTier{Workers: dispatchers, JobsPerDay: t.JobsPerDay, Shards: shards, Assumptions: a}.Plan(capacity.Prices2026)
	if err != nil {
		return c, err
	}
	busiest := 0.0
	for _, k := range model.Keys[:2] { // SHARD, MEMBER: the protocol's keys
		busiest = math.Max(busiest, math.Max(k.ReadUnits/fleetplan.PartitionReadUnits, k.WriteUnits/fleetplan.PartitionWriteUnits))
	}
	c.Scale = math.Max(1, math.Min(50, math.Floor(0.5/busiest)))
	s, err := limitslab.StartLimits(ctx, c.Scale)
	if err != nil {
		return c, err
	}
	defer s.Close()
	const stagger = 500 * time.Millisecond
	cp := ControlPlane{Name: fmt.Sprintf("your dispatchers, D = %d", dispatchers), Workers: dispatchers, Shards: shards, ShardLease: lease, Aged: true,
		Stagger: stagger, Run: time.Duration(dispatchers-1)*stagger + 3*lease + 6*time.Second}
	if c.Run, err = cp.Execute(ctx, s); err != nil {
		return c, err
	}
	c.Ran = true
	lab.Report(c.Run.Settled == 0, fmt.Sprintf("your dispatchers' control plane on the limits layer (S = %s, a partition: %s read and %s write units a second) throttles nothing once settled",
		format.Num(c.Scale), format.Num(fleetplan.PartitionReadUnits/c.Scale), format.Num(fleetplan.PartitionWriteUnits/c.Scale)),
		fmt.Sprintf("%s throttled in the last %s s", format.Int(c.Run.Settled), format.Num(math.Round(c.Run.SettledFor.Seconds()))),
		"a throttle once settled means a key's load is over its scaled partition: fewer dispatchers read the shard items less often")
	return c, nil
}

// ShowDesignCheck shows what the run through the layer counted per key, or
// why it did not run.
func ShowDesignCheck(c DesignCheck) {
	if !c.Ran {
		lab.Markdown("Not run on the limits layer: " + format.EscapeMarkdown(c.Why) + ".")
		return
	}
	ShowControlPlanes([]ControlPlaneResult{c.Run})
}

// ShowDesignCost is notebook 10's cost cell: a day of a person's design
// (roles, D and K for seed 003's fleet, as CheckFleetRoles takes them)
// beside the one tier's at seed 003's size, on demand at
// capacity.Prices2026, with the jobs' own share; or why it has no price.
func ShowDesignCost(roles string, dispatchers, shards int) error {
	mine, rules, err := Seed003Fleet().CheckRoles(capacity.Prices2026, roles, dispatchers, shards)
	if err != nil {
		return err
	}
	one, err := Seed003OneTier()
	if err != nil {
		return err
	}
	lab.Markdown(DesignCostVerdict(one, mine, rules))
	if mine.Design == fleetplan.RolesTwoTier && rulesHold(rules) {
		ShowFleetCosts(one, mine)
	}
	return nil
}

// rulesHold is whether every rule holds (and there is one).
func rulesHold(rules []fleetplan.Rule) bool {
	for _, r := range rules {
		if !r.OK {
			return false
		}
	}
	return len(rules) > 0
}

// DesignCostVerdict is the Markdown line above a design's day: nothing to
// add for a two-tier design whose rules hold (its table says it), else why
// the design has no price that buys it, with what it would cost on paper.
func DesignCostVerdict(one, mine fleetplan.Deployment, rules []fleetplan.Rule) string {
	switch {
	case mine.Design == fleetplan.RolesTwoTier && rulesHold(rules):
		return fmt.Sprintf("Your design, two tiers with D = %s and K = %s, beside the one tier at seed 003's size:", format.Int(mine.Dispatchers), format.Int(mine.Shards))
	case mine.Design == fleetplan.RolesOneTier:
		c := mine.USDPerDay
		return fmt.Sprintf("Your design is the one tier on %s shards. On paper it costs %s a day, of which the jobs' own reads and writes are %s; "+
			"but its keys are over their partitions (the exercise cell names the one that binds), so no price buys it: choose again in the exercise cell.",
			format.Int(mine.Shards), format.EscapeMarkdown(usd(c.Total)), format.EscapeMarkdown(usd(c.DynamoDBJobs)))
	default:
		return "Your design does not hold yet (the exercise cell says which rule): fix it there, then run this cell."
	}
}

// OneTierVerdict is the Markdown under the one-tier rows: how far its
// busiest keys and its table are over their limits, and what its control
// plane would cost a day beside the jobs.
func OneTierVerdict(d fleetplan.Deployment) string {
	if len(d.Keys) < 2 || len(d.Tables) < 1 {
		return "✗ no rows"
	}
	sh, mb, tb := d.Keys[0], d.Keys[1], d.Tables[0]
	return fmt.Sprintf("At %s workers on %s shards, pk = SHARD is read at **%s units a second, %s one partition's 3,000**, and pk = MEMBER written at %s, %s one partition's 1,000; "+
		"the table takes %s read units a second, %s its 40,000 quota. Priced on demand this control plane would cost %s a day beside the jobs' own %s, "+
		"but no price buys it: one key cannot take more than one partition's limit.",
		format.Int(d.Executors), format.Int(d.Shards), format.Num(math.Round(sh.ReadUnits)), lab.Over(sh.ReadUnits, fleetplan.PartitionReadUnits),
		format.Num(math.Round(mb.WriteUnits)), lab.Over(mb.WriteUnits, fleetplan.PartitionWriteUnits), format.Num(math.Round(tb.ReadUnits)),
		lab.Over(tb.ReadUnits, fleetplan.TableQuota), format.EscapeMarkdown(usd(d.USDPerDay.DynamoDBControlPlane)), format.EscapeMarkdown(usd(d.USDPerDay.DynamoDBJobs)))
}

// ShowFleetCosts shows a day of the one-tier fleet beside a two-tier
// design (zero when its rules do not hold), and a line: the share of the
// design's day that the jobs themselves cost.
func ShowFleetCosts(one, mine fleetplan.Deployment) {
	if mine.Dispatchers == 0 {
		lab.Markdown("Your design does not hold yet (the exercise cell says which rule): fix it there, then run this cell.")
		return
	}
	mineName := fmt.Sprintf("two tiers, D = %s, K = %s", format.Int(mine.Dispatchers), format.Int(mine.Shards))
	lab.ShowTable(CostHeaders, CostRows(map[string]fleetplan.Deployment{"one tier": one, mineName: mine}, "one tier", mineName))
	c := mine.USDPerDay
	lab.Markdown(fmt.Sprintf("Your design costs **%s a day**: the jobs' own DynamoDB reads and writes are %s of it, the control plane %s, SQS %s.",
		format.EscapeMarkdown(usd(c.Total)), format.Percent(c.DynamoDBJobs/c.Total), format.Percent(c.DynamoDBControlPlane/c.Total), format.Percent(c.SQS/c.Total)))
}
