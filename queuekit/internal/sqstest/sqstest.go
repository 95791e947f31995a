// Package sqstest gives integration tests a real SQS server (ElasticMQ) and
// queue names of their own.
//
// The server is the one AWS_ENDPOINT_URL_SQS names; `make test` starts it
// through `queuekit servers with` and exports the variable. When the variable is
// unset, names a non-local endpoint, or nothing answers there, the test fails
// with one line saying how to start it; it never skips.
package sqstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

var (
	once     sync.Once
	endpoint string
	problem  string
)

// Endpoint returns the endpoint of a running local SQS server or fails the
// test with the command to run.
func Endpoint(t testing.TB) string {
	t.Helper()
	once.Do(func() { endpoint, problem = find() })
	if problem != "" {
		t.Fatal(problem)
	}
	return endpoint
}

func find() (string, string) {
	ep := os.Getenv(sqsqueue.EnvEndpoint)
	how := "start it with `make sqs` (or `queuekit servers start sqs`) and export " + sqsqueue.EnvEndpoint + "=http://127.0.0.1:9324"
	if ep == "" {
		return "", sqsqueue.EnvEndpoint + " is not set: " + how
	}
	if !awsapi.IsLocalEndpoint(ep) {
		return "", sqsqueue.EnvEndpoint + "=" + ep + " is not a local endpoint; the tests create and delete queues: " + how
	}
	// The first request to an ElasticMQ that `queuekit servers` starts on
	// demand waits while its JVM starts (seconds, more on a loaded machine):
	// the supervisor holds the connection until the JVM answers.
	c := http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Get(strings.TrimRight(ep, "/") + "/?Action=ListQueues")
	if err != nil {
		return "", "no SQS server answers at " + ep + " (" + err.Error() + "): " + how
	}
	resp.Body.Close()
	return ep, ""
}

// Client returns a queue client on the test server.
func Client(t testing.TB) *sqsqueue.Client {
	t.Helper()
	c, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint(Endpoint(t)))
	if err != nil {
		t.Fatalf("SQS client: %v", err)
	}
	return c
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Name returns a queue-name prefix unique to this test and run (SQS allows
// 80 characters of A-Z, a-z, 0-9, '-' and '_'; room is left for "-dlq").
func Name(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random queue suffix: %v", err)
	}
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 55 {
		name = name[len(name)-55:]
	}
	return "t-" + name + "-" + hex.EncodeToString(b[:])
}

// Cleanup deletes the queues when the test ends.
func Cleanup(t testing.TB, c *sqsqueue.Client, qs ...sqsqueue.Queue) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, q := range qs {
			if err := c.Delete(ctx, q); err != nil {
				t.Errorf("delete queue %s: %v", q.Name, err)
			}
		}
	})
}
