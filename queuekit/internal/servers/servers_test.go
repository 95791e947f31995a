package servers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// These tests run real servers (Java, the jars under .cache/, installed when
// missing) on free ports, never the shared 8000 and 9324. The test binary
// is its own supervisor (TestMain) and its own user process (userEnv).

const userEnv = "SERVERS_TEST_USER" // names: run as a user holding a lease

func TestMain(m *testing.M) {
	if IsSupervisor() {
		os.Exit(Supervise())
	}
	if names := os.Getenv(userEnv); names != "" {
		os.Exit(runUser(strings.Split(names, ",")))
	}
	os.Exit(m.Run())
}

// runUser acquires the servers, prints "ready" and holds them until TERM,
// then releases them and exits 0.
func runUser(names []string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	root, _ := checkoutRoot()
	l, err := Acquire(context.Background(), root, names, WithSupervisor(os.Args[0]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	<-sigs
	if err := l.Release(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func checkoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, launcherSrc)); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no %s above the working directory", launcherSrc)
		}
	}
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// env is a test's variables: its ports, short timeouts.
type env map[string]string

func (e env) get(k string) string {
	if v, ok := e[k]; ok {
		return v
	}
	return os.Getenv(k)
}

func (e env) list() []string {
	out := os.Environ()
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

func needServers(t *testing.T) (string, env) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Java servers; not with -short")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := freePorts(t, 2)
	e := env{"DYNAMODB_PORT": strconv.Itoa(p[0]), "SQS_PORT": strconv.Itoa(p[1])}
	return root, e
}

// user is a user process holding a lease; out is its stderr.
type user struct {
	cmd *exec.Cmd
	log string
}

func (u *user) out() string {
	b, _ := os.ReadFile(u.log)
	return string(b)
}

func startUser(t *testing.T, e env, names string) *user {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(e.list(), userEnv+"="+names)
	logPath := filepath.Join(t.TempDir(), "user.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	u := &user{cmd: cmd, log: logPath}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ready <- sc.Scan() && sc.Text() == "ready"
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("user %s did not get its servers:\n%s", names, u.out())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("user %s: no servers within 3 minutes:\n%s", names, u.out())
	}
	return u
}

// clientConfig is awsConfig with a timeout long enough for ElasticMQ's
// start at the first request.
func clientConfig(port string) aws.Config {
	c := awsConfig("http://127.0.0.1:" + port)
	c.HTTPClient = &http.Client{Timeout: 2 * time.Minute}
	return c
}

func ddb(port string) *dynamodb.Client { return dynamodb.NewFromConfig(clientConfig(port)) }

func queues(port string) *sqs.Client { return sqs.NewFromConfig(clientConfig(port)) }

// eventually waits up to d for cond.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}

func portClosed(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// supervisors lists the pids of this test's supervisor processes still
// running (their pid files, and any process of their groups).
func leftovers(t *testing.T, root string, e env) []string {
	var left []string
	c := newConfig([]Option{WithEnv(e.get)})
	for _, n := range []string{DynamoDB, SQS} {
		s, _ := c.server(root, n)
		if _, err := os.Stat(s.pidPath()); err == nil {
			left = append(left, s.pidPath())
		}
		if !portClosed(strconv.Itoa(s.port)) {
			left = append(left, fmt.Sprintf("something listens on %d", s.port))
		}
	}
	return left
}

// Two programs share the servers; TERM to one leaves them to the other,
// with its table and queue; SIGKILL to the last one (no Release) still
// stops them: its registration died with it.
func TestTwoUsersShareServersAndTheLastOneStopsThem(t *testing.T) {
	root, e := needServers(t)
	ctx := context.Background()
	a := startUser(t, e, "dynamodb,sqs")
	b := startUser(t, e, "dynamodb,sqs")
	if !strings.Contains(b.out(), "already running") {
		t.Errorf("the second user started its own servers:\n%s", b.out())
	}
	if strings.Count(a.out()+b.out(), "127.0.0.1 only") != 2 {
		t.Errorf("want exactly one start of each server:\n%s\n%s", a.out(), b.out())
	}
	c := newConfig([]Option{WithEnv(e.get)})
	sq, _ := c.server(root, SQS)
	if _, err := os.Stat(sq.jvmPidPath()); err == nil {
		t.Errorf("ElasticMQ runs before any SQS request")
	}
	_, err := ddb(e["DYNAMODB_PORT"]).CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("shared"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queues(e["SQS_PORT"]).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("shared")}); err != nil {
		t.Fatal(err)
	}

	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("user b after TERM: %v\n%s", err, b.out())
	}
	if !strings.Contains(b.out(), "still used by") {
		t.Errorf("user b's release did not say the servers are still used:\n%s", b.out())
	}
	if _, err := ddb(e["DYNAMODB_PORT"]).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("shared")}); err != nil {
		t.Errorf("after b left, a lost DynamoDB Local or its table: %v", err)
	}
	q, err := queues(e["SQS_PORT"]).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("shared")})
	if err != nil {
		t.Errorf("after b left, a lost ElasticMQ or its queue: %v", err)
	} else if want := "http://127.0.0.1:" + e["SQS_PORT"] + "/000000000000/shared"; aws.ToString(q.QueueUrl) != want {
		t.Errorf("queue URL %s, want %s (the public port, not ElasticMQ's internal one)", aws.ToString(q.QueueUrl), want)
	}

	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
	if !eventually(30*time.Second, func() bool { return len(leftovers(t, root, e)) == 0 }) {
		t.Fatalf("30 s after the last user was killed: %v", leftovers(t, root, e))
	}
}

