package toxitest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/toxitest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	toxitest.Stop()
	os.Exit(code)
}

// through returns a client of the table behind endpoint (a proxy) and one
// straight to DynamoDB Local, with the table created.
func through(t *testing.T, endpoint string, opts ...catalog.Option) (via, direct *dynamodb.Client, table string) {
	t.Helper()
	cat := ddbtest.Catalog(t)
	all := append([]catalog.Option{catalog.WithEndpoint(endpoint), catalog.WithTable(cat.Table())}, opts...)
	c, err := catalog.New(context.Background(), all...)
	if err != nil {
		t.Fatal(err)
	}
	return c.Client(), cat.Client(), cat.Table()
}

func put(ctx context.Context, c *dynamodb.Client, table, id string) error {
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"batch_date": &types.AttributeValueMemberS{Value: "2027-01-01"}, "window_job_id": &types.AttributeValueMemberS{Value: id}}})
	return err
}

func has(t *testing.T, c *dynamodb.Client, table, id string) bool {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"batch_date": &types.AttributeValueMemberS{Value: "2027-01-01"}, "window_job_id": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		t.Fatalf("read %s back: %v", id, err)
	}
	return out.Item != nil
}

// A lost reply: the write reaches DynamoDB Local and lands, its reply never
// comes back, the SDK retries (each retry's reply is lost too) and the call
// fails; reading the table straight shows the write landed. After the toxic
// is removed, calls through the proxy work again.
func TestLoseRepliesWriteLands(t *testing.T) {
	t.Parallel()
	ep := ddbtest.Endpoint(t)
	p := toxitest.NewProxy(t, ep)
	via, direct, table := through(t, p.URL, catalog.WithCallTimeout(10*time.Second))
	if err := put(context.Background(), via, table, "before"); err != nil {
		t.Fatalf("put through a clean proxy: %v", err)
	}
	remove := p.LoseReplies(t, 1, 300*time.Millisecond)
	err := put(context.Background(), via, table, "lost")
	if err == nil {
		t.Fatal("put with every reply lost succeeded; want an error")
	}
	if !has(t, direct, table, "lost") {
		t.Fatal("the write whose reply was lost is not in the table; the toxic dropped the request, not the reply")
	}
	remove()
	if err := put(context.Background(), via, table, "after"); err != nil {
		t.Fatalf("put after removing the toxic: %v", err)
	}
}

// A slow call longer than the client's timeout: the call fails, the write
// landed.
func TestSlowCallTimesOutWriteLands(t *testing.T) {
	p := toxitest.NewProxy(t, ddbtest.Endpoint(t))
	via, direct, table := through(t, p.URL)
	p.Slow(t, 1, 5*time.Second, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := put(ctx, via, table, "slow"); err == nil {
		t.Fatal("a put whose reply is 5 s late returned within a 500 ms deadline")
	}
	if !has(t, direct, table, "slow") {
		t.Fatal("the slow write is not in the table")
	}
}

// Reset connections fail the call; a cut proxy refuses calls until restored.
func TestResetAndCut(t *testing.T) {
	t.Parallel()
	p := toxitest.NewProxy(t, ddbtest.Endpoint(t))
	via, _, table := through(t, p.URL, catalog.WithCallTimeout(5*time.Second))
	remove := p.ResetPeer(t, 1, 0)
	if err := put(context.Background(), via, table, "reset"); err == nil {
		t.Fatal("a put over reset connections succeeded")
	}
	remove()
	p.Cut(t)
	if err := put(context.Background(), via, table, "cut"); err == nil {
		t.Fatal("a put through a disabled proxy succeeded")
	}
	p.Restore(t)
	if err := put(context.Background(), via, table, "restored"); err != nil {
		t.Fatalf("put after Restore: %v", err)
	}
}

// A router aims a toxic at one kind of request: reads lose their replies,
// writes do not.
func TestRouterFaultsOneKind(t *testing.T) {
	t.Parallel()
	r := toxitest.NewRouter(t, ddbtest.Endpoint(t), func(op string, _ []byte) string {
		if op == "GetItem" {
			return "read"
		}
		return ""
	}, "read")
	via, direct, table := through(t, r.Default.URL, catalog.WithCallTimeout(5*time.Second),
		catalog.WithClientOptions(func(o *dynamodb.Options) { o.HTTPClient = r.HTTPClient() }))
	r.Proxy(t, "read").LoseReplies(t, 1, 200*time.Millisecond)
	if err := put(context.Background(), via, table, "w"); err != nil {
		t.Fatalf("a write through the router with only reads faulted: %v", err)
	}
	if !has(t, direct, table, "w") {
		t.Fatal("the write is not in the table")
	}
	_, err := via.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"batch_date": &types.AttributeValueMemberS{Value: "2027-01-01"}, "window_job_id": &types.AttributeValueMemberS{Value: "w"}}})
	if err == nil {
		t.Fatal("a read through the faulted read proxy succeeded")
	}
	if n := r.Count("read"); n < 2 {
		t.Errorf("reads sent: %d, want at least 2 (the SDK retries a lost reply)", n)
	}
	if n := r.Count(""); n != 1 {
		t.Errorf("other requests sent: %d, want 1 (the put)", n)
	}
}
