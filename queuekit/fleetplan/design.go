package fleetplan

import (
	"fmt"
	"math"
	"strings"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// Rule is one sizing rule a design of D dispatchers and K shards a cell
// must meet: its name, whether it holds, what the design gives against what
// the rule asks, and a hint that says how to meet it without the answer.
type Rule struct {
	Name   string
	OK     bool
	Detail string
	Hint   string
}

// CheckDesign checks a person's choice of dispatchers and shards per cell
// against the rules Plan sizes by (the cells are Plan's): D at least
// MinDispatchers and enough to hand off the cell's jobs at the quota
// utilisation, K at least ShardsPerDispatcher·D, each shard key's index
// writes and polls within KeyUtilization of a partition, K within package
// fleet's MaxShards, and every row of the resulting deployment under its
// limit (a D sized by N, not by throughput, fails there: every dispatcher
// reads all K shard items). It returns the deployment at that D and K (its
// rows and cost; the zero Deployment when D or K is below 1 or K above
// MaxShards) and every rule, passed or not. An error is an input or a limit
// no design serves (Plan's).
func (t TwoTier) CheckDesign(p prices.Table, dispatchers, shards int) (Deployment, []Rule, error) {
	plan, err := t.Plan(p)
	if err != nil {
		return Deployment{}, nil, err
	}
	a := t.Assumptions
	lc := t.JobsPerDay / capacity.SecondsPerDay / float64(plan.Cells)
	d, k := float64(dispatchers), float64(shards)
	keyWrites := 0.0
	if shards > 0 {
		keyWrites = lc * a.IndexWriteUnitsPerJob() / k
	}
	pollJobs := k * float64(a.PollPage) / a.DispatchPoll.Seconds() * a.KeyUtilization
	rules := []Rule{
		{"at least " + fmt.Sprint(a.MinDispatchers) + " dispatchers, so that a dead one's shards have a taker",
			dispatchers >= a.MinDispatchers, "D = " + gi(dispatchers),
			"one dispatcher is a single point: its death stops every hand-off until its shards are taken"},
		{"the dispatchers hand off the cell's jobs", d*a.DispatcherJobsPerSecond*a.QuotaUtilization >= lc-1e-9,
			fmt.Sprintf("%s × %s jobs a second at %s %% = %s, the cell needs %s", gi(dispatchers), num(a.DispatcherJobsPerSecond),
				num(100*a.QuotaUtilization), f1(d*a.DispatcherJobsPerSecond*a.QuotaUtilization), f1(lc)),
			"jobs a second over what one dispatcher hands off at the utilisation, rounded up"},
		{fmt.Sprintf("at least %d shards a dispatcher, so that a dead one's share spreads", a.ShardsPerDispatcher),
			shards >= a.ShardsPerDispatcher*dispatchers, fmt.Sprintf("K = %s for D = %s", gi(shards), gi(dispatchers)),
			"a dead dispatcher's shards go to the others one by one: give each several"},
		{"each shard key's index writes within " + num(100*a.KeyUtilization) + " % of a partition",
			shards > 0 && keyWrites <= PartitionWriteUnits*a.KeyUtilization+1e-9,
			fmt.Sprintf("%s index write units a second a key, the key may take %s", f1(keyWrites), num(PartitionWriteUnits*a.KeyUtilization)),
			fmt.Sprintf("a job writes %s index units (put, a moved key at the claim and at each heartbeat, a delete); the cell's index writes over half a partition, rounded up", num(a.IndexWriteUnitsPerJob()))},
		{"the shards' polls keep up with the jobs", pollJobs >= lc-1e-9,
			fmt.Sprintf("%s shards × a page of %s every %s s at %s %% = %s jobs a second", gi(shards), gi(a.PollPage), f1(a.DispatchPoll.Seconds()), num(100*a.KeyUtilization), f1(pollJobs)),
			"a shard's owner reads one page a poll"},
		{"at most " + gi(fleet.MaxShards) + " shards (package fleet)", shards <= fleet.MaxShards, "K = " + gi(shards),
			"more shards than needed cost every dispatcher's look at the shard items"},
	}
	if dispatchers < 1 || shards < 1 || shards > fleet.MaxShards {
		return Deployment{}, rules, nil
	}
	dep, err := t.deploy(p, plan.Cells, dispatchers, shards)
	if err != nil {
		return Deployment{}, rules, err
	}
	rules = append(rules, limitsRule(dep, "every dispatcher reads all K shard items each ShardLease/4: D is sized by the jobs, not by the machines"))
	return dep, rules, nil
}

// f1 is v with one decimal and its thousands grouped (1,157.4), no exponent.
func f1(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	s := fmt.Sprintf("%.1f", math.Abs(v))
	whole, frac := s[:len(s)-2], s[len(s)-2:]
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if v < 0 {
		whole = "-" + whole
	}
	return whole + frac
}

// gi is n with its thousands grouped (10,851).
func gi(n int) string { return strings.TrimSuffix(f1(float64(n)), ".0") }

// firstOver names the first row of d over its limit, numbers grouped.
func firstOver(d Deployment) string {
	for _, k := range d.Keys {
		if k.ReadUnits > PartitionReadUnits {
			return fmt.Sprintf("pk = %s reads %s units a second, %sx one partition's 3,000", k.Key, f1(k.ReadUnits), f1(k.ReadUnits/PartitionReadUnits))
		}
		if k.WriteUnits > PartitionWriteUnits {
			return fmt.Sprintf("pk = %s takes %s write units a second, %sx one partition's 1,000", k.Key, f1(k.WriteUnits), f1(k.WriteUnits/PartitionWriteUnits))
		}
	}
	for _, t := range d.Tables {
		if u := math.Max(t.ReadUnits, t.WriteUnits); u > TableQuota {
			return fmt.Sprintf("%s: %s units a second, %sx the 40,000 quota", t.Name, f1(u), f1(u/TableQuota))
		}
	}
	for _, q := range d.QueueRows {
		if q.InFlightBound > SQSInFlightLimit {
			return fmt.Sprintf("%s: up to %s messages in flight, over SQS's 120,000", q.Name, f1(q.InFlightBound))
		}
	}
	return ""
}

// limitsRule is the rule every design shares: each partition key, table and
// index of dep under its limit; hint says why a failing design failed.
func limitsRule(dep Deployment, hint string) Rule {
	detail := "every key under a partition's 3,000 read and 1,000 write units, every table and index under the quota"
	ok := len(dep.Violations()) == 0
	if !ok {
		detail = firstOver(dep)
	}
	return Rule{"every key, table and index under its limit", ok, detail, hint}
}
