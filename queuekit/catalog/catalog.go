// Package catalog is the DynamoDB job catalog of the nightly queue: the table
// db_batch_window_requests (partition key batch_date, sort key
// window_job_id = <requested_window>#<job_id>, on-demand billing), its
// creation, seeding with BatchWriteItem, and the two ways to read one night:
// QueryNight (the access pattern the table is designed for) and ScanNight
// (Scan with a filter, the anti-pattern kept for comparison). Both return an
// AccessReport: items returned, items scanned, read capacity, pages, time.
// GetJob reads one job by its id.
//
// The key schema is an option: KeyByNight (the design above, the default) or
// KeyByJobID (job_id alone, the poor key the schema notebook measures), so a
// table keyed the wrong way is just another catalog, with the same clients,
// call timeouts and typed errors. Seeding and parallel Scan run on errgroup
// with a limit; the first failure cancels the rest.
//
// The same code runs against DynamoDB Local and AWS:
//
//   - a local endpoint (localhost, a loopback address, or a one-label host
//     such as the docker-compose service "dynamodb-local") gets static dummy
//     credentials and no response checksum validation, because DynamoDB Local
//     accepts any credentials and omits checksums on errors;
//   - any other endpoint, or none, goes through the standard AWS configuration
//     chain (AWS_ENDPOINT_URL_DYNAMODB, AWS_PROFILE, AWS_REGION, ...): the
//     dummy credentials are never sent there.
//
// Items are mapped to queuekit.Job with attributevalue and the Job struct
// tags; an item that is malformed gives the same *queuekit.FieldError text as
// the JSON Lines loader, located at the item's key.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// DefaultTable is the table of the job catalog.
const DefaultTable = queuekit.TableName

// EnvEndpoint is the standard AWS variable naming the DynamoDB endpoint.
const EnvEndpoint = awsapi.DynamoDBEnv

// LocalRegion is the region used with DynamoDB Local when none is given. With
// -sharedDb, Local keeps one database whatever the region and credentials.
const LocalRegion = awsapi.LocalRegion

// Hints printed with errors a person can act on.
const (
	StartLocalHint = awsapi.DynamoDBStartHint
	SeedHint       = "create and seed it with `go run ./queuekit/cmd/queuekit seed --sample`"
)

// Options configure a Catalog. Set them with the With... functions.
type Options struct {
	// Endpoint is the DynamoDB endpoint URL. Empty means AWS_ENDPOINT_URL_DYNAMODB
	// if set, otherwise the AWS default for the region.
	Endpoint string
	// Region overrides the region of the configuration chain (default
	// LocalRegion for a local endpoint).
	Region string
	// Profile selects a shared-config profile (AWS only).
	Profile string
	// Table is the table name (default DefaultTable).
	Table string
	// Key is the table's key schema (default KeyByNight).
	Key KeySchema
	// JobIndex adds the global secondary index JobIndex (partition key
	// job_id) when the table is created, and GetJob reads through it
	// (KeyByNight only; see WithJobIndex).
	JobIndex bool
	// Window is the batch window jobs are validated against (default
	// queuekit.DefaultWindow).
	Window queuekit.Window
	// CallTimeout bounds every single DynamoDB call (default 30 s).
	CallTimeout time.Duration
	// WaitTimeout bounds waiting for a table to become active or deleted
	// (default 2 min).
	WaitTimeout time.Duration
	// Writers is the number of parallel BatchWriteItem writers (default 4).
	Writers int
	// MaxAttempts is how many times one batch is sent while DynamoDB returns
	// UnprocessedItems (default 10).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the exponential backoff with full
	// jitter between attempts (defaults 25 ms and 2 s).
	BaseBackoff, MaxBackoff time.Duration
	// ClientOptions are applied last to the SDK client's options, e.g. to set
	// an HTTP client or the retryer.
	ClientOptions []func(*dynamodb.Options)
	// ItemKeys, when set, key the table by other attributes than a job's (see
	// WithItemKeys); Indexes are global secondary indexes created with it (see
	// WithIndex).
	ItemKeys *ItemKeys
	Indexes  []Index
}

