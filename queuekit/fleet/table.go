package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// Attribute and index names of the fleet table.
const (
	// AttrPK and AttrSK are the table's key (see the package doc's items).
	AttrPK       = "pk"
	AttrSK       = "sk"
	attrShard    = "claim_shard" // the due index's partition key; only while claimable
	attrDue      = "due_at"      // the due index's sort key (Unix ms); only while claimable
	attrStatus   = "execution_status"
	attrRetry    = "current_retry"
	attrLost     = "lost_attempts"
	attrAttempt  = "attempt"
	attrEnds     = "ends"
	attrRuns     = "runs"
	attrUntil    = "lease_until"
	attrTakeover = "takeover_ms" // see Job.TakeoverMS
	// attrNonce names the last claim, end, acquire or release written to
	// an item: a retried write whose first try committed (its reply lost)
	// is refused by its own fencing condition, and recognised as ours by
	// the nonce in the item that refused it.
	attrNonce = "op_nonce"
	// IndexDue is the sparse GSI (claim_shard, due_at).
	IndexDue = "due"
	// TableSuffix names the fleet table after the catalog's.
	TableSuffix = "_fleet"
	// MaxShards bounds K.
	MaxShards = 1000
)

// DueIndexAttributes are the attributes the due index projects beside the
// keys: what a claim reads from an entry and a dispatcher's message
// carries (dispatch.Message), nothing else, so an entry stays small: a
// page of entries costs read units by its bytes.
var DueIndexAttributes = []string{"user_id", "job_id", "fence_token", attrStatus, attrUntil, attrRetry, "max_retry", attrLost, attrAttempt}

// jobFence is the lease on a job item (and on shard items: the same names).
var jobFence = fence.Default

// Options configure a Fleet. Set them with the With... functions.
type Options struct {
	// Lease is a job's lease (default 10 s); heartbeats every Lease/4.
	Lease time.Duration
	// ShardLease is a shard's (and a member's) lease (default 6 s); renewed
	// and rebalanced every ShardLease/4.
	ShardLease time.Duration
	// Poll is how long a worker with nothing due waits before it reads the
	// index again (default 50 ms).
	Poll time.Duration
	// RetryBase and RetryMax bound the retry backoff (defaults 200 ms, 10 s).
	RetryBase, RetryMax time.Duration
	// PollAll makes every worker poll every shard, without ownership (the
	// comparison the benchmark makes).
	PollAll bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxLost bounds a job's lost attempts (default 10): attempts whose
	// lease ran out with no end (an executor killed, paused, cut off, or
	// a claim whose reply was lost). They are not the job's failures, so
	// they do not spend its max_retry; but a job that kills every
	// executor it runs on looks the same, so past MaxLost it is ended
	// FATAL_FAILURE and dead-lettered, saying so.
	MaxLost int
	// MaxSkew is how far apart the fleet's wall clocks are assumed to be at
	// most (default 1 s; 0 turns the rule off). A lease read held whose end
	// (lease_until, the holder's clock) is MaxSkew past on the reader's
	// clock may be taken over at once, whoever watched it before: the bound
	// on a takeover while shards change hands. Clocks further apart than
	// that never make a job end twice (the claim is fenced); they may take
	// a lease from a holder still renewing it, which then runs again (see
	// the package doc, "Clocks").
	MaxSkew time.Duration
}

// Option is one functional option of New: a func(*Options), the SDK's optFns
// form. It is an alias, so the With helpers and a plain func literal mix.
type Option = func(*Options)

// WithLease sets the job lease.
func WithLease(d time.Duration) Option { return func(o *Options) { o.Lease = d } }

// WithShardLease sets the shard and membership lease.
func WithShardLease(d time.Duration) Option { return func(o *Options) { o.ShardLease = d } }

// WithPoll sets the idle poll interval.
func WithPoll(d time.Duration) Option { return func(o *Options) { o.Poll = d } }

// WithRetryBackoff sets the retry backoff bounds.
func WithRetryBackoff(base, max time.Duration) Option {
	return func(o *Options) { o.RetryBase, o.RetryMax = base, max }
}

