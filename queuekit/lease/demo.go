package lease

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// ClaimShown is one claim transaction as a notebook shows it.
type ClaimShown struct {
	Worker        string
	JobID         string
	Won           bool
	JobCondition  string   // the condition on the job item, with names and values filled in
	PoolCondition string   // the condition on the pool item
	Reasons       []string // a lost transaction's reason per item (pool, job, attempt); "None" where that item was fine
}

// RaceForOneJob shows claims as they are made: it prepares the night, starts
// its clock with no worker processes, and lets each named worker decide from
// the same read of the pool (one version) and send its claim transaction at
// the same moment. Every worker picks the same job (the head of the queue),
// so exactly one can win; the others' transactions are cancelled, a lost
// race. The night is marked DONE afterwards, so a run can follow at once.
func (e *Executor) RaceForOneJob(ctx context.Context, n queuekit.Night, cfg Config, workers []string) ([]ClaimShown, error) {
	cfg = cfg.WithDefaults()
	runID, err := e.Prepare(ctx, n, cfg)
	if err != nil {
		return nil, err
	}
	date := n.BatchDate
	defer func() {
		if expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolDone))).Build(); err == nil {
			_ = e.update(context.WithoutCancel(ctx), date, skPool, expr)
		}
	}()
	now := e.now().UnixMilli()
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name("state"), expression.Value(poolRunning)).
		Set(expression.Name("t0_ms"), expression.Value(now))).Build()
	if err != nil {
		return nil, fmt.Errorf("build start: %w", err)
	}
	if err := e.update(ctx, date, skPool, expr); err != nil {
		return nil, fmt.Errorf("start night %s: %w", date, err)
	}
	p, _, err := e.readPool(ctx, date)
	if err != nil {
		return nil, err
	}
	shown := make([]ClaimShown, len(workers))
	ins := make([]*dynamodb.TransactWriteItemsInput, len(workers))
	for i, name := range workers {
		w := &worker{e: e, date: date, run: runID, name: name, p: p}
		picks, err := w.plan(ctx, p, w.minuteAt(now), 1)
		if err != nil {
			return nil, err
		}
		if len(picks) == 0 {
			return nil, fmt.Errorf("night %s: nothing is due at minute 0", date)
		}
		pk := picks[0]
		in, _, err := w.claimInput(p, picks, now)
		if err != nil {
			return nil, fmt.Errorf("build claim of %s: %w", pk.job.JobID, err)
		}
		ins[i] = in
		pu, ju := in.TransactItems[0].Update, in.TransactItems[1].Update
		shown[i] = ClaimShown{Worker: name, JobID: pk.job.JobID,
			JobCondition:  readable(aws.ToString(ju.ConditionExpression), ju.ExpressionAttributeNames, ju.ExpressionAttributeValues),
			PoolCondition: readable(aws.ToString(pu.ConditionExpression), pu.ExpressionAttributeNames, pu.ExpressionAttributeValues)}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, len(workers))
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = catalog.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.TransactWriteItemsOutput, error) {
				return e.db.Client().TransactWriteItems(ctx, ins[i])
			})
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		switch {
		case err == nil:
			shown[i].Won = true
		case lostRace(err):
			shown[i].Reasons = reasons(err)
		default:
			return nil, fmt.Errorf("claim by %s: %w", workers[i], err)
		}
	}
	return shown, nil
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

// reasons lists a cancelled transaction's per-item reasons.
func reasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return []string{err.Error()}
	}
	out := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		out[i] = aws.ToString(r.Code)
	}
	return out
}

// Difference is one metric, forecast beside realised.
type Difference struct {
	Metric             string
	Forecast, Realised float64
}

// Compare lists the metrics of simulate --json that a run realises, the
// simulator's forecast beside what happened.
func Compare(forecast, realised sim.Metrics) []Difference {
	return []Difference{
		{"average wait (min)", forecast.AverageWait, realised.AverageWait},
		{"p95 wait (min)", forecast.P95Wait, realised.P95Wait},
		{"average queue length", forecast.AverageQueueLength, realised.AverageQueueLength},
		{"max queue length", float64(forecast.MaxQueueLength), float64(realised.MaxQueueLength)},
		{"worker utilization", forecast.Utilization, realised.Utilization},
		{"overflow jobs", float64(forecast.OverflowJobs), float64(realised.OverflowJobs)},
		{"queue drained (minute)", forecast.DrainedMinute, realised.DrainedMinute},
	}
}

// Lag is how late each job's first real start came after its simulated
// start, in job-minutes: the mean and the largest over the night's jobs.
type Lag struct{ Mean, Max float64 }

// StartLag compares a run's first starts with the forecast's.
func StartLag(rep Report) Lag {
	first := map[string]float64{}
	for _, e := range rep.Schedule {
		if s, ok := first[e.JobID]; !ok || e.Start < s {
			first[e.JobID] = e.Start
		}
	}
	var l Lag
	n := 0
	for _, s := range rep.Forecast.Schedule {
		r, ok := first[s.ID]
		if !ok {
			continue
		}
		d := r - s.Start
		l.Mean += d
		l.Max = max(l.Max, d)
		n++
	}
	if n > 0 {
		l.Mean /= float64(n)
	}
	return l
}

// Attempts lists one job's attempts from a report, in order.
func (r Report) Attempts(jobID string) []Entry {
	var out []Entry
	for _, e := range r.Schedule {
		if e.JobID == jobID {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Attempt < out[b].Attempt })
	return out
}
