package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleetplan"
)

// fleetCostJSON is `fleet cost --json`'s contract (issue 33): executors,
// dispatchers, shards, keys, tables, dollars_per_day; the rest are
// additions.
type fleetCostJSON struct {
	Executors     int                   `json:"executors"`
	Dispatchers   int                   `json:"dispatchers"`
	Shards        int                   `json:"shards"`
	Keys          []fleetplan.KeyRow    `json:"keys"`
	Tables        []fleetplan.TableRow  `json:"tables"`
	DollarsPerDay float64               `json:"dollars_per_day"`
	JobsPerDay    float64               `json:"jobs_per_day"`
	JobsPerSecond float64               `json:"jobs_per_second"`
	PeakFactor    float64               `json:"peak_factor"`
	PeakPerSecond float64               `json:"peak_jobs_per_second"`
	Cells         int                   `json:"cells"`
	Queues        int                   `json:"queues"`
	QueueRows     []fleetplan.QueueRow  `json:"queue_rows"`
	Cost          fleetplan.Cost        `json:"cost_per_day"`
	OneTier       fleetCostOneTierJSON  `json:"one_tier"`
	Assumptions   fleetCostAssumptions  `json:"assumptions"`
	PricesChecked string                `json:"prices_checked"`
	Takeover      fleetCostTakeoverJSON `json:"takeover_seconds"`
}

type fleetCostOneTierJSON struct {
	Workers       int                  `json:"workers"`
	Shards        int                  `json:"shards"`
	Keys          []fleetplan.KeyRow   `json:"keys"`
	Tables        []fleetplan.TableRow `json:"tables"`
	DollarsPerDay float64              `json:"dollars_per_day"`
	Violations    []string             `json:"violations"`
}

type fleetCostAssumptions struct {
	JobSeconds       float64 `json:"job_seconds"`
	SlotsPerExecutor int     `json:"slots_per_executor"`
	JobLeaseSeconds  float64 `json:"job_lease_seconds"`
	ShardLeaseSecs   float64 `json:"shard_lease_seconds"`
	HeartbeatsPerJob int     `json:"heartbeats_per_job"`
}

type fleetCostTakeoverJSON struct {
	Dispatcher  float64 `json:"dispatcher"`
	ExecutorJob float64 `json:"executor_job"`
}

