package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// How long an outage each part of a run rides out: DynamoDB giving no
// answer (lost replies, resets, refused connections, calls timing out).
// Each call is sent by the AWS layer's ride-out retryer (dynamo.RideOut:
// 4 tries, full-jitter backoff of 50 ms to 1 s, no client-side retry
// quota); a call whose tries are spent is called again after the same
// backoff (dynamo.Outage) until a call is answered, or until the outage,
// timed from its first unanswered call on the process's monotonic clock,
// passes the bound. Then the process gives up with one line naming what to
// do (*dynamo.OutageError).
//
//   - A worker rides out WorkerRideOut(lease): at least StaleAfter, and at
//     least two leases, so a worker cut off for longer than its leases
//     comes back, finds the jobs it held re-queued by the other workers'
//     reapers (its late ends refused by their fencing tokens), and works on.
//     The outage is timed from the later of the claim loop's first
//     unanswered call and the last heartbeat of the worker's jobs that got
//     through: on a busy machine the loop's reads may fail while the
//     heartbeats land, and a worker whose leases are still renewed is not
//     cut off (a held-out run lost a worker "no answer for 14.5 s" at load
//     17 to 23 with no outage over 3 s). A worker that gives up had no
//     heartbeat through for WorkerRideOut, longer than its leases: every
//     lease it held may have been taken, and it leaves them to the same
//     reapers, saying so in one line.
//   - The coordinator rides out CoordinatorRideOut, a quarter short of
//     StaleAfter: its workers leave (OrphanError), and another run may take
//     the night, once its heartbeat is StaleAfter old; the quarter leaves
//     room for the heartbeat's period (1 s) and a call's time.
const CoordinatorRideOut = StaleAfter - StaleAfter/4

// WorkerRideOut is the longest outage a worker of a run with this lease
// rides out: max(StaleAfter, 2 leases).
func WorkerRideOut(lease time.Duration) time.Duration { return max(StaleAfter, 2*lease) }

// rideOut is the AWS layer's policy the executor's client retries by.
var rideOut = dynamo.RideOut{}

// coordinatorOutage rides the coordinator of night date through calls that
// get no answer.
func (e *Executor) coordinatorOutage(date string) *dynamo.Outage {
	return e.db.Outage(CoordinatorRideOut, fmt.Sprintf("the coordinator of night %s", date),
		fmt.Sprintf("its workers leave once its heartbeat is %s old; check the network to DynamoDB, then run the night again (`queuekit run --batch-date %s`)",
			StaleAfter, date))
}

// outage rides the worker through calls that get no answer, timed from
// the later of its first unanswered call and the last heartbeat of its
// jobs that got through: a worker whose leases are still renewed is not
// cut off because its claim loop's reads fail (a busy machine); one that
// gives up had no heartbeat through for longer than its leases, so every
// lease it held may have been taken.
func (w *worker) outage() *dynamo.Outage {
	lease := time.Duration(w.p.LeaseMS) * time.Millisecond
	o := w.e.db.Outage(WorkerRideOut(lease), fmt.Sprintf("worker %s of night %s", w.name, w.date),
		fmt.Sprintf("no heartbeat of its jobs got through either, so their %s leases may have been taken and the other workers' reapers re-queue them; check the network to DynamoDB, then start a worker again (`queuekit worker --batch-date %s --slots K`)",
			lease, w.date))
	o.Answered = w.lastAnswered
	return o
}

// liveness is the coordinator's view of its workers while it waits for
// the night: each WORKER# item's seen_ms (a worker writes it about once a
// second) as last seen, and when it last changed, on the coordinator's
// monotonic clock (no clock of another host is compared with its own).
// With no worker heard from for StaleAfter, the coordinator reaps the
// leases left behind itself (so the pool shows what is really running and
// the next workers can claim at once) and says what is needed.
type liveness struct {
	e         *Executor
	date, run string
	heard     time.Time // when a worker's seen_ms last changed
	seen      map[string]int64
	looked    time.Time
	reaper    *worker
}

// look reads the workers' items at most once a second and, with nobody
// heard from for StaleAfter on a running night, reaps. It returns a note
// for the run's progress: "" while workers are heard from.
func (l *liveness) look(ctx context.Context, p poolItem) (string, error) {
	if l.seen == nil {
		l.seen, l.heard = map[string]int64{}, time.Now()
	}
	if time.Since(l.looked) >= time.Second {
		l.looked = time.Now()
		items, err := l.e.nightItems(ctx, l.date, prefixWorker)
		if err != nil {
			return "", err
		}
		for _, it := range items {
			var w struct {
				Worker string `dynamodbav:"worker"`
				RunID  string `dynamodbav:"run_id"`
				SeenMS int64  `dynamodbav:"seen_ms"`
			}
			if attributevalue.UnmarshalMap(it, &w) != nil || w.RunID != l.run {
				continue
			}
			if old, ok := l.seen[w.Worker]; !ok || old != w.SeenMS {
				l.seen[w.Worker] = w.SeenMS
				l.heard = time.Now()
			}
		}
		if l.silent(p) {
			if l.reaper == nil || l.reaper.p.T0 != p.T0 {
				l.reaper = &worker{e: l.e, date: l.date, run: l.run, name: "coordinator", p: p}
			}
			if err := l.reaper.reap(ctx); err != nil {
				return "", err
			}
		}
	}
	if !l.silent(p) {
		return "", nil
	}
	return fmt.Sprintf("no worker heard from for %.0f s: start workers to finish the night (`queuekit worker --batch-date %s --slots K`); expired leases are re-queued meanwhile",
		time.Since(l.heard).Seconds(), l.date), nil
}

// silent reports whether no worker has been heard from for StaleAfter while
// the night runs unfinished.
func (l *liveness) silent(p poolItem) bool {
	return time.Since(l.heard) >= StaleAfter && p.State == poolRunning && p.Ended < p.Jobs
}