// Option is one functional option of New: a func(*Options), the SDK's optFns
// form. It is an alias, so the With helpers and a plain func literal mix.
type Option = func(*Options)

// WithEndpoint sets the endpoint URL, e.g. http://localhost:8000.
func WithEndpoint(url string) Option { return func(o *Options) { o.Endpoint = url } }

// WithRegion sets the region.
func WithRegion(region string) Option { return func(o *Options) { o.Region = region } }

// WithProfile selects a shared-config profile (AWS only).
func WithProfile(profile string) Option { return func(o *Options) { o.Profile = profile } }

// WithTable sets the table name (default DefaultTable); tests use one table each.
func WithTable(name string) Option { return func(o *Options) { o.Table = name } }

// WithKeySchema sets the table's key schema: KeyByNight (the default) or
// KeyByJobID, the poor key the schema notebook measures.
func WithKeySchema(k KeySchema) Option { return func(o *Options) { o.Key = k } }

// WithWindow sets the batch window jobs are validated against.
func WithWindow(w queuekit.Window) Option { return func(o *Options) { o.Window = w } }

// WithCallTimeout bounds every single DynamoDB call.
func WithCallTimeout(d time.Duration) Option { return func(o *Options) { o.CallTimeout = d } }

// WithWriters sets the number of parallel BatchWriteItem writers.
func WithWriters(n int) Option { return func(o *Options) { o.Writers = n } }

// WithRetry sets how often a batch with UnprocessedItems is sent again, and
// the bounds of the exponential backoff with full jitter between attempts.
func WithRetry(maxAttempts int, base, max time.Duration) Option {
	return func(o *Options) { o.MaxAttempts, o.BaseBackoff, o.MaxBackoff = maxAttempts, base, max }
}

// WithClientOptions adds options applied to the SDK client.
func WithClientOptions(fns ...func(*dynamodb.Options)) Option {
	return func(o *Options) { o.ClientOptions = append(o.ClientOptions, fns...) }
}

// Catalog is the job catalog in one DynamoDB table. It is safe for
// concurrent use.
type Catalog struct {
	db   *dynamo.Table // client, endpoint, timeouts, typed errors: the AWS layer
	opts Options
}

// OptionError says that an option given to New is malformed (a table name, an
// endpoint URL, a count): bad input, found before anything is contacted. An
// AWS configuration that cannot be loaded is not an OptionError.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// New returns a catalog client. It does not contact DynamoDB; the first call
// does, and fails with an *UnreachableError if nothing answers. Malformed
// options give an *OptionError.
func New(ctx context.Context, opts ...Option) (*Catalog, error) {
	o := Options{
		Table:       DefaultTable,
		Window:      queuekit.DefaultWindow,
		CallTimeout: 30 * time.Second,
		WaitTimeout: 2 * time.Minute,
		Writers:     4,
		MaxAttempts: 10,
		BaseBackoff: 25 * time.Millisecond,
		MaxBackoff:  2 * time.Second,
	}
	for _, fn := range opts {
		fn(&o)
	}
	if err := validTableName(o.Table); err != nil {
		return nil, err
	}
	if o.Key != KeyByNight && o.Key != KeyByJobID {
		return nil, &OptionError{fmt.Sprintf("catalog options: %s: use catalog.KeyByNight or catalog.KeyByJobID", o.Key)}
	}
	if o.Writers < 1 || o.MaxAttempts < 1 || o.CallTimeout <= 0 || o.WaitTimeout <= 0 {
		return nil, &OptionError{fmt.Sprintf("catalog options: writers = %d, max attempts = %d, call timeout = %s, wait timeout = %s: each must be positive",
			o.Writers, o.MaxAttempts, o.CallTimeout, o.WaitTimeout)}
	}
	conn, err := awsapi.Load(ctx, awsapi.DynamoDB, awsapi.Endpoint{URL: o.Endpoint, Region: o.Region, Profile: o.Profile})
	var badPrefix *awsapi.NamePrefixError
	if errors.As(err, &badPrefix) {
		return nil, &OptionError{badPrefix.Error()}
	}
	if errors.Is(err, awsapi.ErrNotURL) {
		ep := o.Endpoint
		if ep == "" {
			ep = os.Getenv(EnvEndpoint)
		}
		return nil, &OptionError{fmt.Sprintf("endpoint %q: not a URL; write it as http://localhost:8000", ep)}
	}
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration (profile %q, region %q): %w; check AWS_PROFILE, AWS_REGION and ~/.aws/config", o.Profile, o.Region, err)
	}
	db := dynamo.New(conn, o.Table, dynamo.Options{
		CallTimeout: o.CallTimeout, WaitTimeout: o.WaitTimeout,
		Writers: o.Writers, MaxAttempts: o.MaxAttempts, BaseBackoff: o.BaseBackoff, MaxBackoff: o.MaxBackoff,
		MissingHint: missingHint, ClientOptions: o.ClientOptions,
	})
	return &Catalog{db: db, opts: o}, nil
}

