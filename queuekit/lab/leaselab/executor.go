package leaselab

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/internal/fault"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/nightlab"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// Executor opens the night executor on the workshop's job catalog (its
// state lives in db_batch_window_requests_exec); the endpoint comes from
// AWS_ENDPOINT_URL_DYNAMODB, opts can name another table or endpoint.
func Executor(ctx context.Context, opts ...catalog.Option) (*lease.Executor, error) {
	cat, err := catalog.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return lease.New(cat)
}

// RunNight runs a night for real, read from the catalog with Query, with
// all cfg.Workers slots in this process and a live progress bar of the
// jobs ended, and returns what happened. work nil is the scaled sleep.
func RunNight(ctx context.Context, date string, cfg lease.Config, work lease.WorkFunc, opts ...catalog.Option) (lease.Report, error) {
	ex, err := Executor(ctx, opts...)
	if err != nil {
		return lease.Report{}, err
	}
	n, _, err := nightlab.Night(ctx, date, opts...)
	if err != nil {
		return lease.Report{}, err
	}
	bar := lab.NewProgress(date+": jobs ended", len(n.Jobs))
	defer bar.Done()
	return ex.Run(ctx, n, lease.RunConfig{Config: cfg, Slots: cfg.Workers, Work: work, Progress: bar.Report})
}

// NightReport reads the last run of a night back from DynamoDB with one
// Query, beside the simulator's forecast for a pool of workers.
func NightReport(ctx context.Context, date string, workers int, opts ...catalog.Option) (lease.Report, error) {
	ex, err := Executor(ctx, opts...)
	if err != nil {
		return lease.Report{}, err
	}
	n, _, err := nightlab.Night(ctx, date, opts...)
	if err != nil {
		return lease.Report{}, err
	}
	return ex.Report(ctx, n, workers)
}

// CompareHeaders and CompareRows are a run's forecast beside its realised
// metrics (lease.Compare), a row per metric: forecast, realised, difference.
var CompareHeaders = []string{"metric", "forecast (sim)", "realised", "difference"}

// CompareRows returns the rows of ShowCompare's table.
func CompareRows(rep lease.Report) [][]string {
	var rows [][]string
	for _, d := range lease.Compare(rep.Forecast.Metrics, rep.Realised.Metrics) {
		rows = append(rows, []string{d.Metric, format.Num(d.Forecast), format.Num(d.Realised), format.Num(d.Realised - d.Forecast)})
	}
	return rows
}

// ShowCompare shows the forecast beside the realised metrics of a run.
func ShowCompare(rep lease.Report) { lab.ShowTable(CompareHeaders, CompareRows(rep)) }

// FailJobs wraps work (nil: the scaled sleep) so that the listed jobs fail
// on every attempt: a retriable error after their runtime.
func FailJobs(ids []string, work lease.WorkFunc) lease.WorkFunc { return fault.FailJobs(ids, work) }

// ClaimShown is one claim transaction as notebook 05 shows it.
type ClaimShown struct {
	Worker        string
	JobID         string
	Won           bool
	JobCondition  string   // the condition on the job item, with names and values filled in
	PoolCondition string   // the condition on the pool item
	Reasons       []string // a lost transaction's reason per item (pool, job, attempt); "None" where that item was fine
}