// A server started by hand (Manual, `queuekit servers start`) outlives a
// program that joined it, and stops on Stop.
func TestManualStartOutlivesARunThatJoinedIt(t *testing.T) {
	root, e := needServers(t)
	ctx := context.Background()
	var log bytes.Buffer
	opts := []Option{WithEnv(e.get), WithSupervisor(os.Args[0]), WithLog(&log)}
	// The supervisor reads the ports from its environment.
	for k, v := range e {
		t.Setenv(k, v)
	}
	if _, err := Acquire(ctx, root, []string{DynamoDB}, append(opts, Manual())...); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(ctx, root, []string{DynamoDB}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := listTables(ctx, "http://127.0.0.1:"+e["DYNAMODB_PORT"]); err != nil {
		t.Fatalf("DynamoDB Local stopped under the manual user: %v\n%s", err, log.String())
	}
	if err := Stop(ctx, root, []string{DynamoDB}, false, opts...); err != nil {
		t.Fatal(err)
	}
	if !portClosed(e["DYNAMODB_PORT"]) || !strings.Contains(log.String(), "dynamodb-local: stopped") {
		t.Fatalf("Stop did not stop it:\n%s", log.String())
	}
}

// A port held by something that is not the server: one line naming the
// port and the variable to change.
func TestAPortHeldBySomethingElseIsRefusedInOneLine(t *testing.T) {
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { _ = http.Serve(ln, http.NotFoundHandler()) }()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, c := range []struct{ name, v string }{{DynamoDB, "DYNAMODB_PORT"}, {SQS, "SQS_PORT"}} {
		e := env{c.v: port}
		_, err := Acquire(context.Background(), root, []string{c.name}, WithEnv(e.get), WithLog(&bytes.Buffer{}))
		if err == nil {
			t.Fatalf("%s: Acquire on a port an HTTP server holds succeeded", c.name)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "port "+port) || !strings.Contains(msg, c.v+"=") {
			t.Errorf("%s: want one line naming port %s and %s=, got %q", c.name, port, c.v, msg)
		}
	}
}

// ElasticMQ starts at the first SQS request, stops after the idle time when
// no queue exists, starts again, and stays while a queue exists.
func TestElasticMQStartsOnDemandAndStopsIdleOnlyWithoutQueues(t *testing.T) {
	root, e := needServers(t)
	e["SQS_IDLE_STOP"] = "2s"
	for k, v := range e {
		t.Setenv(k, v)
	}
	ctx := context.Background()
	var log syncBuffer
	l, err := Acquire(ctx, root, []string{SQS}, WithEnv(e.get), WithSupervisor(os.Args[0]), WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	c := newConfig([]Option{WithEnv(e.get)})
	s, _ := c.server(root, SQS)
	jvm := func() bool { _, err := os.Stat(s.jvmPidPath()); return err == nil }
	if jvm() {
		t.Fatal("ElasticMQ runs before any request")
	}
	cl := queues(e["SQS_PORT"])
	if _, err := cl.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
		t.Fatal(err)
	}
	if !jvm() {
		t.Fatal("ElasticMQ does not run after a ListQueues")
	}
	if !eventually(20*time.Second, func() bool { return !jvm() }) {
		t.Fatal("ElasticMQ still runs 20 s after its last request, with no queue (idle stop 2 s)")
	}
	q, err := cl.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("kept")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if !jvm() {
		t.Fatal("ElasticMQ stopped while a queue (with a message) exists")
	}
	out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("the message sent before the idle time: %v, %d messages", err, len(out.Messages))
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
