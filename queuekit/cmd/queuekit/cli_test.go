package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// help lists every command of the table, in its order, and the exit codes.
func TestHelpListsTheCommandTable(t *testing.T) {
	out, _, code := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	at := -1
	for _, c := range commands {
		i := strings.Index(out, "  "+c.name+" ")
		if i < 0 || i < at {
			t.Errorf("help lists %q at %d, after %d: want every command in table order:\n%s", c.name, i, at, out)
		}
		at = i
	}
	if !strings.Contains(out, "Exit status: 0 done; 1 a server or the run failed") || !strings.Contains(out, "2 bad usage or input (flags, limits, input files), checked before anything is written;") ||
		!strings.Contains(out, "also 2: a night already running") {
		t.Errorf("help does not document the exit status:\n%s", out)
	}
}

// An AWS configuration that cannot be loaded is a runtime failure (exit 1),
// not bad usage, and its message keeps the SDK's cause; a malformed --table
// is bad input (exit 2). Neither contacts anything.
func TestConfigurationFailureIsExitOneAndBadTableIsExitTwo(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("[default]\nregion = us-east-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(catalog.EnvEndpoint, "")
	t.Setenv("AWS_CONFIG_FILE", cfg)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", cfg)
	t.Setenv("AWS_PROFILE", "queuekit-no-such-profile")
	_, errOut, code := runCLI(t, "access", "--batch-date", "2026-05-13")
	if code != 1 || !strings.Contains(errOut, "load AWS configuration") || !strings.Contains(errOut, "queuekit-no-such-profile") {
		t.Errorf("missing profile: exit %d, stderr %q; want exit 1 naming the configuration and the profile", code, errOut)
	}
	if strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Errorf("stderr %q, want one line", errOut)
	}
	_, errOut, code = runCLI(t, "access", "--batch-date", "2026-05-13", "--endpoint", "http://localhost:9", "--table", "x")
	if code != 2 || !strings.Contains(errOut, `table name "x"`) {
		t.Errorf("bad --table: exit %d, stderr %q; want exit 2 naming the table", code, errOut)
	}
	var ue usageError
	err := badInput(&catalog.OptionError{Msg: "m"})
	var oe *catalog.OptionError
	if !errors.As(err, &ue) || !errors.As(err, &oe) {
		t.Error("a usage error must keep the chain of the error it wraps")
	}
}

// Progress goes to the stderr the command is given, as step lines when that
// is not a terminal; stdout keeps only the result.
func TestProgressGoesToTheInjectedStderr(t *testing.T) {
	out, errOut, code := runCLI(t, "simulate", "--batch-date", "2026-05-13", "--workers", "3", "--runtime-cv", "0.5", "--replications", "2000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(errOut, "replications: 0/2000 (0%)") || !strings.Contains(errOut, "replications: 2000/2000 (100%)") {
		t.Errorf("stderr %q: want step lines from 0/2000 to 2000/2000", errOut)
	}
	if strings.Contains(out, "replications:") {
		t.Errorf("progress leaked into stdout: %s", out)
	}
}

// SIGTERM cancels the running command: a long steady-state simulation (the
// most customers --customers allows, seconds of work) stops, says it was interrupted, and
// exits 1 with one line, instead of being killed.
func TestSIGTERMCancelsTheRun(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "queuekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "mmc", "--lambda", "2", "--mu", "1", "--workers", "3", "--simulate", "--customers", strconv.Itoa(maxCustomers))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	// The first progress line is written after the signal handler is installed.
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), fmt.Sprintf("simulating M/M/3: %d customers", maxCustomers)) {
		cmd.Process.Kill()
		t.Fatalf("first stderr line %q, want the start of the run", lines.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("wait: %v; want exit status 1 (not killed by the signal)", err)
	}
	if len(rest) != 1 || !strings.Contains(rest[0], "queuekit mmc:") || !strings.Contains(rest[0], "interrupted by terminated") {
		t.Errorf("stderr after SIGTERM %q, want one line saying the run was interrupted", rest)
	}
}
