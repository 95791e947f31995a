package lease_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// One `queuekit worker` process whose clock is 3 s ahead, or 3 s behind,
// shares a run with the coordinator's own slots (clock right): a correct
// night, so `queuekit run` exits 0. Before issue 34 the run built one
// schedule from both hosts' timestamps and condemned such nights ("12
// slots busy, outside 0..c = 6"): its verdict now compares no times of
// two hosts but within the stated skew bound (lease.DefaultMaxSkew), and
// checks holders and capacity on fence tokens and pool versions. The
// night read back keeps every promise (Verify), and a double holder or an
// over-capacity claim planted in the table afterwards is still caught.
func TestRunWithOneWorkerSkewed3sExitsZero(t *testing.T) {
	t.Parallel()
	bin := buildCLI(t)
	for _, off := range []time.Duration{3 * time.Second, -3 * time.Second} {
		t.Run(off.String(), func(t *testing.T) {
			date := "2027-08-05"
			if off < 0 {
				date = "2027-08-06"
			}
			n := skewNight(t, date, 40)
			ex, cat := setup(t, n.Jobs)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			run := exec.Command(bin, "run", "--batch-date", n.BatchDate, "--workers", "6", "--slots", "3", "--minute-ms", "50",
				"--endpoint", cat.Endpoint(), "--table", cat.Table())
			var out, errb bytes.Buffer
			run.Stdout, run.Stderr = &out, &errb
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if run.ProcessState == nil {
					_ = run.Process.Kill()
					_ = run.Wait()
				}
			})
			w := &workerProc{}
			w.cmd = exec.Command(bin, "worker", "--batch-date", n.BatchDate, "--endpoint", cat.Endpoint(), "--table", cat.Table(),
				"--json", "--slots", "3", "--name", "skewed", "--wait", "1m")
			w.cmd.Env = append(w.cmd.Environ(), lease.EnvClockOffset+"="+off.String())
			w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
			if err := w.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if w.cmd.ProcessState == nil {
					_ = w.cmd.Process.Kill()
					_ = w.cmd.Wait()
				}
			})
			err := run.Wait()
			if werr := w.cmd.Wait(); werr != nil {
				t.Errorf("worker at %s: %v\n%s", off, werr, w.err.String())
			}
			if err != nil {
				t.Fatalf("queuekit run with a worker at %s: %v; want exit 0 on a correct night\n%s", off, err, errb.String())
			}
			rep, err := ex.Report(ctx, n, 6)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Statuses[queuekit.StatusSuccess] != len(n.Jobs) {
				t.Fatalf("statuses %v; want %d SUCCESS", rep.Statuses, len(n.Jobs))
			}
			byWorker := map[string]int{}
			for _, e := range rep.Schedule {
				byWorker[e.Worker]++
			}
			if byWorker["skewed"] == 0 || byWorker["skewed"] == len(rep.Schedule) {
				t.Fatalf("attempts by worker %v: the skewed worker and the coordinator's slots must both have run jobs", byWorker)
			}
			if err := rep.Verify(n); err != nil {
				t.Fatalf("Verify on the night read back: %v", err)
			}
			// The same times on one clock (no skew allowed) would be
			// condemned: what the old verdict did.
			strict := rep
			strict.MaxSkew = 0
			serr := strict.Verify(n)
			t.Logf("worker at %s: %d of %d attempts; the same night judged on one clock: %v", off, byWorker["skewed"], len(rep.Schedule), serr)
			checkPlantedBreaksAreCaught(t, ex, cat, n, 6)
		})
	}
}