// WithClock sets the wall clock whose timestamps the fleet writes and
// compares with items (due times, lease ends). Durations (how long a lease
// has been watched, how long a holder's lease lasts) are measured with
// time.Now's monotonic reading whatever this clock says.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// ClockOffsetEnv is the TEST-ONLY environment variable that offsets a fleet
// process's wall clock (a Go duration, e.g. "-2s"): the CLI's fleet
// commands read it, fleetrun.Config.ClockOffsets sets it for the worker processes
// a run starts. It exists to inject clock skew in tests; never set it in
// production.
const ClockOffsetEnv = "QUEUEKIT_CLOCK_OFFSET"

// WithMaxLost sets the bound on a job's attempts lost to expired leases
// (Options.MaxLost).
func WithMaxLost(n int) Option { return func(o *Options) { o.MaxLost = n } }

// WithMaxSkew sets the bound assumed on clock offsets between the fleet's
// hosts (Options.MaxSkew); 0 takes a lease over only once it was watched
// unchanged for a whole lease on the taker's clock.
func WithMaxSkew(d time.Duration) Option { return func(o *Options) { o.MaxSkew = d } }

// WithPollAll makes every worker poll every shard, owning none.
func WithPollAll(on bool) Option { return func(o *Options) { o.PollAll = on } }

// Fleet is the fleet executor on one DynamoDB table. Safe for concurrent use.
type Fleet struct {
	db   *dynamo.Table // the fleet table: the AWS layer's handle, sharing the catalog's client
	opts Options
}

// New opens the fleet on the table <catalog table>_fleet, with the catalog's
// client, endpoint, timeouts and typed errors. It does not contact DynamoDB.
func New(cat *catalog.Catalog, opts ...Option) (*Fleet, error) {
	o := Options{Lease: 10 * time.Second, ShardLease: 6 * time.Second, Poll: 50 * time.Millisecond,
		RetryBase: 200 * time.Millisecond, RetryMax: 10 * time.Second, Now: time.Now, MaxLost: 10, MaxSkew: time.Second}
	for _, fn := range opts {
		fn(&o)
	}
	if o.Lease < 40*time.Millisecond || o.ShardLease < 40*time.Millisecond || o.Poll <= 0 || o.RetryBase <= 0 || o.RetryMax < o.RetryBase || o.MaxLost < 0 || o.MaxSkew < 0 {
		return nil, fmt.Errorf("fleet options: lease %s, shard lease %s (each at least 40ms), poll %s (> 0), retry backoff %s..%s (0 < base <= max), max lost %d (>= 0), max skew %s (>= 0)",
			o.Lease, o.ShardLease, o.Poll, o.RetryBase, o.RetryMax, o.MaxLost, o.MaxSkew)
	}
	table := cat.Table()
	if !strings.HasSuffix(table, TableSuffix) {
		table += TableSuffix
	}
	db, err := cat.DB().Open(table)
	if err != nil {
		return nil, err
	}
	// Workers and the coordinator ride out network outages; their client
	// retries by the AWS layer's ride-out policy (no client-side retry
	// quota, full-jitter backoff of at most 1 s), as the night executor's.
	return &Fleet{db: db.RidingOut(dynamo.RideOut{}), opts: o}, nil
}

// Table is the fleet table's name.
func (f *Fleet) Table() string { return f.db.Name() }

// DB is the fleet table's handle in the AWS layer (client, call timeout,
// typed errors, ride-out retryer), for the packages of this module that
// run the fleet (fleetrun).
func (f *Fleet) DB() *dynamo.Table { return f.db }

// Endpoint is the DynamoDB endpoint URL the fleet talks to, or "" for the
// AWS default.
func (f *Fleet) Endpoint() string { return f.db.Conn().URL }

// DeleteTable deletes the fleet table and waits until it is gone; a table
// that does not exist is fine.
func (f *Fleet) DeleteTable(ctx context.Context) error { return f.db.DeleteAndWait(ctx) }

// Options returns a copy of the options the fleet was opened with (its
// leases, poll, clock), as an SDK client's Options does: what a process
// that starts workers passes on to them.
func (f *Fleet) Options() Options { return f.opts }

func (f *Fleet) client() *dynamodb.Client { return f.db.Client() }

func (f *Fleet) now() time.Time { return f.opts.Now() }