// RaceForOneJob shows claims as they are made: each named worker builds
// its claim from the same read of the pool (lease.Executor.StageClaims, so
// every one picks the head of the queue) and all are sent at the same
// moment. Exactly one can win; the others' transactions are cancelled, a
// lost race. The night is marked DONE afterwards, so a run can follow.
func RaceForOneJob(ctx context.Context, ex *lease.Executor, n queuekit.Night, cfg lease.Config, workers []string) ([]ClaimShown, error) {
	claims, end, err := ex.StageClaims(ctx, n, cfg, workers)
	if err != nil {
		return nil, err
	}
	defer end()
	shown := make([]ClaimShown, len(claims))
	errs := make([]error, len(claims))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range claims {
		pu, ju := c.Input.TransactItems[0].Update, c.Input.TransactItems[1].Update
		shown[i] = ClaimShown{Worker: c.Worker, JobID: c.JobID,
			JobCondition:  readable(deref(ju.ConditionExpression), ju.ExpressionAttributeNames, ju.ExpressionAttributeValues),
			PoolCondition: readable(deref(pu.ConditionExpression), pu.ExpressionAttributeNames, pu.ExpressionAttributeValues)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			shown[i].Won, shown[i].Reasons, errs[i] = ex.SendClaim(ctx, c)
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return shown, nil
}

// ClaimHeaders and ClaimRows are ShowClaims's table: who, which job, won
// or why not, and the two conditions.
var ClaimHeaders = []string{"worker", "job", "outcome", "condition on the job", "condition on the pool"}

// ClaimRows returns the rows of ShowClaims's table.
func ClaimRows(shown []ClaimShown) [][]string {
	var rows [][]string
	for _, s := range shown {
		outcome := "won"
		if !s.Won {
			outcome = "lost: " + strings.Join(s.Reasons, ", ")
		}
		rows = append(rows, []string{s.Worker, s.JobID, outcome, s.JobCondition, s.PoolCondition})
	}
	return rows
}

// ShowClaims shows claim transactions: who, which job, won or why not.
func ShowClaims(shown []ClaimShown) {
	rows := ClaimRows(shown)
	short := make([][]string, len(rows))
	for i, r := range rows {
		short[i] = r[:3] // the conditions go under the table: in a column they squeeze the job ids onto several lines
	}
	lab.ShowTable(ClaimHeaders[:3], short)
	lab.Markdown(ClaimConditions(shown))
}

// ClaimConditions lists the conditions each claim sent, as code, once for
// all the workers that sent the same ones.
func ClaimConditions(shown []ClaimShown) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, c := range shown {
		key := c.JobCondition + "\x00" + c.PoolCondition
		if seen[key] {
			continue
		}
		seen[key] = true
		var who []string
		for _, d := range shown {
			if d.JobCondition == c.JobCondition && d.PoolCondition == c.PoolCondition {
				who = append(who, d.Worker)
			}
		}
		fmt.Fprintf(&b, "- conditions of %s's claim: on the job `%s`; on the pool `%s`\n", strings.Join(who, " and "), c.JobCondition, c.PoolCondition)
	}
	return b.String()
}

// Winners counts the claims that won.
func Winners(shown []ClaimShown) int {
	won := 0
	for _, s := range shown {
		if s.Won {
			won++
		}
	}
	return won
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var placeholder = regexp.MustCompile(`[#:][0-9]+`)

// readable fills an expression's placeholders (#0, :1) with the names and
// values they stand for.
func readable(expr string, names map[string]string, values map[string]types.AttributeValue) string {
	return placeholder.ReplaceAllStringFunc(expr, func(p string) string {
		if p[0] == '#' {
			if n, ok := names[p]; ok {
				return n
			}
			return p
		}
		switch v := values[p].(type) {
		case *types.AttributeValueMemberS:
			return strconv.Quote(v.Value)
		case *types.AttributeValueMemberN:
			return v.Value
		case *types.AttributeValueMemberBOOL:
			return strconv.FormatBool(v.Value)
		}
		return p
	})
}

// MustExecutor is Executor for a notebook cell: it opens the executor on
// the catalog of AWS_ENDPOINT_URL_DYNAMODB and stops the cell with Stop's
// one-line error if that fails.
func MustExecutor() *lease.Executor {
	ex, err := Executor(context.Background())
	lab.Stop(err)
	return ex
}

// AttemptHeaders are the columns of AttemptRows.
var AttemptHeaders = []string{"job", "attempt", "worker", "claimed (minute)", "released (minute)", "outcome"}

// AttemptRows is a row per attempt of every job that the worker named
// `worker` held at least once (all attempts of those jobs, in order), so a
// table shows what happened to the jobs of a worker that died.
func AttemptRows(rep lease.Report, worker string) [][]string {
	var rows [][]string
	seen := map[string]bool{}
	for _, e := range rep.Schedule {
		if e.Worker != worker || seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		for _, a := range rep.Attempts(e.ID) {
			rows = append(rows, []string{a.ID, format.Int(a.Attempt), a.Worker, format.Num(a.Start), format.Num(a.Finish), string(a.Outcome)})
		}
	}
	return rows
}

// ShowWorkerAttempts shows AttemptRows as a table.
func ShowWorkerAttempts(rep lease.Report, worker string) {
	lab.ShowTable(AttemptHeaders, AttemptRows(rep, worker))
}

// RunSummary is notebook 05's line under a night run that took wall: the
// jobs that ended in SUCCESS, the wall time, the attempts, the claims won
// and lost, the retries (the jobs' own failures) and the lost attempts
// (leases that expired).
func RunSummary(rep lease.Report, wall time.Duration) string {
	return fmt.Sprintf("%d jobs ended in %.1f s of wall time; attempts %d; claims won %d, lost %d; retries %d; lost attempts %d",
		rep.Statuses[queuekit.StatusSuccess], wall.Seconds(), len(rep.Schedule), rep.Won, rep.Lost, rep.Retries, rep.LostAttempts)
}

// PoolBoundSummary is notebook 10's sentence on the pool's ceiling: one
// conditional write's round trip rtt, the writes a second it allows (1 /
// rtt), and the jobs a second a pool reaches taking slots jobs a claim,
// bound (claimrate.PoolBound's (1/r) / (1 + 1/k)).
func PoolBoundSummary(rtt time.Duration, slots int, bound float64) string {
	return fmt.Sprintf("one conditional write: **%s ms** round trip, so 1 / r = %s writes a second; "+
		"the pool's ceiling with k = %d: %s / (1 + 1/%d) = **%s jobs a second**",
		format.Num(rtt.Seconds()*1000), format.Num(1/rtt.Seconds()), slots, format.Num(1/rtt.Seconds()), slots, format.Num(bound))
}
