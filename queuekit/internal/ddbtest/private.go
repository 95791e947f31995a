package ddbtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/servers"
)

// Private is a DynamoDB Local of one test's own: a test may pause it
// (SIGSTOP), or kill it and start it again (Kill, Restart), without
// touching a server other tests or people use.
type Private struct {
	Endpoint string
	port     string
	opts     PrivateOptions
	cmd      *exec.Cmd
	log      string
}

// PrivateOptions are StartPrivate's options.
type PrivateOptions struct {
	// DBPath, if not empty, is an existing directory where the server keeps
	// its tables on disk (DynamoDB Local's -dbPath, through
	// DYNAMODB_DB_PATH of package servers), so that they outlive
	// a Kill and Restart; empty: in memory, lost when the process ends.
	DBPath string
}

// WithDBPath keeps the server's tables on disk in dir (see
// PrivateOptions.DBPath).
func WithDBPath(dir string) func(*PrivateOptions) {
	return func(o *PrivateOptions) { o.DBPath = dir }
}

// StartPrivate starts DynamoDB Local on port, on 127.0.0.1 only, in memory
// unless WithDBPath says where to keep its tables, through servers.Command
// (which installs it if needed; the process is the loopback launcher's JVM,
// the server itself), and stops it
// when the test ends. The port must be free (the test fails with what to do
// otherwise); "" takes a free one below the ephemeral range (see freePort).
func StartPrivate(t testing.TB, port string, opts ...func(*PrivateOptions)) *Private {
	t.Helper()
	if port == "" {
		port = freePort(t)
	}
	p := &Private{Endpoint: "http://127.0.0.1:" + port, port: port}
	for _, o := range opts {
		o(&p.opts)
	}
	t.Cleanup(func() {
		if p.cmd != nil {
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	p.start(t)
	return p
}

// start runs the server on p's port and waits until it answers.
func (p *Private) start(t testing.TB) {
	t.Helper()
	if listening(p.port) {
		t.Fatalf("port %s is in use; a private DynamoDB Local needs a free port (set the test's port variable to another)", p.port)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	portN, err := strconv.Atoi(p.port)
	if err != nil {
		t.Fatalf("port %q: %v", p.port, err)
	}
	get := func(k string) string {
		if k == "DYNAMODB_DB_PATH" {
			return p.opts.DBPath
		}
		return os.Getenv(k)
	}
	cmd, err := servers.Command(context.Background(), root, servers.DynamoDB, portN, servers.WithEnv(get), servers.WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.CreateTemp(t.TempDir(), "dynamodb-local-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start DynamoDB Local on %s: %v (a JDK 17+ must be on PATH)", p.port, err)
	}
	p.cmd, p.log = cmd, log.Name()
	// A connection refused is seen at once; the SDK's ListTables (answers)
	// is asked only once something listens, so that the server is not
	// thought down for its retries' backoffs after it came up.
	for deadline := time.Now().Add(60 * time.Second); !listening(p.port) || !answers(p.Endpoint); {
		if time.Now().After(deadline) {
			t.Fatalf("DynamoDB Local on %s did not answer within 60 s; see %s", p.port, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listening reports whether something accepts connections on the loopback
// port.
func listening(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// Pause stops the server's process (SIGSTOP): connections stay open, nothing
// answers.
func (p *Private) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues it (SIGCONT).
func (p *Private) Resume() error { return p.signal(syscall.SIGCONT) }

// Kill ends the server's process with SIGKILL, as a crash would (nothing
// is flushed or closed by the server itself), and waits until it is gone:
// open connections are reset, new ones refused.
func (p *Private) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	_ = p.cmd.Wait() // "signal: killed" is the expected end
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return fmt.Errorf("DynamoDB Local (pid %d) ended with %v, not by SIGKILL; see %s", p.cmd.Process.Pid, p.cmd.ProcessState, p.log)
	}
	return nil
}

// Restart starts the server again after Kill, on the same port with the
// same options (so, with WithDBPath, on the same tables), and waits until
// it answers.
func (p *Private) Restart(t testing.TB) {
	t.Helper()
	if p.cmd.ProcessState == nil {
		t.Fatalf("restart DynamoDB Local on %s: pid %d still runs; Kill it first", p.port, p.cmd.Process.Pid)
	}
	p.start(t)
}

func (p *Private) signal(s syscall.Signal) error {
	if err := p.cmd.Process.Signal(s); err != nil {
		return fmt.Errorf("signal %v to DynamoDB Local (pid %d): %w", s, p.cmd.Process.Pid, err)
	}
	return nil
}

// freePort returns a free loopback port below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), so that private servers of tests running
// side by side (two checkouts, a helper's run) never meet on a fixed port,
// and so that a killed server's port can be taken again on Restart. A port
// the kernel hands out (":0") is an ephemeral one: while the server is down,
// the clients retrying against it can be given that same port as their own
// source port and connect to themselves (TCP simultaneous open), holding
// the port so the server cannot listen on it again.
func freePort(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	const first = 20000 // above the ports servers are usually configured on
	if low <= first+100 {
		t.Fatalf("find a free port: the ephemeral range starts at %d, leaving none below it above %d", low, first)
	}
	for range 200 {
		port := first + rand.IntN(low-first)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use: try another
		}
		_ = l.Close()
		return strconv.Itoa(port)
	}
	t.Fatalf("find a free port: 200 tries between %d and %d found none free", first, low)
	return ""
}

// ephemeralLow is the first port of the kernel's ephemeral range; Linux's
// default (32768) where /proc does not say.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return low
}
