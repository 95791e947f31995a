package dynamo

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// silent is a table whose endpoint accepts connections and never answers
// (a real listener that reads nothing and writes nothing), called with
// callTimeout and one try.
func silent(t *testing.T, callTimeout time.Duration) *Table {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // keep it open, say nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	conn := &awsapi.Conn{Service: awsapi.DynamoDB, URL: "http://" + l.Addr().String(), Local: true, Config: aws.Config{Region: "us-east-1",
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1}}
	return New(conn, "silent", Options{CallTimeout: callTimeout})
}

// An error of a call that got no answer names the deadline that expired
// (issue 34): the caller's, when it came before the call timeout (it said
// "no answer within 30s" when a 300 ms deadline had expired), or the call
// timeout, when that came first.
func TestNoAnswerNamesTheDeadlineThatExpired(t *testing.T) {
	get := func(ctx context.Context, tb *Table) error {
		_, err := Call(ctx, tb, func(ctx context.Context) (*dynamodb.DescribeTableOutput, error) {
			return tb.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tb.name)})
		})
		return err
	}
	for _, c := range []struct {
		name             string
		call, caller     time.Duration // 0: the caller sets no deadline
		want, wantAbsent string
	}{
		{"caller's deadline first", 5 * time.Second, 300 * time.Millisecond, "no answer within 300ms, the caller's deadline (the call timeout is 5s)", "within 5s"},
		{"call timeout first", 300 * time.Millisecond, 0, "no answer within 300ms, the call timeout", "caller"},
		{"call timeout before the caller's", 300 * time.Millisecond, 5 * time.Second, "no answer within 300ms, the call timeout", "caller"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := silent(t, c.call)
			ctx := context.Background()
			if c.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.caller)
				defer cancel()
			}
			start := time.Now()
			err := get(ctx, tb)
			var un *awsapi.UnreachableError
			if !errors.As(err, &un) {
				t.Fatalf("after %s: %v; want an UnreachableError", time.Since(start).Round(time.Millisecond), err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, c.wantAbsent) {
				t.Fatalf("error %q; want it to name %q and not %q", msg, c.want, c.wantAbsent)
			}
			t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}