// Reset deletes the fleet table if it exists and creates it afresh for K
// shards: on-demand, keyed (pk, sk), with the sparse index "due"
// (claim_shard, due_at), projecting every attribute so a claimer needs no
// second read. K is recorded in the item META/CONFIG (read once by every
// worker, never written again).
func (f *Fleet) Reset(ctx context.Context, shards int) error {
	if shards < 1 || shards > MaxShards {
		return fmt.Errorf("shards %d: want 1 to %d", shards, MaxShards)
	}
	if err := f.db.DeleteAndWait(ctx); err != nil {
		return err
	}
	in := dynamo.Spec{
		Key:     dynamo.Key{Partition: dynamo.S(AttrPK), Sort: dynamo.S(AttrSK)},
		Indexes: []dynamo.Index{{Name: IndexDue, Key: dynamo.Key{Partition: dynamo.N(attrShard), Sort: dynamo.N(attrDue)}, Include: DueIndexAttributes}},
	}.Input()
	if _, err := f.db.CreateAndWait(ctx, in); err != nil {
		return err
	}
	// MEMBER items expire (AttrExpires): a worker killed leaves its item
	// behind, and the TTL sweep deletes it.
	_, err := dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.UpdateTimeToLiveOutput, error) {
		return f.client().UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(f.Table()),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(AttrExpires), Enabled: aws.Bool(true)}})
	})
	if err != nil {
		return fmt.Errorf("enable TTL (%s) on %s: %w", AttrExpires, f.Table(), err)
	}
	_, err = dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return f.client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Table()), Item: map[string]types.AttributeValue{
			AttrPK: &types.AttributeValueMemberS{Value: "META"}, AttrSK: &types.AttributeValueMemberS{Value: "CONFIG"},
			"shards": &types.AttributeValueMemberN{Value: strconv.Itoa(shards)},
		}})
	})
	if err != nil {
		return fmt.Errorf("record the shard count in %s: %w", f.Table(), err)
	}
	return nil
}

// NoFleetError says that the fleet table has not been created.
type NoFleetError struct{ Table, Endpoint string }

func (e *NoFleetError) Error() string {
	return fmt.Sprintf("fleet table %s does not exist at %s: start a fleet with `queuekit fleet --jobs N --workers W --slots S --shards K --job-ms D` (it creates the table), or `queuekit fleet submit --create --shards K ...`",
		e.Table, e.Endpoint)
}

// Shards reads K from META/CONFIG.
func (f *Fleet) Shards(ctx context.Context) (int, error) {
	out, err := dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return f.client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
			Key: key("META", "CONFIG")})
	})
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) || (err == nil && out.Item == nil) {
		return 0, &NoFleetError{Table: f.Table(), Endpoint: endpointText(f.db)}
	}
	if err != nil {
		return 0, fmt.Errorf("read the shard count of %s: %w", f.Table(), err)
	}
	var k int
	if err := attributevalue.Unmarshal(out.Item["shards"], &k); err != nil || k < 1 {
		return 0, fmt.Errorf("fleet table %s: META/CONFIG shards is malformed: recreate the table", f.Table())
	}
	return k, nil
}

func endpointText(t *dynamo.Table) string {
	if t.Conn().URL == "" {
		return "AWS"
	}
	return t.Conn().URL
}

// partition is the key condition of one partition of the fleet table:
// pk = value.
func partition(value string) (expression.Expression, error) {
	kc, err := expression.NewBuilder().WithKeyCondition(expression.Key(AttrPK).Equal(expression.Value(value))).Build()
	if err != nil {
		return kc, fmt.Errorf("build the key condition pk = %s: %w", value, err)
	}
	return kc, nil
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: &types.AttributeValueMemberS{Value: pk}, AttrSK: &types.AttributeValueMemberS{Value: sk}}
}

