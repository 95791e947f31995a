package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// stoppedEndpoint returns the URL of a loopback port where nothing listens:
// a port the kernel just gave out and that was closed at once.
func stoppedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := "http://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return ep
}

// notAServer starts an HTTP server that answers every request as a web
// server does (HTML, 200), and returns its URL.
func notAServer(t *testing.T) string {
	t.Helper()
	return answering(t, "text/html", "<!doctype html><html><body>hello</body></html>")
}

// answering starts an HTTP server that answers every request with 200 and
// body as contentType, and returns its URL.
func answering(t *testing.T, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// otherServers are servers that answer every request with 200 but are not
// DynamoDB or SQS: a web server, and two JSON servers whose replies the SDK
// can read (every member missing).
func otherServers(t *testing.T) map[string]string {
	return map[string]string{
		"web server":       notAServer(t),
		"JSON {}":          answering(t, "application/json", "{}"),
		"JSON hello world": answering(t, "application/json", `{"hello":"world"}`),
	}
}

// dynamoCommands is every command that talks to DynamoDB, with the flags it
// needs to get that far (nothing else is wrong in them); the endpoint is
// appended as --endpoint.
var dynamoCommands = [][]string{
	{"tutorial", "--source", "dynamodb", "--batch-date", "2026-05-13"},
	{"seed", "--sample"},
	{"access", "--batch-date", "2026-05-13"},
	{"reset"},
	{"run", "--batch-date", "2026-05-13", "--workers", "3"},
	{"worker", "--batch-date", "2026-05-13", "--slots", "1", "--wait", "0s"},
	{"status", "--batch-date", "2026-05-13"},
	{"timers", "--count", "1"},
	{"fanout", "--slices", "2"},
	{"fleet", "--jobs", "10", "--workers", "1", "--slots", "1", "--shards", "1", "--job-ms", "0"},
	{"fleet-worker", "--shards", "1", "--slots", "1"},
	{"fleet", "submit", "--user", "u1", "--job", "j1"},
	{"fleet", "list", "--user", "u1"},
	{"fleet", "view", "--user", "u1", "--job", "j1"},
}

// checkOneLine asserts exit 1 and exactly one stderr line holding every want.
func checkOneLine(t *testing.T, args []string, code int, stdout, stderr string, want ...string) {
	t.Helper()
	if code != 1 {
		t.Errorf("%v: exit %d, want 1 (a server's failure is not a usage error); stderr %q", args, code, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("%v: stderr %q, want exactly one line", args, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%v: stderr %q lacks %q", args, stderr, w)
		}
	}
	for _, raw := range []string{"deserialization failed", "invalid character", "operation error", "goroutine"} {
		if strings.Contains(stderr, raw) {
			t.Errorf("%v: stderr %q shows raw SDK or runtime text %q", args, stderr, raw)
		}
	}
	if stdout != "" {
		t.Errorf("%v: stdout %q, want nothing", args, stdout)
	}
}

// Every command that talks to DynamoDB, pointed at a stopped endpoint, exits
// 1 with one line naming the endpoint and how to start DynamoDB Local.
func TestEveryDynamoDBCommandOnAStoppedEndpointExits1(t *testing.T) {
	t.Parallel()
	ep := stoppedEndpoint(t)
	for _, c := range dynamoCommands {
		args := append(append([]string{}, c...), "--endpoint", ep)
		out, errOut, code := runDynamoCLI(t, args...)
		checkOneLine(t, args, code, out, errOut, ep, "is unreachable", "queuekit servers start dynamodb")
	}
}

// Every command that talks to DynamoDB, pointed at a web server, exits 1
// with one line saying that the endpoint answers but is not DynamoDB, naming
// it and the variable to fix.
func TestEveryDynamoDBCommandOnAnotherServerSaysSo(t *testing.T) {
	for kind, ep := range otherServers(t) {
		for _, c := range dynamoCommands {
			args := append(append([]string{}, c...), "--endpoint", ep)
			out, errOut, code := runDynamoCLI(t, args...)
			t.Logf("%s: %v: %s", kind, args, errOut)
			checkOneLine(t, args, code, out, errOut, "the server at "+ep+" answers but is not DynamoDB", "AWS_ENDPOINT_URL_DYNAMODB")
		}
	}
}

// fanout, the command that talks to SQS, with a real DynamoDB holding its
// nights: a stopped SQS endpoint, a web server and JSON servers each give exit 1 and one
// line naming the endpoint and what to do; nothing is created.
func TestFanoutOnAStoppedOrWrongSQSEndpoint(t *testing.T) {
	t.Parallel()
	ddb := ddbtest.Endpoint(t)
	table := seededTable(t)
	stopped := stoppedEndpoint(t)
	cases := []struct {
		sqs  string
		want []string
	}{
		{stopped, []string{"SQS at " + stopped + " is unreachable", "queuekit servers start sqs"}},
	}
	for _, other := range otherServers(t) {
		cases = append(cases, struct {
			sqs  string
			want []string
		}{other, []string{"the server at " + other + " answers but is not SQS", "AWS_ENDPOINT_URL_SQS", "queuekit servers start sqs"}})
	}
	for _, tc := range cases {
		results := ddbtest.TableName(t)
		args := []string{"fanout", "--slices", "4", "--endpoint", ddb, "--table", table, "--sqs-endpoint", tc.sqs, "--results-table", results}
		out, errOut, code := runDynamoCLI(t, args...)
		checkOneLine(t, args, code, out, errOut, tc.want...)
		if exists(t, ddb, results) {
			t.Errorf("%v: the results table %s was created before SQS was found wrong", args, results)
		}
	}
}

// exists reports whether table exists at the DynamoDB endpoint ep.
func exists(t *testing.T, ep, table string) bool {
	t.Helper()
	c, err := openCatalog(context.Background(), ep, table)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := c.Exists(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
