package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit/capacity"
)

// capacityJSON is the command's JSON contract (issue 9); "pool" and "prices"
// are additions.
type capacityJSON struct {
	ArrivalsPerSecond float64         `json:"arrivals_per_second"`
	ConcurrentJobs    float64         `json:"concurrent_jobs"`
	Machines          machinesJSON    `json:"machines"`
	DynamoDB          dynamoJSON      `json:"dynamodb"`
	SQS               sqsJSON         `json:"sqs"`
	Pool              *poolJSON       `json:"pool,omitempty"`
	Prices            capacity.Prices `json:"-"`
	PricesChecked     string          `json:"prices_checked"`
}

type machinesJSON struct {
	ByThreads int    `json:"by_threads"`
	ByMemory  int    `json:"by_memory"`
	Needed    int    `json:"needed"`
	Binding   string `json:"binding"`
}

type dynamoJSON struct {
	WriteUnitsPerSecond  float64 `json:"write_units_per_second"`
	ReadUnitsPerSecond   float64 `json:"read_units_per_second"`
	WriteShards          int     `json:"write_shards"`
	OnDemandUSDPerDay    float64 `json:"on_demand_usd_per_day"`
	ProvisionedUSDPerDay float64 `json:"provisioned_usd_per_day"`
}

type sqsJSON struct {
	RequestsPerSecond float64 `json:"requests_per_second"`
	USDPerDay         float64 `json:"usd_per_day"`
}

type poolJSON struct {
	Servers         int     `json:"servers"`
	Utilization     float64 `json:"utilization"`
	PWait           float64 `json:"p_wait"`
	MeanWaitSeconds float64 `json:"mean_wait_seconds"`
	P95WaitSeconds  float64 `json:"p95_wait_seconds"`
}

// round keeps d decimals (money: cents): JSON without 16-digit floats.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// sig keeps 8 significant digits, so a tiny rate is not rounded to 0.
func sig(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 8, 64), 64)
	if err != nil {
		return v
	}
	return r
}