// TimeLayout is how scheduled_job_execution_time is written: RFC 3339 in UTC
// with milliseconds, so strings sort as times.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Job is one job item, with seed 003's attributes and the executor's.
type Job struct {
	UserID         string          `dynamodbav:"user_id" json:"user_id"`
	JobID          string          `dynamodbav:"job_id" json:"job_id"`
	JobType        string          `dynamodbav:"job_type" json:"job_type"`
	ScheduledAt    string          `dynamodbav:"scheduled_job_execution_time" json:"scheduled_job_execution_time"`
	Priority       int             `dynamodbav:"job_priority" json:"job_priority"`
	ResultLocation string          `dynamodbav:"result_location" json:"result_location"`
	Status         queuekit.Status `dynamodbav:"execution_status" json:"execution_status"`
	// CurrentRetry counts the job's own failures (its work returned an
	// error), bounded by MaxRetry; LostAttempts the attempts lost to the
	// infrastructure (a lease that ran out with no end), bounded by the
	// fleet's MaxLost.
	CurrentRetry int `dynamodbav:"current_retry" json:"current_retry"`
	MaxRetry     int `dynamodbav:"max_retry" json:"max_retry"`
	LostAttempts int `dynamodbav:"lost_attempts" json:"lost_attempts"`
	// IntervalS is job_interval in seconds; 0 is a one-off job.
	IntervalS int `dynamodbav:"job_interval" json:"job_interval"`
	// RepeatUntil ends a recurring job: no run is scheduled after it (RFC
	// 3339; "" repeats for ever).
	RepeatUntil string `dynamodbav:"repeat_until,omitempty" json:"repeat_until,omitempty"`
	Shard       int    `dynamodbav:"shard_id" json:"shard_id"`
	Attempt     int    `dynamodbav:"attempt" json:"attempt"`
	Runs        int    `dynamodbav:"runs" json:"runs"`
	Ends        int    `dynamodbav:"ends" json:"ends"`
	LastError   string `dynamodbav:"last_error,omitempty" json:"last_error,omitempty"`
	Holder      string `dynamodbav:"holder,omitempty" json:"holder,omitempty"`
	Token       int64  `dynamodbav:"fence_token" json:"fence_token"`
	// LeaseUntil is the end of the job's lease in Unix ms on its holder's
	// clock (0 when free): compared with no other clock, only watched for
	// change (see the package doc, "Clocks").
	LeaseUntil int64 `dynamodbav:"lease_until,omitempty" json:"-"`
	// TakeoverMS is, for a job whose last claim took it over from a holder
	// whose lease ran out, how long after that lease's end (the holder's
	// clock) the claim was sent (the taker's clock): an observation that
	// mixes two clocks, exact only where they agree (tests on one host).
	TakeoverMS int64 `dynamodbav:"takeover_ms,omitempty" json:"takeover_ms,omitempty"`
	// Fail makes the work of every attempt fail (a demonstration of retries
	// and dead letters): "" never, "retriable" or "fatal".
	Fail string `dynamodbav:"fail,omitempty" json:"fail,omitempty"`

	// index keys, present only while claimable
	ClaimShard *int   `dynamodbav:"claim_shard,omitempty" json:"-"`
	DueAt      *int64 `dynamodbav:"due_at,omitempty" json:"-"`
}

// InputError says that a job given to Submit is malformed: bad input, found
// before anything is written.
type InputError struct{ Field, Value, Want string }

func (e *InputError) Error() string {
	return fmt.Sprintf("job %s %q: %s", e.Field, e.Value, e.Want)
}

// Validate checks a job about to be submitted.
func (j Job) Validate() error {
	switch {
	case j.UserID == "" || len(j.UserID) > 200:
		return &InputError{"user_id", j.UserID, "want 1 to 200 characters"}
	case j.JobID == "" || len(j.JobID) > 200:
		return &InputError{"job_id", j.JobID, "want 1 to 200 characters"}
	case j.JobType == "":
		return &InputError{"job_type", j.JobType, "want a job type, e.g. report"}
	case j.Priority < 0 || j.Priority > 9:
		return &InputError{"job_priority", strconv.Itoa(j.Priority), "want 0 to 9"}
	case j.MaxRetry < 0 || j.MaxRetry > 100:
		return &InputError{"max_retry", strconv.Itoa(j.MaxRetry), "want 0 to 100"}
	case j.IntervalS < 0 || j.IntervalS > 366*86400:
		return &InputError{"job_interval", strconv.Itoa(j.IntervalS), "want seconds, 0 (one-off) to a year"}
	case j.Fail != "" && j.Fail != "retriable" && j.Fail != "fatal":
		return &InputError{"fail", j.Fail, `want "", "retriable" or "fatal"`}
	}
	at, err := parseSchedule(j.ScheduledAt)
	if err != nil {
		return &InputError{"scheduled_job_execution_time", j.ScheduledAt, "want an RFC 3339 time from 2000 to 9999, e.g. 2026-11-23T20:00:00Z"}
	}
	if j.RepeatUntil != "" {
		until, err := parseSchedule(j.RepeatUntil)
		if err != nil {
			return &InputError{"repeat_until", j.RepeatUntil, "want an RFC 3339 time from 2000 to 9999"}
		}
		if until.Before(at) {
			return &InputError{"repeat_until", j.RepeatUntil, "want a time at or after scheduled_job_execution_time " + j.ScheduledAt}
		}
	}
	return nil
}

