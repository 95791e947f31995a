package ddbtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// StartPrivate starts DynamoDB Local (the jar scripts/dynamodb-local.sh
// installs) in memory on port and stops it when the test ends. The port must
// be free; the test fails with what to do otherwise.
func StartPrivate(t testing.TB, port string) *Private {
	t.Helper()
	ep := "http://localhost:" + port
	if answers(ep) {
		t.Fatalf("port %s is in use; a private DynamoDB Local needs a free port (set the test's port variable to another)", port)
	}
	Endpoint(t) // installs DynamoDB Local through the script if needed
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jars, _ := filepath.Glob(filepath.Join(root, ".cache", "dynamodb-local", "*", "DynamoDBLocal.jar"))
	if len(jars) == 0 {
		t.Fatalf("no DynamoDBLocal.jar under .cache/dynamodb-local: run `scripts/dynamodb-local.sh start` once to install it")
	}
	cmd := exec.Command("java", "-Xmx256m", "-jar", "DynamoDBLocal.jar", "-inMemory", "-port", port, "-disableTelemetry")
	cmd.Dir = filepath.Dir(jars[0])
	log, err := os.CreateTemp(t.TempDir(), "dynamodb-local-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start DynamoDB Local on %s: %v (Java 17+ must be on PATH)", port, err)
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
