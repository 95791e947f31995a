package ddbtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Private is a DynamoDB Local of one test's own: a test may pause it
// (SIGSTOP) without freezing a server other tests or people use.
type Private struct {
	Endpoint string
	cmd      *exec.Cmd
}

// StartPrivate starts DynamoDB Local in memory on port, on 127.0.0.1 only,
// through `scripts/dynamodb-local.sh run` (which installs it if needed and
// execs the loopback launcher, so the process is the server itself), and
// stops it when the test ends. The port must be free (the test fails with
// what to do otherwise); "" takes a free one the kernel picks.
func StartPrivate(t testing.TB, port string) *Private {
	t.Helper()
	if port == "" {
		port = freePort(t)
	}
	ep := "http://127.0.0.1:" + port
	if answers(ep) {
		t.Fatalf("port %s is in use; a private DynamoDB Local needs a free port (set the test's port variable to another)", port)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "dynamodb-local.sh"), "run")
	cmd.Env = append(os.Environ(), "DYNAMODB_PORT="+port)
	log, err := os.CreateTemp(t.TempDir(), "dynamodb-local-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start DynamoDB Local on %s: %v (a JDK 17+ must be on PATH)", port, err)
	}
	p := &Private{Endpoint: ep, cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(60 * time.Second); !answers(ep); {
		if time.Now().After(deadline) {
			t.Fatalf("DynamoDB Local on %s did not answer within 60 s; see %s", port, log.Name())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return p
}

// Pause stops the server's process (SIGSTOP): connections stay open, nothing
// answers.
func (p *Private) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues it (SIGCONT).
func (p *Private) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Private) signal(s syscall.Signal) error {
	if err := p.cmd.Process.Signal(s); err != nil {
		return fmt.Errorf("signal %v to DynamoDB Local (pid %d): %w", s, p.cmd.Process.Pid, err)
	}
	return nil
}

// freePort returns a loopback port the kernel just gave out and that was
// closed at once, so that private servers of tests running side by side
// (two checkouts, a helper's run) never meet on a fixed port.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