func runCapacity(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("capacity")
	jobs := fs.Float64("jobs-per-day", 0, "jobs submitted per day (required), e.g. 100000000")
	minutes := fs.Float64("job-minutes", 0, "minutes one job holds a worker thread (required), e.g. 5")
	threads := fs.Int("threads-per-machine", 0, "worker threads per machine (required), e.g. 32")
	jobMB := fs.Float64("job-memory-mb", 0, "memory one job needs, MB (required), e.g. 50")
	machineGB := fs.Float64("machine-memory-gb", 0, "memory per machine, decimal GB: 1 GB = 1000 MB (required), e.g. 16")
	peak := fs.Float64("peak-factor", 1, "peak arrival rate over the average (1: flat)")
	util := fs.Float64("target-utilization", 1, "share of the slots and provisioned capacity the peak may use, in (0, 1]")
	sqsBatch := fs.Int("sqs-batch", 1, "messages per SQS send/receive/delete call, 1 to 10")
	itemKB := fs.Float64("item-kb", capacity.DefaultLifecycle.ItemKB, "size of a job item in DynamoDB, KB")
	heartbeats := fs.Int("heartbeats", capacity.DefaultLifecycle.Heartbeats, "heartbeat writes to DynamoDB per job (seed 003: 0, they go to a local DB)")
	pollBatch := fs.Int("poll-batch", capacity.DefaultLifecycle.PollBatch, "due jobs one poll Query of the index returns")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, name := range []string{"jobs-per-day", "job-minutes", "threads-per-machine", "job-memory-mb", "machine-memory-gb"} {
		if !isSet(fs, name) {
			return usagef("--%s is required (e.g. capacity --jobs-per-day 100000000 --job-minutes 5 --threads-per-machine 32 --job-memory-mb 50 --machine-memory-gb 16)", name)
		}
	}
	// In capacity.Fleet 0 means the default; on the command line it is an error.
	if !(*util > 0 && *util <= 1) {
		return usagef("--target-utilization %v: want a fraction in (0, 1], e.g. 0.8", *util)
	}
	if !(*peak >= 1) || math.IsInf(*peak, 0) {
		return usagef("--peak-factor %v: want a number >= 1 (1 means flat arrivals)", *peak)
	}
	f := capacity.Fleet{JobsPerDay: *jobs, JobMinutes: *minutes, ThreadsPerMachine: *threads, JobMemoryMB: *jobMB,
		MachineMemoryGB: *machineGB, PeakFactor: *peak, TargetUtilization: *util}
	l := capacity.DefaultLifecycle
	l.ItemKB, l.Heartbeats, l.PollBatch = *itemKB, *heartbeats, *pollBatch
	l.IndexItemKB = math.Min(l.IndexItemKB, l.ItemKB)
	plan, err := capacity.Size(f, l, capacity.SQS{BatchSize: *sqsBatch}, capacity.Prices2026)
	if err != nil {
		return badInput(err)
	}
	out := capacityJSON{
		ArrivalsPerSecond: sig(plan.Fleet.ArrivalsPerSecond),
		ConcurrentJobs:    sig(plan.Fleet.ConcurrentJobs),
		Machines: machinesJSON{ByThreads: plan.Fleet.MachinesByThreads, ByMemory: plan.Fleet.MachinesByMemory,
			Needed: plan.Fleet.Machines, Binding: plan.Fleet.Binding},
		DynamoDB: dynamoJSON{WriteUnitsPerSecond: sig(plan.Dynamo.WriteUnitsPerSecond), ReadUnitsPerSecond: sig(plan.Dynamo.ReadUnitsPerSecond),
			WriteShards: plan.Dynamo.WriteShards, OnDemandUSDPerDay: round(plan.Dynamo.OnDemandUSDPerDay, 2),
			ProvisionedUSDPerDay: round(plan.Dynamo.ProvisionedUSDPerDay, 2)},
		SQS:           sqsJSON{RequestsPerSecond: sig(plan.SQS.RequestsPerSecond), USDPerDay: round(plan.SQS.USDPerDay, 2)},
		PricesChecked: plan.Prices.Checked,
	}
	if p := plan.Pool; p != nil {
		out.Pool = &poolJSON{Servers: p.Servers, Utilization: sig(p.Utilization), PWait: sig(p.PWait),
			MeanWaitSeconds: sig(p.MeanWaitSeconds), P95WaitSeconds: sig(p.P95WaitSeconds)}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fp := plan.Fleet
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Fleet for %.0f jobs/day of %g min (peak factor %g, target utilisation %g)\n", *jobs, *minutes, f.PeakFactor, f.TargetUtilization)
	fmt.Fprintf(tw, "  arrivals\t%.5g jobs/s at the peak (%.5g on average)\n", fp.ArrivalsPerSecond, fp.AverageArrivalsPerSecond)
	fmt.Fprintf(tw, "  concurrent jobs (Little: λW)\t%.0f\n", fp.ConcurrentJobs)
	fmt.Fprintf(tw, "  machines by threads\t%d (%d jobs a machine)\n", fp.MachinesByThreads, fp.SlotsByThreads)
	fmt.Fprintf(tw, "  machines by memory\t%d (%d jobs a machine)\n", fp.MachinesByMemory, fp.SlotsByMemory)
	fmt.Fprintf(tw, "  machines needed\t%d, bound by %s\n", fp.Machines, fp.Binding)
	if p := plan.Pool; p != nil {
		fmt.Fprintf(tw, "  as one pool (Erlang C)\t%d slots at ρ = %.5f: P(wait) %.3f, mean wait %.1f s, p95 %.1f s\n",
			p.Servers, p.Utilization, p.PWait, p.MeanWaitSeconds, p.P95WaitSeconds)
	} else {
		fmt.Fprintf(tw, "  as one pool (Erlang C)\t%s\n", plan.Problem)
	}
	d := plan.Dynamo
	fmt.Fprintf(tw, "DynamoDB (%.2f WCU and %.2f RCU a job)\n", d.WriteUnitsPerJob, d.ReadUnitsPerJob)
	fmt.Fprintf(tw, "  write units/s\t%.0f (index %.0f: %d write shards)\n", d.WriteUnitsPerSecond, d.IndexWriteUnitsPerSecond, d.WriteShards)
	fmt.Fprintf(tw, "  read units/s\t%.0f\n", d.ReadUnitsPerSecond)
	fmt.Fprintf(tw, "  on demand\t$%.2f a day\n", d.OnDemandUSDPerDay)
	fmt.Fprintf(tw, "  provisioned\t$%.2f a day\n", d.ProvisionedUSDPerDay)
	fmt.Fprintf(tw, "SQS (%.2f requests a job)\n", plan.SQS.RequestsPerJob)
	fmt.Fprintf(tw, "  requests/s\t%.0f\n  cost\t$%.2f a day\n", plan.SQS.RequestsPerSecond, plan.SQS.USDPerDay)
	fmt.Fprintf(tw, "Prices: %s, checked %s\n", plan.Prices.Region, plan.Prices.Checked)
	return tw.Flush()
}