// parseSchedule parses a schedule time (RFC 3339) and refuses times before
// 2000 or after 9999, whose due_at (Unix ms) would be negative or absurd: a
// recurring job with such a schedule would fire in a hot loop.
func parseSchedule(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if t.Year() < 2000 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("time %s: want a year from 2000 to 9999", s)
	}
	return t, nil
}

// ShardOf is the shard of a job: FNV-1a of user_id and job_id, mod K.
func ShardOf(userID, jobID string, shards int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(userID))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(jobID))
	return int(h.Sum32() % uint32(shards))
}

// item builds a new job's item: NOT_STARTED, in the due index at its
// scheduled time.
func (j Job) item(shards int) (map[string]types.AttributeValue, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	at, _ := time.Parse(time.RFC3339Nano, j.ScheduledAt)
	j.ScheduledAt = at.UTC().Format(TimeLayout)
	j.Status, j.CurrentRetry, j.LostAttempts, j.Attempt, j.Runs, j.Ends, j.Token, j.Holder, j.LastError = queuekit.StatusNotStarted, 0, 0, 0, 0, 0, 0, "", ""
	j.Shard = ShardOf(j.UserID, j.JobID, shards)
	due := at.UnixMilli()
	j.ClaimShard, j.DueAt = &j.Shard, &due
	item, err := attributevalue.MarshalMap(j)
	if err != nil {
		return nil, fmt.Errorf("marshal job %s/%s: %w", j.UserID, j.JobID, err)
	}
	item[AttrPK] = &types.AttributeValueMemberS{Value: "USER#" + j.UserID}
	item[AttrSK] = &types.AttributeValueMemberS{Value: "JOB#" + j.JobID}
	return item, nil
}

// ExistsError says that a job with this user_id and job_id was submitted
// before.
type ExistsError struct{ UserID, JobID string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("job %s of user %s exists already: choose another job_id (view it with `queuekit fleet view --user %s --job %s`)",
		e.JobID, e.UserID, e.UserID, e.JobID)
}

// SubmitJob is seed 003's submitJob: it writes one NOT_STARTED job with a
// PutItem that refuses to replace an existing job (*ExistsError).
func (f *Fleet) SubmitJob(ctx context.Context, j Job) (Job, error) {
	k, err := f.Shards(ctx)
	if err != nil {
		return Job{}, err
	}
	item, err := j.item(k)
	if err != nil {
		return Job{}, err
	}
	absent, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name(AttrPK))).Build()
	if err != nil {
		return Job{}, fmt.Errorf("submit job %s of user %s: build the condition: %w", j.JobID, j.UserID, err)
	}
	_, err = dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.PutItemOutput, error) {
		return f.client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.Table()), Item: item,
			ConditionExpression: absent.Condition(), ExpressionAttributeNames: absent.Names()})
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return Job{}, &ExistsError{j.UserID, j.JobID}
	}
	if err != nil {
		return Job{}, fmt.Errorf("submit job %s of user %s: %w", j.JobID, j.UserID, err)
	}
	return unmarshalJob(item)
}

// SubmitReport is what SubmitJobs wrote.
type SubmitReport = catalog.SeedReport

// SubmitJobs submits many jobs with BatchWriteItem (the catalog's writer:
// 25 a request, parallel, unprocessed items retried). Every job is validated
// first; on any problem nothing is written. A job that exists is replaced.
func (f *Fleet) SubmitJobs(ctx context.Context, jobs []Job, opts ...catalog.SeedOption) (SubmitReport, error) {
	k, err := f.Shards(ctx)
	if err != nil {
		return SubmitReport{}, err
	}
	items := make([]map[string]types.AttributeValue, 0, len(jobs))
	seen := make(map[[2]string]bool, len(jobs))
	for i, j := range jobs {
		if seen[[2]string{j.UserID, j.JobID}] {
			return SubmitReport{}, fmt.Errorf("job %d: user %s job %s given twice", i+1, j.UserID, j.JobID)
		}
		seen[[2]string{j.UserID, j.JobID}] = true
		item, err := j.item(k)
		if err != nil {
			return SubmitReport{}, fmt.Errorf("job %d: %w", i+1, err)
		}
		items = append(items, item)
	}
	return catalog.PutItemsTo(ctx, f.db, items, opts...)
}

