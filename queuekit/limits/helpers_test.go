package limits

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// clock is a clock the test moves by hand, so that "one second" of the
// layer is exactly what the test says, whatever the machine's speed.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a layer on a free port in front of the tests' DynamoDB Local,
// with a hand-moved clock and a client with no retries (so every throttle
// is seen).
type fixture struct {
	t      testing.TB
	s      *Server
	clk    *clock
	db     *dynamodb.Client // through the layer
	direct *dynamodb.Client // DynamoDB Local itself
	ep     string
}

func newFixture(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	ep := ddbtest.Endpoint(t)
	clk := newClock()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, ep, "", append([]Option{WithClock(clk.Now)}, opts...)...)
	if err != nil {
		cancel()
		t.Fatalf("start the layer: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = s.Close() })
	return &fixture{t: t, s: s, clk: clk, db: client(s.URL, aws.NopRetryer{}), direct: client(ep, aws.NopRetryer{}), ep: ep}
}

func client(endpoint string, r aws.Retryer) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		BaseEndpoint: aws.String(endpoint), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		Retryer:     r, Logger: logging.Nop{},
	})
}

// table creates a table (through the layer, so the layer reads its mode)
// and deletes it when the test ends.
func (f *fixture) table(in *dynamodb.CreateTableInput) string {
	f.t.Helper()
	name := ddbtest.TableName(f.t)
	in.TableName = aws.String(name)
	if in.KeySchema == nil {
		in.KeySchema = []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS})
	}
	// Through the layer too, but with the SDK's standard retries: the
	// table is the test's setup, not what it measures, and DynamoDB Local
	// answers a CreateTable with a transient 500 InternalFailure now and
	// then while other tests create and delete tables beside it.
	setup := client(f.s.URL, retry.NewStandard())
	if _, err := setup.CreateTable(context.Background(), in); err != nil {
		f.t.Fatalf("create table %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		_, _ = f.direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

func onDemand() *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{BillingMode: types.BillingModePayPerRequest}
}

func item(pk, sk string, extra ...string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	for i := 0; i+1 < len(extra); i += 2 {
		it[extra[i]] = &types.AttributeValueMemberS{Value: extra[i+1]}
	}
	return it
}

// outcome counts what a batch of calls got: successes and throttles by
// exception and reason.
type outcome struct {
	ok      int
	byExc   map[string]int
	reasons map[string]int
	arns    map[string]bool
	other   []error
}

func (o *outcome) add(err error) {
	if o.byExc == nil {
		o.byExc, o.reasons, o.arns = map[string]int{}, map[string]int{}, map[string]bool{}
	}
	var pte *types.ProvisionedThroughputExceededException
	var te *types.ThrottlingException
	switch {
	case err == nil:
		o.ok++
	case errors.As(err, &pte):
		o.byExc[ExcProvisioned]++
		for _, r := range pte.ThrottlingReasons {
			o.reasons[aws.ToString(r.Reason)]++
			o.arns[aws.ToString(r.Resource)] = true
		}
	case errors.As(err, &te):
		o.byExc[ExcThrottling]++
		for _, r := range te.ThrottlingReasons {
			o.reasons[aws.ToString(r.Reason)]++
			o.arns[aws.ToString(r.Resource)] = true
		}
	default:
		o.other = append(o.other, err)
	}
}

func (o *outcome) throttled() int {
	n := 0
	for _, v := range o.byExc {
		n += v
	}
	return n
}

func (o *outcome) String() string {
	return fmt.Sprintf("%d ok, throttled %v, reasons %v, other errors %v", o.ok, o.byExc, o.reasons, o.other)
}

// puts writes n items one after the other; key(i) gives pk and sk.
func (f *fixture) puts(name string, n int, key func(i int) (string, string), extra ...string) *outcome {
	o := &outcome{}
	for i := range n {
		pk, sk := key(i)
		_, err := f.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: item(pk, sk, extra...)})
		o.add(err)
	}
	return o
}

func (f *fixture) arn(name string) string {
	return "arn:aws:dynamodb:us-east-1:000000000000:table/" + name
}
