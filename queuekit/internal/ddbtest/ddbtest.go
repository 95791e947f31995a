// Package ddbtest gives integration tests a real DynamoDB Local and a table
// of their own.
//
// Endpoint finds the server: AWS_ENDPOINT_URL_DYNAMODB if set (it must be a
// local endpoint: tests never create tables in AWS), otherwise DynamoDB Local
// on DYNAMODB_PORT (default 8001, the tests' own port, as `make test` uses)
// if DynamoDB answers there (a ListTables call, not just any HTTP server),
// otherwise it
// runs `queuekit servers start dynamodb` (go run), which installs DynamoDB
// Local when needed. If none of that works the test fails with the command
// to run; it never skips. A server the helper starts keeps running after the
// tests, for the next run; `queuekit servers stop dynamodb` (with the same
// DYNAMODB_PORT) stops it.
package ddbtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// DefaultPort is the port of the tests' DynamoDB Local, as `make test` uses
// it (the workshop uses 8000, so tests never touch a participant's tables).
const DefaultPort = "8001"

var (
	once     sync.Once
	endpoint string
	setupErr error
)

// Endpoint returns the endpoint of a running DynamoDB Local, starting one if
// needed, or fails the test with the command to run.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep, err := Find()
	if err != nil {
		t.Fatalf("no DynamoDB Local for the integration tests: %v", err)
	}
	return ep
}

// Find is Endpoint for a TestMain, where there is no testing.TB yet: it
// returns the endpoint or an error that names the command to run.
func Find() (string, error) {
	once.Do(func() { endpoint, setupErr = find() })
	return endpoint, setupErr
}

func find() (string, error) {
	if ep := os.Getenv(catalog.EnvEndpoint); ep != "" {
		if !catalog.IsLocalEndpoint(ep) {
			return "", fmt.Errorf("%s=%s is not a local endpoint; the tests create and delete tables, so point it at DynamoDB Local (e.g. http://localhost:8000) or unset it", catalog.EnvEndpoint, ep)
		}
		if !answers(ep) {
			return "", fmt.Errorf("%s=%s does not answer; %s, or unset %s", catalog.EnvEndpoint, ep, catalog.StartLocalHint, catalog.EnvEndpoint)
		}
		return ep, nil
	}
	port := os.Getenv("DYNAMODB_PORT")
	if port == "" {
		port = DefaultPort
	}
	ep := "http://127.0.0.1:" + port
	if answers(ep) {
		return ep, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("nothing answers on %s and %v; run `make dynamodb` from the repository root", ep, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := "go run ./queuekit/cmd/queuekit servers start dynamodb"
	cmd := exec.CommandContext(ctx, "go", "run", "./queuekit/cmd/queuekit", "servers", "start", "dynamodb")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DYNAMODB_PORT="+port)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("nothing answers on %s and `DYNAMODB_PORT=%s %s` failed (%v):\n%s\nfix that, then run it yourself (or `make dynamodb`) before go test",
			ep, port, start, err, strings.TrimSpace(out.String()))
	}
	if !answers(ep) {
		return "", fmt.Errorf("%s succeeded but nothing answers on %s; see .cache/dynamodb-local/run/", start, ep)
	}
	fmt.Fprintf(os.Stderr, "ddbtest: started DynamoDB Local on %s (it keeps running; stop it with DYNAMODB_PORT=%s go run ./queuekit/cmd/queuekit servers stop dynamodb)\n", ep, port)
	return ep, nil
}

// answers reports whether DynamoDB answers at ep: a ListTables call with
// the SDK succeeds. Any other HTTP server on the port does not count.
func answers(ep string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := catalog.New(ctx, catalog.WithEndpoint(ep), catalog.WithCallTimeout(2*time.Second))
	if err != nil {
		return false
	}
	_, err = c.Client().ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	return err == nil
}

// RepoRoot walks up from the working directory (a package directory under
// go test) to the directory holding DynamoDB Local's loopback launcher
// (tools/dynamodb-launcher): the repository's root, where .cache/ is.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "dynamodb-launcher", "LoopbackServerRunner.java")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("tools/dynamodb-launcher/LoopbackServerRunner.java not found above the working directory")
		}
		dir = parent
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// TableName returns a table name unique to this test and run, e.g.
// "test_TestSeedTwice_3f2a1c9e".
func TableName(t testing.TB) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random table suffix: %v", err)
	}
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 200 {
		name = name[:200]
	}
	return "test_" + name + "_" + hex.EncodeToString(b[:])
}

// Catalog returns a catalog on DynamoDB Local with a table of its own,
// created now and deleted when the test ends. opts come after the endpoint
// and table, so a test may override them.
func Catalog(t testing.TB, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	c := NewCatalog(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.CreateTable(ctx); err != nil {
		t.Fatalf("create test table: %v", err)
	}
	return c
}

// NewCatalog is Catalog without creating the table; the table, if a test
// creates it, is still deleted when the test ends.
func NewCatalog(t testing.TB, opts ...catalog.Option) *catalog.Catalog {
	t.Helper()
	ep := Endpoint(t)
	all := append([]catalog.Option{catalog.WithEndpoint(ep), catalog.WithTable(TableName(t))}, opts...)
	c, err := catalog.New(context.Background(), all...)
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DeleteTable(ctx); err != nil {
			t.Errorf("delete test table %s: %v", c.Table(), err)
		}
	})
	return c
}