func unmarshalJob(item map[string]types.AttributeValue) (Job, error) {
	var j Job
	if err := attributevalue.UnmarshalMap(item, &j); err != nil {
		return Job{}, fmt.Errorf("job item %v: %w", item[AttrSK], err)
	}
	return j, nil
}

// ListAllJobs is seed 003's listAllJobs(user_id): one paginated Query on the
// table's own key, pk = USER#<user_id> AND begins_with(sk, "JOB#"), in
// job_id order. Never a Scan.
func (f *Fleet) ListAllJobs(ctx context.Context, userID string) ([]Job, error) {
	kc := expression.Key(AttrPK).Equal(expression.Value("USER#" + userID)).And(expression.Key(AttrSK).BeginsWith("JOB#"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	var jobs []Job
	for out, err := range f.db.QueryPages(ctx, in) {
		if err != nil {
			var missing *catalog.TableMissingError
			if errors.As(err, &missing) {
				return nil, &NoFleetError{Table: f.Table(), Endpoint: endpointText(f.db)}
			}
			return nil, fmt.Errorf("list the jobs of user %s: %w", userID, err)
		}
		for _, it := range out.Items {
			j, err := unmarshalJob(it)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// NotFoundError says that viewJob found no such job.
type NotFoundError struct{ UserID, JobID string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no job %s for user %s: `queuekit fleet list --user %s` lists that user's jobs", e.JobID, e.UserID, e.UserID)
}

// ViewJob is seed 003's viewJob(user_id, job_id): one GetItem (strongly
// consistent, so a job just submitted or ended reads as it is).
func (f *Fleet) ViewJob(ctx context.Context, userID, jobID string) (Job, error) {
	out, err := dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.GetItemOutput, error) {
		return f.client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
			Key: key("USER#"+userID, "JOB#"+jobID)})
	})
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) {
		return Job{}, &NoFleetError{Table: f.Table(), Endpoint: endpointText(f.db)}
	}
	if err != nil {
		return Job{}, fmt.Errorf("view job %s of user %s: %w", jobID, userID, err)
	}
	if out.Item == nil {
		return Job{}, &NotFoundError{userID, jobID}
	}
	return unmarshalJob(out.Item)
}

// DeadLetter is one dead-lettered job.
type DeadLetter struct {
	UserID    string `dynamodbav:"user_id" json:"user_id"`
	JobID     string `dynamodbav:"job_id" json:"job_id"`
	Attempts  int    `dynamodbav:"attempts" json:"attempts"`
	LastError string `dynamodbav:"last_error" json:"last_error"`
	At        string `dynamodbav:"at" json:"at"`
}

// DeadLetterKeys is how many partition keys the dead letters are spread
// over (pk = DLQ#00 to DLQ#15, by a hash of the job's key): a dead letter
// is a transactional put, 2 write units, so one key would take at most
// 500 a second; 16 take 8,000, more than a cell's jobs a second.
const DeadLetterKeys = 16

// DeadLetterKey is the partition key of job (userID, jobID)'s dead letter.
func DeadLetterKey(userID, jobID string) string {
	return deadLetterKey(ShardOf(userID, jobID, DeadLetterKeys))
}

// deadLetterKey is the k-th of the DeadLetterKeys keys, DLQ#00 to DLQ#15.
func deadLetterKey(k int) string { return fmt.Sprintf("DLQ#%02d", k) }

// DeadLetters reads the dead letters, a paginated Query of each of the
// DeadLetterKeys keys, ordered by user and job.
func (f *Fleet) DeadLetters(ctx context.Context) ([]DeadLetter, error) {
	var out []DeadLetter
	for k := range DeadLetterKeys {
		key := deadLetterKey(k)
		kc, err := partition(key)
		if err != nil {
			return nil, fmt.Errorf("read dead letters: %w", err)
		}
		in := &dynamodb.QueryInput{TableName: aws.String(f.Table()),
			KeyConditionExpression: kc.KeyCondition(), ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values()}
		for page, err := range f.db.QueryPages(ctx, in) {
			if err != nil {
				return nil, fmt.Errorf("read dead letters (%s): %w", key, err)
			}
			var ds []DeadLetter
			if err := attributevalue.UnmarshalListOfMaps(page.Items, &ds); err != nil {
				return nil, err
			}
			out = append(out, ds...)
		}
	}
	slices.SortFunc(out, func(a, b DeadLetter) int {
		return cmp.Or(strings.Compare(a.UserID, b.UserID), strings.Compare(a.JobID, b.JobID))
	})
	return out, nil
}
