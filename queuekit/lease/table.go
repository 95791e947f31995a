package lease

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// LeaseExpired is the outcome of an attempt whose worker stopped
// heartbeating (an attempt outcome, not a job state).
const LeaseExpired queuekit.Status = "LEASE_EXPIRED"

// Pool states.
const (
	poolPreparing = "PREPARING" // the run holds the night and resets it; workers wait
	poolWaiting   = "WAITING"   // prepared; waiting for slots to join
	poolRunning   = "RUNNING"
	poolDone      = "DONE"
	poolAbandoned = "ABANDONED" // the run stopped unfinished (interrupted or failed)
)

// jobFence is the fenced lease on a JOB item: the token moves on at every
// claim, end and reaping, the holder is the worker's name.
var jobFence = fence.Fence{Token: attrToken, Holder: "worker", Until: attrLeaseTil}

// Table layout: attribute and index names of the companion table.
const (
	TableSuffix  = "_exec" // companion table: <catalog table>_exec
	attrDate     = "batch_date"
	attrSK       = "sk"
	attrShard    = "claim_shard"
	attrDue      = "due_key"
	attrLeaseSh  = "lease_shard"
	attrLeaseTil = "lease_until"
	attrToken    = "fence_token"
	attrRun      = "run_id"
	// attrClaimNonce and attrEndNonce name, on a JOB item, the claim and
	// the end that last wrote it (a random nonce each): a write whose reply
	// was lost and whose retry was refused recognises itself by them.
	attrClaimNonce = "claim_nonce"
	attrEndNonce   = "end_nonce"
	attrRunSeq     = "run_seq"
	IndexClaim     = "claimable"
	IndexLeases    = "leases"
	skPool         = "POOL"
	prefixJob      = "JOB#"
	prefixAttempt  = "ATTEMPT#"
	prefixDLQ      = "DLQ#"
	prefixWorker   = "WORKER#"
)

// jobItem is JOB#<job_id>.
type jobItem struct {
	BatchDate    string          `dynamodbav:"batch_date"`
	SK           string          `dynamodbav:"sk"`
	JobID        string          `dynamodbav:"job_id"`
	Class        string          `dynamodbav:"workload_class"`
	Priority     int             `dynamodbav:"priority"`
	Arrival      float64         `dynamodbav:"arrival_minute"`
	Estimate     float64         `dynamodbav:"estimated_runtime_minutes"`
	Exclusive    bool            `dynamodbav:"requires_exclusive_lock"`
	Status       queuekit.Status `dynamodbav:"execution_status"`
	CurrentRetry int             `dynamodbav:"current_retry"`
	MaxRetry     int             `dynamodbav:"max_retry"`
	LostAttempts int             `dynamodbav:"lost_attempts"` // attempts whose lease expired (not the job's failures)
	Attempt      int             `dynamodbav:"attempt"`
	Worker       string          `dynamodbav:"worker,omitempty"`
	Slots        []int           `dynamodbav:"worker_ids,omitempty"`
	LeaseUntil   int64           `dynamodbav:"lease_until,omitempty"`
	HeartbeatAt  int64           `dynamodbav:"heartbeat_at,omitempty"`
	StartedMS    int64           `dynamodbav:"started_ms,omitempty"`
	ClaimShard   string          `dynamodbav:"claim_shard,omitempty"`
	DueKey       string          `dynamodbav:"due_key,omitempty"`
	LeaseShard   string          `dynamodbav:"lease_shard,omitempty"`
	LastError    string          `dynamodbav:"last_error,omitempty"`
	Token        int64           `dynamodbav:"fence_token"`
	RunID        string          `dynamodbav:"run_id"`
}