// missingHint says how to create a missing table: seed it, naming the table
// and the endpoint when they are not the defaults.
func missingHint(table, endpoint string) string {
	hint := strings.TrimSuffix(SeedHint, "`")
	if table != DefaultTable {
		hint += " --table " + table
	}
	if strings.Contains(endpoint, "://") {
		// Name the endpoint too: without it the command would go to AWS.
		hint += " --endpoint " + endpoint
	}
	return hint + "`"
}

// IsLocalEndpoint reports whether endpoint is a DynamoDB Local: its host is
// localhost, a loopback or unspecified address, or a name without dots (a
// docker-compose service such as dynamodb-local). Only such endpoints get the
// dummy credentials.
func IsLocalEndpoint(endpoint string) bool { return awsapi.IsLocalEndpoint(endpoint) }

func validTableName(name string) error {
	if !dynamo.ValidName(name) {
		return &OptionError{fmt.Sprintf("table name %q: DynamoDB wants 3 to 255 characters from a-z, A-Z, 0-9, '_', '-', '.'; e.g. %s", name, DefaultTable)}
	}
	return nil
}

// Table returns the table name.
func (c *Catalog) Table() string { return c.opts.Table }

// Endpoint returns the endpoint URL in use, or "" for the AWS default.
func (c *Catalog) Endpoint() string { return c.db.Conn().URL }

// Local reports whether the catalog talks to a DynamoDB Local.
func (c *Catalog) Local() bool { return c.db.Conn().Local }

// KeySchema returns the table's key schema.
func (c *Catalog) KeySchema() KeySchema { return c.opts.Key }

// Window returns the batch window jobs are validated against.
func (c *Catalog) Window() queuekit.Window { return c.opts.Window }

// Client returns the underlying SDK client, for calls the catalog does not wrap.
func (c *Catalog) Client() *dynamodb.Client { return c.db.Client() }

// where names the endpoint for messages.
func (c *Catalog) where() string { return c.db.Where() }

// call runs one DynamoDB call under the call timeout and turns transport and
// missing-table errors into errors a person can act on.
func call[T any](ctx context.Context, c *Catalog, fn func(ctx context.Context) (T, error)) (T, error) {
	return dynamo.Call(ctx, c.db, fn)
}

// DB returns the catalog's table in the AWS layer, for packages of this
// module that call DynamoDB through it directly. A package with a table of
// its own opens it from there (c.DB().Open(name), RidingOut for a client
// that rides out outages): the table handle, not the job catalog, is what
// it holds.
func (c *Catalog) DB() *dynamo.Table { return c.db }
