package lease

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// DynamoDB's limits that bound a pool (AWS documentation, "Service, account,
// and table quotas in Amazon DynamoDB"): an item holds at most 400 KB, and
// any one expression string (a condition, an update) at most 4 KB.
const (
	MaxItemBytes       = 400 * 1024
	MaxExpressionBytes = 4 * 1024
)

// MaxWorkers is the largest pool c that Config.Validate accepts: the pool
// item holds one slot entry and, when the pool is full, one running entry
// per slot, so its size grows with c; with job ids of up to MaxJobIDBytes
// it stays within MaxItemBytes up to this c (TestMaxWorkersFits checks it
// by the item-size rules). Prepare checks the night's own ids exactly.
const MaxWorkers = 2000

// MaxJobIDBytes is the job id length MaxWorkers is derived for.
const MaxJobIDBytes = 64

// LimitError says that a run asks for more than a DynamoDB item or
// expression can hold. It is found before anything is written.
type LimitError struct {
	Flag  string // the setting, e.g. "--workers"
	Value int
	Max   int
	Why   string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s %d is beyond the limit of %d: %s", e.Flag, e.Value, e.Max, e.Why)
}

// fullPool is the pool item of c slots at its largest: every slot held by
// an ordinary job with an id of idLen bytes, each with a running entry
// whose estimated finish has the most significant digits a float64 prints.
func fullPool(c, idLen int) poolItem {
	p := poolItem{BatchDate: "2026-05-13", SK: skPool, RunID: strings.Repeat("f", 12), State: poolRunning, Capacity: c, Joined: c,
		Policy: "conservative", MinuteMS: 0.123456789012345, PollMS: 1000, LeaseMS: 1 << 40, MaxRetry: 1 << 30, MaxLost: 1 << 30,
		Backoff: 0.123456789012345, Shards: 64, T0: 1 << 50, Version: 1 << 60, Busy: c, Exclusive: "",
		Slots: make([]string, c), Running: make(map[string]float64, c), Jobs: 1 << 30, Ended: 1 << 30,
		XPriority: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, OPriority: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		SeenMS: 1 << 50, CutoffMin: 1440, WindowFrom: 1439, Host: strings.Repeat("h", 255), PID: 1 << 30, StartedMS: 1 << 50}
	for i := range c {
		id := fmt.Sprintf("%0*d", idLen, i)
		p.Slots[i] = id
		p.Running[id] = 1234.5678901234567 + float64(i)
	}
	return p
}

// poolBytes is the size of fullPool(c, idLen).
func poolBytes(c, idLen int) (int, error) {
	av, err := attributevalue.MarshalMap(fullPool(c, idLen))
	if err != nil {
		return 0, fmt.Errorf("marshal pool: %w", err)
	}
	return dynamo.ItemSize(av), nil
}

// checkLimits checks, before anything is written, that the pool of cfg
// fits one item at its fullest and that the largest claim's expressions
// (maxBatch ordinary jobs at the highest slots, the longest ids of the
// night) fit DynamoDB's expression limit.
func (e *Executor) checkLimits(n queuekit.Night, cfg Config) error {
	if cfg.Workers > MaxWorkers {
		return workersLimit(cfg.Workers, MaxWorkers, MaxJobIDBytes)
	}
	idLen := 0
	for _, j := range n.Jobs {
		idLen = max(idLen, len(j.JobID))
	}
	size, err := poolBytes(cfg.Workers, idLen)
	if err != nil {
		return err
	}
	if size > MaxItemBytes {
		most := largest(func(c int) bool { s, err := poolBytes(c, idLen); return err == nil && s <= MaxItemBytes }, cfg.Workers)
		return workersLimit(cfg.Workers, most, idLen)
	}
	// The largest claim transaction, built as a worker builds it.
	k := min(maxBatch, cfg.Workers)
	w := &worker{date: n.BatchDate, run: strings.Repeat("f", 12), name: strings.Repeat("w", 80),
		p: poolItem{LeaseMS: cfg.Lease.Milliseconds(), MinuteMS: float64(cfg.Minute) / float64(time.Millisecond)}, e: e}
	p := poolItem{Capacity: cfg.Workers, Version: math.MaxInt64 / 2, Busy: cfg.Workers - k}
	var picks []pick
	for i := range k {
		id := fmt.Sprintf("%0*d", idLen, i)
		picks = append(picks, pick{job: jobItem{JobID: id, ClaimShard: shardName(n.BatchDate, false, 1<<30, 63), Attempt: 1 << 30,
			Token: math.MaxInt64 / 2, Estimate: 1234.5678901234567}, workers: 1, ids: []int{cfg.Workers - 1 - i}})
	}
	in, _, err := w.claimInput(p, picks, 1<<50)
	if err != nil {
		return err
	}
	for _, it := range in.TransactItems {
		if u := it.Update; u != nil {
			for _, x := range []*string{u.ConditionExpression, u.UpdateExpression} {
				if l := len(aws.ToString(x)); l > MaxExpressionBytes {
					return fmt.Errorf("a claim of %d jobs needs an expression of %d bytes, beyond DynamoDB's %d: this is a bug, please report it", k, l, MaxExpressionBytes)
				}
			}
		}
	}
	return nil
}

func workersLimit(c, most, idLen int) *LimitError {
	return &LimitError{Flag: "--workers", Value: c, Max: most,
		Why: fmt.Sprintf("the pool is one DynamoDB item holding a slot and a running job per worker, and an item holds at most 400 KB (with job ids of %d bytes); split a bigger fleet over several pools (nights or shards)", idLen)}
}

// largest returns the largest c in 1..hi with ok(c), ok being monotone (true
// up to some c, false after); 0 when ok(1) is false.
func largest(ok func(int) bool, hi int) int {
	lo := 0 // ok(lo) holds (vacuously for 0)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