// poolItem is POOL.
type poolItem struct {
	BatchDate  string             `dynamodbav:"batch_date"`
	SK         string             `dynamodbav:"sk"`
	RunID      string             `dynamodbav:"run_id"`
	State      string             `dynamodbav:"state"`
	Capacity   int                `dynamodbav:"capacity"`
	Joined     int                `dynamodbav:"joined"`
	Policy     string             `dynamodbav:"policy"`
	MinuteMS   float64            `dynamodbav:"minute_ms"`
	PollMS     int64              `dynamodbav:"poll_ms"`
	LeaseMS    int64              `dynamodbav:"lease_ms"`
	MaxRetry   int                `dynamodbav:"max_retry"`
	MaxLost    int                `dynamodbav:"max_lost"` // 0 on a pool from before issue 45: DefaultMaxLost
	Backoff    float64            `dynamodbav:"backoff_minutes"`
	Shards     int                `dynamodbav:"shards"`
	T0         int64              `dynamodbav:"t0_ms"`
	Version    int64              `dynamodbav:"version"`
	Busy       int                `dynamodbav:"busy"`
	Exclusive  string             `dynamodbav:"exclusive"`
	Slots      []string           `dynamodbav:"slots"`
	Running    map[string]float64 `dynamodbav:"running"` // job id -> estimated finish minute
	Jobs       int                `dynamodbav:"jobs"`
	Ended      int                `dynamodbav:"ended"`
	XPriority  []int              `dynamodbav:"exclusive_priorities"` // descending
	OPriority  []int              `dynamodbav:"ordinary_priorities"`  // descending
	SeenMS     int64              `dynamodbav:"run_seen_ms"`
	RunSeq     int64              `dynamodbav:"run_seq"` // the night's runs, numbered from 1 (0: a pool from before issue 25)
	CutoffMin  float64            `dynamodbav:"cutoff_minute"`
	WindowFrom int                `dynamodbav:"window_start"`
	Host       string             `dynamodbav:"host"`
	PID        int                `dynamodbav:"pid"`
	StartedMS  int64              `dynamodbav:"started_ms"`
}

// attemptItem is ATTEMPT#<job_id>#<n>.
type attemptItem struct {
	BatchDate  string          `dynamodbav:"batch_date"`
	SK         string          `dynamodbav:"sk"`
	JobID      string          `dynamodbav:"job_id"`
	Attempt    int             `dynamodbav:"attempt"`
	Worker     string          `dynamodbav:"worker"`
	Slots      []int           `dynamodbav:"worker_ids"`
	Exclusive  bool            `dynamodbav:"requires_exclusive_lock"`
	ClaimedMS  int64           `dynamodbav:"claimed_ms"`
	StartedMS  int64           `dynamodbav:"started_ms,omitempty"`
	FinishedMS int64           `dynamodbav:"finished_ms,omitempty"`
	Outcome    queuekit.Status `dynamodbav:"outcome,omitempty"`
	Error      string          `dynamodbav:"error,omitempty"`
	Estimate   float64         `dynamodbav:"estimated_runtime_minutes"`
	// The attempt's place in the table's own orders, which no clock
	// writes (Report.Verify checks the night on them): ClaimToken is the
	// job's fence token the claim set and EndToken the one the end set;
	// PoolVersion is the pool version the claim transaction made (its
	// condition was the version before) and PoolBusy the slots busy once
	// it committed. 0 on attempts written before issue 34.
	ClaimToken  int64 `dynamodbav:"claim_token,omitempty"`
	EndToken    int64 `dynamodbav:"end_token,omitempty"`
	PoolVersion int64 `dynamodbav:"pool_version,omitempty"`
	PoolBusy    int   `dynamodbav:"pool_busy,omitempty"`
}

// DeadLetter is a job that ended FATAL_FAILURE: DLQ#<job_id>.
type DeadLetter struct {
	JobID     string `dynamodbav:"job_id" json:"job_id"`
	Attempts  int    `dynamodbav:"attempts" json:"attempts"`
	LastError string `dynamodbav:"last_error" json:"last_error"`
	AtMS      int64  `dynamodbav:"at_ms" json:"-"`
}

// workerItem is WORKER#<name>: a process's claim counters.
type workerItem struct {
	Name     string  `dynamodbav:"worker"`
	Won      int     `dynamodbav:"won"`
	Lost     int     `dynamodbav:"lost"`
	Finished int     `dynamodbav:"finished"`
	Fenced   int     `dynamodbav:"fenced"`
	TableWU  float64 `dynamodbav:"table_wu"`
	IndexWU  float64 `dynamodbav:"index_wu"`
	Slots    int     `dynamodbav:"slots"`
	SeenMS   int64   `dynamodbav:"seen_ms"`
	RunID    string  `dynamodbav:"run_id"`
}