func runFleetCost(_ context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("fleet cost")
	executors := fs.Int("executors", 0, "executors, N (required): machines that run the jobs, 32 slots each")
	jobs := fs.Float64("jobs-per-day", 0, "jobs submitted a day, J (required), e.g. 100000000")
	peak := fs.Float64("peak-factor", 1, "size every row at F times the mean rate (1: the mean, no headroom for a peak; 1 to 1,000)")
	asJSON := fs.Bool("json", false, `print {"executors", "dispatchers", "shards", "keys": [{"key", "read_units_per_second", "write_units_per_second", ...}], "tables": [{"name", "read_units_per_second", "write_units_per_second", ...}], "dollars_per_day", ...}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, req := range []string{"executors", "jobs-per-day"} {
		if !isSet(fs, req) {
			return usagef("--%s is required: e.g. queuekit fleet cost --executors 10851 --jobs-per-day 100000000", req)
		}
	}
	a := fleetplan.Seed003
	d, err := fleetplan.TwoTier{Executors: *executors, JobsPerDay: *jobs, PeakFactor: *peak, Assumptions: a}.Plan(capacity.Prices2026)
	var ie *fleetplan.InputError
	var le *fleetplan.LimitError
	switch {
	case errors.As(err, &ie):
		return usagef("--%s %s: %s", map[string]string{"executors": "executors", "jobs per day": "jobs-per-day", "peak factor": "peak-factor"}[ie.Field], ie.Value, ie.Want)
	case errors.As(err, &le):
		at := ""
		if *peak != 1 {
			at = " --peak-factor " + strconv.FormatFloat(*peak, 'f', -1, 64)
		}
		return usagef("--executors %d --jobs-per-day %s%s: no fleet here serves it: %w", *executors, strconv.FormatFloat(*jobs, 'f', -1, 64), at, err)
	case err != nil:
		return err
	}
	k := min(*executors, fleet.MaxShards)
	one, err := fleetplan.OneTier{Workers: *executors, JobsPerDay: *jobs, Shards: k, Assumptions: a}.Plan(capacity.Prices2026)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, fleetCostJSON{Executors: d.Executors, Dispatchers: d.Dispatchers, Shards: d.Shards,
			Keys: roundKeys(d.Keys), Tables: roundTables(d.Tables), DollarsPerDay: round(d.USDPerDay.Total, 2),
			JobsPerDay: d.JobsPerDay, JobsPerSecond: sig(d.JobsPerSecond), PeakFactor: d.PeakFactor, PeakPerSecond: sig(d.PeakJobsPerSecond), Cells: d.Cells, Queues: d.Queues, QueueRows: d.QueueRows,
			Cost: fleetplan.Cost{DynamoDBJobs: round(d.USDPerDay.DynamoDBJobs, 2), DynamoDBControlPlane: round(d.USDPerDay.DynamoDBControlPlane, 2),
				SQS: round(d.USDPerDay.SQS, 2), Total: round(d.USDPerDay.Total, 2)},
			OneTier: fleetCostOneTierJSON{Workers: one.Executors, Shards: one.Shards, Keys: roundKeys(one.Keys), Tables: roundTables(one.Tables),
				DollarsPerDay: round(one.USDPerDay.Total, 2), Violations: append([]string{}, one.Violations()...)},
			Assumptions: fleetCostAssumptions{JobSeconds: a.JobSeconds, SlotsPerExecutor: a.SlotsPerExecutor, JobLeaseSeconds: a.JobLease.Seconds(),
				ShardLeaseSecs: a.ShardLease.Seconds(), HeartbeatsPerJob: d.HeartbeatsPerJob},
			PricesChecked: capacity.Prices2026.Checked,
			Takeover:      fleetCostTakeoverJSON{Dispatcher: d.TakeoverDispatcher.Seconds(), ExecutorJob: d.TakeoverExecutorJob.Seconds()}})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if d.PeakFactor == 1 {
		fmt.Fprintf(tw, "Two-tier fleet for %d executors and %.0f jobs a day (%.1f a second, %.0f running at once), sized at the mean: no headroom for a peak (--peak-factor)\n",
			d.Executors, d.JobsPerDay, d.JobsPerSecond, d.RunningJobs)
	} else {
		fmt.Fprintf(tw, "Two-tier fleet for %d executors and %.0f jobs a day (%.1f a second on average), sized at %s x the mean: %.1f a second, %.0f running at once\n",
			d.Executors, d.JobsPerDay, d.JobsPerSecond, strconv.FormatFloat(d.PeakFactor, 'f', -1, 64), d.PeakJobsPerSecond, d.RunningJobs)
	}
	fmt.Fprintf(tw, "  cells (a table, its due index, an SQS standard queue)\t%d\n", d.Cells)
	fmt.Fprintf(tw, "  dispatchers\t%d (%d a cell)\n", d.Dispatchers, d.DispatchersPerCell)
	fmt.Fprintf(tw, "  shards of the due index\t%d (%d a cell)\n", d.Shards, d.ShardsPerCell)
	fmt.Fprintf(tw, "  queues\t%d\n", d.Queues)
	fmt.Fprintf(tw, "  a job\t%.0f s, lease %.0f s, heartbeats %d; %g table + %g index write units\n", a.JobSeconds, a.JobLease.Seconds(),
		d.HeartbeatsPerJob, a.TableWriteUnitsPerJob(), a.IndexWriteUnitsPerJob())
	fmt.Fprintf(tw, "  takeover\ta dead dispatcher's shards within %.1f s, a dead executor's job within %.0f s\n",
		d.TakeoverDispatcher.Seconds(), d.TakeoverExecutorJob.Seconds())
	_ = tw.Flush()
	fmt.Fprintln(stdout)
	printKeyRows(stdout, "Partition keys (one key of each class, the busiest; a partition serves 3,000 read and 1,000 write units a second)", d.Keys)
	printTableRows(stdout, "Tables and indexes (one cell; the default quota is 40,000 read and 40,000 write units a second)", d.Tables)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(stdout, "SQS (one queue a cell)")
	fmt.Fprintf(tw, "queue\tsends/s\treceives/s\tdeletes/s\tdepth reads/s\trequests/s\tin flight at most\theadroom to 120,000\n")
	for _, q := range d.QueueRows {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%s\n", q.Name, q.SendRequests, q.ReceiveRequests, q.DeleteRequests,
			q.DepthRequests, q.RequestsPerSecond, q.InFlightBound, headroom(q.InFlightHeadroom))
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "\nDollars a day (on demand, us-east-1, prices checked %s): %.2f = DynamoDB jobs %.2f + control plane %.2f + SQS %.2f\n\n",
		capacity.Prices2026.Checked, d.USDPerDay.Total, d.USDPerDay.DynamoDBJobs, d.USDPerDay.DynamoDBControlPlane, d.USDPerDay.SQS)
	printKeyRows(stdout, fmt.Sprintf("The one-tier fleet it replaces (every worker reads the shard items): %d workers, %d shards", one.Executors, one.Shards), one.Keys)
	printTableRows(stdout, "", one.Tables)
	fmt.Fprintf(stdout, "One tier: %.2f dollars a day", one.USDPerDay.Total)
	if v := one.Violations(); len(v) > 0 {
		fmt.Fprintf(stdout, "; over a limit:\n")
		for _, s := range v {
			fmt.Fprintf(stdout, "  %s\n", s)
		}
	} else {
		fmt.Fprintln(stdout, "; every row under its limit")
	}
	return nil
}

func printKeyRows(w io.Writer, title string, rows []fleetplan.KeyRow) {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "key\tread req/s\tread units/s\theadroom\twrite req/s\twrite units/s\theadroom\titems\n")
	for _, k := range rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%s\t%.1f\t%.1f\t%s\t%s\n", k.Key, k.ReadRequests, k.ReadUnits, headroom(k.ReadHeadroom),
			k.WriteRequests, k.WriteUnits, headroom(k.WriteHeadroom), k.Items)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}

func printTableRows(w io.Writer, title string, rows []fleetplan.TableRow) {
	if title != "" {
		fmt.Fprintln(w, title)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "table or index\tread units/s\theadroom\twrite units/s\theadroom\n")
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%.1f\t%s\n", t.Name, t.ReadUnits, headroom(t.ReadHeadroom), t.WriteUnits, headroom(t.WriteHeadroom))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
}

func roundKeys(rows []fleetplan.KeyRow) []fleetplan.KeyRow {
	out := make([]fleetplan.KeyRow, len(rows))
	for i, k := range rows {
		k.ReadRequests, k.WriteRequests = sig(k.ReadRequests), sig(k.WriteRequests)
		k.ReadUnits, k.WriteUnits = sig(k.ReadUnits), sig(k.WriteUnits)
		k.ReadHeadroom, k.WriteHeadroom = round(k.ReadHeadroom, 4), round(k.WriteHeadroom, 4)
		out[i] = k
	}
	return out
}

func roundTables(rows []fleetplan.TableRow) []fleetplan.TableRow {
	out := make([]fleetplan.TableRow, len(rows))
	for i, t := range rows {
		t.ReadUnits, t.WriteUnits = sig(t.ReadUnits), sig(t.WriteUnits)
		t.ReadHeadroom, t.WriteHeadroom = round(t.ReadHeadroom, 4), round(t.WriteHeadroom, 4)
		out[i] = t
	}
	return out
}

// headroom prints 1 − use/limit as a percentage, or how many times over
// the limit a row is.
func headroom(h float64) string {
	if h < 0 {
		return fmt.Sprintf("OVER %.1fx", 1-h)
	}
	return fmt.Sprintf("%.1f %%", 100*h)
}
