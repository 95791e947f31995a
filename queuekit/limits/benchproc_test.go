package limits

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

var layerInProcess = flag.Bool("limits-inprocess", false,
	"benchmarks: serve the layer inside the benchmark's process (for -cpuprofile) instead of as the `queuekit limits` process users run")

var layerBinary = flag.String("limits-bin", "",
	"benchmarks: the queuekit binary to run as the layer (default: built from this tree), e.g. an older build to compare")

// benchSide is what the overhead benchmarks compare: one SDK client to
// DynamoDB Local directly and one through the layer (retries off, so a
// throttle would fail the benchmark), a table created through the layer,
// and the CPU time so far of the three processes involved.
type benchSide struct {
	direct, layer *dynamodb.Client
	table         string
	layerPID      int // the `queuekit limits` process (0: in this process)
	localPID      int // DynamoDB Local's JVM (0: not found)
	inProcess     *fixture
	pin           *pinned // -pin: where the processes run
}

// newBenchSide starts the layer as users run it, a separate `queuekit
// limits --listen 127.0.0.1:0 --target <Local>` process built from this
// repository (so that the layer, the client and DynamoDB Local share the
// machine's cores as they do in the workshop), unless -limits-inprocess.
func newBenchSide(b *testing.B) *benchSide {
	b.Helper()
	ep := ddbtest.Endpoint(b)
	s := &benchSide{localPID: localPID(ep)}
	if *pinCPUs {
		p := pinSide(b, s.localPID)
		s.pin = &p
	}
	if *layerInProcess {
		// The layer's goroutines (its server's, its transport's) carry the
		// profiler label side=layer: go tool pprof -tagfocus side=layer.
		var f *fixture
		pprof.Do(context.Background(), pprof.Labels("side", "layer"), func(context.Context) { f = newFixture(b, WithClock(time.Now)) })
		s.inProcess, s.direct, s.layer, s.table = f, f.direct, f.db, f.table(onDemand())
		return s
	}
	bin := *layerBinary
	if bin == "" {
		root, err := ddbtest.RepoRoot()
		if err != nil {
			b.Fatal(err)
		}
		bin = filepath.Join(b.TempDir(), "queuekit")
		build := exec.Command("go", "build", "-o", bin, "./queuekit/cmd/queuekit")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build ./queuekit/cmd/queuekit: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, "limits", "--listen", "127.0.0.1:0", "--target", ep)
	if s.pin != nil { // on the benchmark's CPU from its start (so GOMAXPROCS 1)
		cmd = exec.Command("taskset", append([]string{"-c", strconv.Itoa(s.pin.client)}, cmd.Args...)...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start queuekit limits: %v", err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	var layerURL string
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "limits: listening on "); ok {
			layerURL, _, _ = strings.Cut(rest, " ")
			break
		}
		b.Logf("queuekit limits: %s", lines.Text())
	}
	if layerURL == "" {
		b.Fatalf("queuekit limits did not say where it listens")
	}
	go func() { // keep reading, so the layer never blocks on a full pipe
		for lines.Scan() {
		}
	}()
	s.layerPID, s.direct, s.layer = cmd.Process.Pid, client(ep, aws.NopRetryer{}), client(layerURL, aws.NopRetryer{})
	s.table = ddbtest.TableName(b)
	_, err = s.layer.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: aws.String(s.table), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}}})
	if err != nil {
		b.Fatalf("create table %s through the layer: %v", s.table, err)
	}
	b.Cleanup(func() {
		_, _ = s.direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
	})
	return s
}

// cpuTimes is the CPU time (user + system) used so far by the benchmark's
// process, the layer's and DynamoDB Local's.
type cpuTimes struct{ self, layer, local time.Duration }

func (s *benchSide) cpu() cpuTimes {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self := time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	return cpuTimes{self: self, layer: procCPU(s.layerPID), local: procCPU(s.localPID)}
}

func (c cpuTimes) sub(d cpuTimes) cpuTimes {
	return cpuTimes{c.self - d.self, c.layer - d.layer, c.local - d.local}
}

func (c cpuTimes) add(d cpuTimes) cpuTimes {
	return cpuTimes{c.self + d.self, c.layer + d.layer, c.local + d.local}
}

// procCPU is a process's CPU time from /proc/PID/stat (utime + stime, in
// clock ticks of 10 ms: Linux's USER_HZ is 100); 0 when unknown.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')') // the command may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// localPID finds DynamoDB Local's process from the pid file its supervisor
// (queuekit servers) keeps for its JVM on the port, else as the process of
// yours listening on the port; 0 when neither finds it.
func localPID(ep string) int {
	u, err := url.Parse(ep)
	root, rerr := ddbtest.RepoRoot()
	if err != nil || rerr != nil {
		return listeningPID(ep)
	}
	b, err := os.ReadFile(filepath.Join(root, ".cache", "dynamodb-local", "run", "dynamodb-local-"+u.Port()+".jvm"))
	if err != nil {
		return listeningPID(ep)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if procCPU(pid) == 0 && pid > 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return listeningPID(ep) // a stale pid file
		}
	}
	return pid
}

// cores is CPU time d over wall time: the cores it kept busy.
func cores(d, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return d.Seconds() / wall.Seconds()
}

// perCall is d per call, in µs.
func perCall(d time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(calls)
}