// skewNight is catalogNight with every tenth job exclusive (all c slots)
// and ten-minute jobs (half a second each): an exclusive attempt recorded by a skewed host
// seems, on one clock, to overlap the others' attempts.
func skewNight(t *testing.T, date string, n int) queuekit.Night {
	t.Helper()
	var jobs []queuekit.Job
	for i := range n {
		id := fmt.Sprintf("JOB-%s-%03d", date[:4]+date[5:7]+date[8:], i+1)
		jobs = append(jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: queuekit.SortKey("01:00", id),
			RequestedWindow: "01:00", SubmittedAt: date + "T00:00:00Z", WorkloadClass: queuekit.ClassETL,
			RuntimeMinutes: 10, Priority: i % 4, Status: "queued", RequiresExclusiveLock: i%10 == 5})
	}
	night, err := queuekit.NewNight(date, queuekit.DefaultWindow, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return night
}

// checkPlantedBreaksAreCaught plants, in the execution table of a correct
// finished night, what a broken night would have left, one at a time, and
// checks that Verify on the Report read back names each:
//
//   - a double holder: a job's attempt 1 recorded LEASE_EXPIRED and a second
//     attempt claimed at attempt 1's own fence token (before its end moved
//     the token on), with the same times: the outcome chain looks right, the
//     overlap is shorter than the skew bound, only the tokens tell;
//   - an ended job still held by a worker (a second holder on the JOB item);
//   - two claims that made one pool version (two decisions on one pool
//     state), and a claim that left c+1 slots busy.
func checkPlantedBreaksAreCaught(t *testing.T, ex *lease.Executor, cat *catalog.Catalog, n queuekit.Night, c int) {
	t.Helper()
	ctx := context.Background()
	db := cat.Client()
	table := aws.String(ex.Table())
	k := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"batch_date": &types.AttributeValueMemberS{Value: n.BatchDate}, "sk": &types.AttributeValueMemberS{Value: sk}}
	}
	get := func(sk string) map[string]types.AttributeValue {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: k(sk), ConsistentRead: aws.Bool(true)})
		if err != nil || out.Item == nil {
			t.Fatalf("read %s: %v (item %v)", sk, err, out)
		}
		return out.Item
	}
	put := func(item map[string]types.AttributeValue) {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item}); err != nil {
			t.Fatalf("plant: %v", err)
		}
	}
	del := func(sk string) {
		if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: k(sk)}); err != nil {
			t.Fatalf("undo plant: %v", err)
		}
	}
	verify := func(what string, want string) {
		t.Helper()
		rep, err := ex.Report(ctx, n, c)
		if err != nil {
			t.Fatal(err)
		}
		err = rep.Verify(n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s planted: Verify says %v; want an error naming %q", what, err, want)
		}
		t.Logf("%s planted: caught: %s", what, want)
	}
	clone := func(m map[string]types.AttributeValue) map[string]types.AttributeValue {
		o := make(map[string]types.AttributeValue, len(m))
		for k, v := range m {
			o[k] = v
		}
		return o
	}
	num := func(v int64) types.AttributeValue { return &types.AttributeValueMemberN{Value: itoa(v)} }
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

	rep, err := ex.Report(ctx, n, c)
	if err != nil {
		t.Fatal(err)
	}
	var one, other lease.Entry // two attempts of different claim transactions
	for _, e := range rep.Schedule {
		if e.Attempt != 1 || e.ClaimToken == 0 {
			continue
		}
		if one.ID == "" {
			one = e
		} else if e.PoolVersion != one.PoolVersion && other.ID == "" {
			other = e
		}
	}
	if one.ID == "" || other.ID == "" || len(rep.Attempts(one.ID)) != 1 {
		t.Fatalf("no two first attempts of separate claims with tokens recorded in %+v", rep.Schedule)
	}
	att1 := "ATTEMPT#" + one.ID + "#001"
	jobSK := "JOB#" + one.ID

	// A double holder: attempt 2 claimed at attempt 1's own token.
	orig1, origJob := get(att1), get(jobSK)
	a1 := clone(orig1)
	a1["outcome"] = str(string(lease.LeaseExpired))
	put(a1)
	a2 := clone(orig1)
	a2["sk"], a2["attempt"] = str("ATTEMPT#"+one.ID+"#002"), num(2)
	put(a2)
	j := clone(origJob)
	j["attempt"] = num(2)
	put(j)
	verify("a second holder of "+one.ID, "two holders at once")
	del("ATTEMPT#" + one.ID + "#002")
	put(orig1)
	put(origJob)

	// An ended job still held.
	j = clone(origJob)
	j["worker"] = str("intruder")
	put(j)
	verify("a holder on ended "+one.ID, "still held by intruder")
	put(origJob)

	// Two claims that made one pool version.
	origOther := get("ATTEMPT#" + other.ID + "#001")
	o := clone(origOther)
	o["pool_version"] = num(one.PoolVersion)
	put(o)
	verify("a second claim at pool version "+itoa(one.PoolVersion), "was made by two claims")
	// A claim that left c+1 slots busy.
	o = clone(origOther)
	o["pool_busy"] = num(int64(c + 1))
	put(o)
	verify("a claim leaving c+1 busy", "slots busy after the claim of "+other.ID)
	put(origOther)

	rep, err = ex.Report(ctx, n, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(n); err != nil {
		t.Fatalf("the plants undone, Verify still fails: %v", err)
	}
}