func jobSK(id string) string                  { return prefixJob + id }
func attemptSK(id string, n int) string       { return fmt.Sprintf("%s%s#%03d", prefixAttempt, id, n) }
func dueKey(minute float64, id string) string { return fmt.Sprintf("%012.3f#%s", max(minute, 0), id) }

// dueBound is the largest due_key due at minute now ('~' sorts after every
// job id character).
func dueBound(now float64) string { return fmt.Sprintf("%012.3f#~", max(now, 0)) }

// shardOf is the claim_shard of a job: its kind and priority, and a hash of
// its id spreading one priority over shards partitions.
func shardOf(date string, exclusive bool, priority int, id string, shards int) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return shardName(date, exclusive, priority, int(h.Sum32()%uint32(max(shards, 1))))
}

// shardName is <date>#x#<priority>#<k> (exclusive) or <date>#o#<priority>#<k>.
func shardName(date string, exclusive bool, priority, k int) string {
	kind := "o"
	if exclusive {
		kind = "x"
	}
	return fmt.Sprintf("%s#%s#%d#%d", date, kind, priority, k)
}

// key is the primary key of an item of the night.
func key(date, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrDate: &types.AttributeValueMemberS{Value: date},
		attrSK:   &types.AttributeValueMemberS{Value: sk},
	}
}

// createTable creates the companion table with its two sparse indexes.
func (e *Executor) createTable(ctx context.Context) error {
	_, err := e.db.CreateAndWait(ctx, dynamo.Spec{
		Key: dynamo.Key{Partition: dynamo.S(attrDate), Sort: dynamo.S(attrSK)},
		Indexes: []dynamo.Index{
			{Name: IndexClaim, Key: dynamo.Key{Partition: dynamo.S(attrShard), Sort: dynamo.S(attrDue)}},
			{Name: IndexLeases, Key: dynamo.Key{Partition: dynamo.S(attrLeaseSh), Sort: dynamo.N(attrLeaseTil)}},
		},
	}.Input())
	return err
}

// nightItems reads every item of a night with one paginated Query on the
// partition key, optionally narrowed to a sort key prefix.
func (e *Executor) nightItems(ctx context.Context, date, prefix string) ([]map[string]types.AttributeValue, error) {
	k := expression.Key(attrDate).Equal(expression.Value(date))
	if prefix != "" {
		k = k.And(expression.Key(attrSK).BeginsWith(prefix))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(k).Build()
	if err != nil {
		return nil, fmt.Errorf("build key condition: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(e.db.Name()),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	var items []map[string]types.AttributeValue
	for out, err := range e.db.QueryPages(ctx, in) {
		if err != nil {
			return nil, fmt.Errorf("query night %s in %s: %w", date, e.db.Name(), err)
		}
		items = append(items, out.Items...)
	}
	return items, nil
}

// readPool reads the pool item with a strongly consistent read; ok is false
// when the night has none.
func (e *Executor) readPool(ctx context.Context, date string) (poolItem, bool, error) {
	out, err := dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return e.db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.db.Name()),
			Key: key(date, skPool), ConsistentRead: aws.Bool(true)})
	})
	if err != nil {
		return poolItem{}, false, fmt.Errorf("read pool of night %s: %w", date, err)
	}
	if out.Item == nil {
		return poolItem{}, false, nil
	}
	var p poolItem
	if err := attributevalue.UnmarshalMap(out.Item, &p); err != nil {
		return poolItem{}, false, fmt.Errorf("decode pool of night %s: %w", date, err)
	}
	return p, true, nil
}

// getItem reads one item of the night with a strongly consistent read
// (nil when missing).
func (e *Executor) getItem(ctx context.Context, date, sk string) (map[string]types.AttributeValue, error) {
	out, err := dynamo.Call(ctx, e.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return e.db.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.db.Name()),
			Key: key(date, sk), ConsistentRead: aws.Bool(true)})
	})
	if err != nil {
		return nil, fmt.Errorf("read %s of night %s: %w", sk, date, err)
	}
	return out.Item, nil
}

// lostRace reports whether err is a lost race: a failed condition, alone or
// inside a cancelled transaction, or a transaction conflict.
func lostRace(err error) bool { return fence.Refused(err) || fence.Conflict(err) }