func itoa(v int64) string {
	b, _ := attributevalue.Marshal(v)
	return b.(*types.AttributeValueMemberN).Value
}

// A reaped attempt records its own start, never an earlier attempt's
// (issue 34): a job's first holder starts it and stops heartbeating (its
// process context cancelled, as a killed process); a second worker, whose
// starts cannot reach DynamoDB (their proxy cut), reaps attempt 1, claims
// attempt 2 and cannot start it; attempt 2's lease expires and it is
// reaped too (max_lost 1: the job ends FATAL_FAILURE). Read back raw:
// attempt 2 records no start or one at or after its claim (before the fix
// it carried attempt 1's started_ms, seconds before its claim), and the
// night's schedule on started_ms never has more than c busy.
func TestReapedAttemptRecordsItsOwnStart(t *testing.T) {
	t.Parallel()
	n := catalogNight(t, "2027-08-07", 1)
	ex, cat := setup(t, n.Jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := lease.Config{Workers: 1, Minute: time.Second, Lease: 2 * time.Second, MaxRetry: 1, MaxLost: 1}
	runID, err := ex.Prepare(ctx, n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Holder A: starts the job, then is "killed" (its context ends).
	actx, kill := context.WithCancel(ctx)
	aerr := make(chan error, 1)
	go func() {
		_, err := ex.Join(actx, n.BatchDate, lease.WorkerConfig{Slots: 1, Name: "a", Work: func(ctx context.Context, _ lease.Job, _ time.Duration) error {
			<-ctx.Done()
			return ctx.Err()
		}})
		aerr <- err
	}()
	started := make(chan error, 1)
	go func() { started <- ex.Start(ctx, n.BatchDate, runID) }() // heartbeats the run until the night is done
	waitProcessingRaw(t, ctx, ex, cat, n)
	kill()
	<-aerr
	// Worker B: its starts go through a proxy that is cut.
	r := toxitest.NewRouter(t, cat.Endpoint(), leaseKind, leaseKinds...)
	r.Proxy(t, "start").Cut(t)
	exB := executorVia(t, cat, r.Default.URL, routed(r))
	bctx, stopB := context.WithCancel(ctx)
	defer stopB()
	berr := make(chan error, 1)
	go func() {
		_, err := exB.Join(bctx, n.BatchDate, lease.WorkerConfig{Slots: 1, Name: "b"})
		berr <- err
	}()
	// Whether B rides out its failed start or stops on it, a reaper must
	// end attempt 2: worker C (direct) joins once attempt 2 is claimed.
	for {
		js, err := ex.Job(ctx, n.BatchDate, n.Jobs[0].JobID)
		if err != nil {
			t.Fatal(err)
		}
		if js.Attempt >= 2 {
			break
		}
		select {
		case err := <-berr:
			t.Fatalf("worker b left before it claimed attempt 2: %v (job %+v)", err, js)
		case <-ctx.Done():
			t.Fatalf("attempt 2 never claimed: %+v", js)
		case <-time.After(50 * time.Millisecond):
		}
	}
	cerr := make(chan error, 1)
	go func() {
		_, err := ex.Join(ctx, n.BatchDate, lease.WorkerConfig{Slots: 1, Name: "c"})
		cerr <- err
	}()
	if err := ex.WaitDone(ctx, n.BatchDate, runID, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if err := <-started; err != nil {
		t.Fatalf("start: %v", err)
	}
	stopB()
	<-berr
	if err := <-cerr; err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("worker c: %v", err)
	}
	atts := rawAttempts(t, ex, cat, n.BatchDate)
	if len(atts) != 2 {
		t.Fatalf("%d attempts %+v; want 2 (attempt 1 reaped, attempt 2 reaped)", len(atts), atts)
	}
	a1, a2 := atts[0], atts[1]
	if a1.StartedMS == 0 || a1.Outcome != lease.LeaseExpired || a2.Outcome != lease.LeaseExpired {
		t.Fatalf("attempts %+v; want attempt 1 started and both LEASE_EXPIRED", atts)
	}
	if a2.StartedMS != 0 && a2.StartedMS < a2.ClaimedMS {
		t.Fatalf("attempt 2 claimed at %d records a start at %d, %d ms before its claim (attempt 1 started at %d): a reaped attempt inherited an older start",
			a2.ClaimedMS, a2.StartedMS, a2.ClaimedMS-a2.StartedMS, a1.StartedMS)
	}
	// The schedule on started_ms (claimed_ms where none): never more than c.
	busy := 0
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for _, a := range atts {
		s := a.StartedMS
		if s == 0 {
			s = a.ClaimedMS
		}
		evs = append(evs, ev{s, 1}, ev{a.FinishedMS, -1})
	}
	for i := range evs {
		for j := i + 1; j < len(evs); j++ {
			if evs[j].t < evs[i].t || (evs[j].t == evs[i].t && evs[j].d < evs[i].d) {
				evs[i], evs[j] = evs[j], evs[i]
			}
		}
	}
	for _, e := range evs {
		if busy += e.d; busy > cfg.Workers {
			t.Fatalf("on started_ms, %d slots busy at %d with c = %d: %+v", busy, e.t, cfg.Workers, atts)
		}
	}
	t.Logf("attempt 1 started %d, reaped %d; attempt 2 claimed %d, start %d (0: none), reaped %d",
		a1.StartedMS, a1.FinishedMS, a2.ClaimedMS, a2.StartedMS, a2.FinishedMS)
}

// rawAttempt is an ATTEMPT# item read back raw.
type rawAttempt struct {
	SK         string          `dynamodbav:"sk"`
	ClaimedMS  int64           `dynamodbav:"claimed_ms"`
	StartedMS  int64           `dynamodbav:"started_ms"`
	FinishedMS int64           `dynamodbav:"finished_ms"`
	Outcome    queuekit.Status `dynamodbav:"outcome"`
}

func rawAttempts(t *testing.T, ex *lease.Executor, cat *catalog.Catalog, date string) []rawAttempt {
	t.Helper()
	out, err := cat.Client().Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(ex.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("batch_date = :d AND begins_with(sk, :a)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: date},
			":a": &types.AttributeValueMemberS{Value: "ATTEMPT#"}}})
	if err != nil {
		t.Fatal(err)
	}
	var as []rawAttempt
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &as); err != nil {
		t.Fatal(err)
	}
	return as
}

// waitProcessingRaw waits until the night's one job is PROCESSING.
func waitProcessingRaw(t *testing.T, ctx context.Context, ex *lease.Executor, cat *catalog.Catalog, n queuekit.Night) {
	t.Helper()
	for {
		js, err := ex.Job(ctx, n.BatchDate, n.Jobs[0].JobID)
		if err != nil {
			t.Fatal(err)
		}
		if js.Status == queuekit.StatusProcessing {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("job never PROCESSING: %+v", js)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
