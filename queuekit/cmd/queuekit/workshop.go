package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/servers"
)

// runWorkshop is `queuekit workshop` (make workshop), the one command that
// starts the workshop:
//
//  1. setup (queuekit setup; quick when done), gopls left for after the URL
//  2. DynamoDB Local and ElasticMQ (SQS) on 127.0.0.1, started or joined
//     when they already run; AWS_ENDPOINT_URL_DYNAMODB and _SQS, when set
//     (docker compose sets both), are used instead
//  3. the sample nights seeded (queuekit seed --sample)
//  4. the participant's copies of the notebooks in workspace/ (queuekit
//     workspace prepare)
//  5. JupyterLab on LAB_IP:LAB_PORT with a token, server root workspace/; the
//     URL it prints opens notebook 00
//
// It prints only its own step lines; tools write to .cache/workshop.log.
// Ctrl-C, TERM or HUP (however many arrive) stops JupyterLab with its
// kernels and the gopls build, and leaves the servers, which stop once no
// other program uses them; a line says which signal stopped it and the status
// is 130, 143 or 129, or WORKSHOP_SIGNAL_STATUS when set (make workshop sets
// 0: a stop is how the workshop ends).
//
// Environment: LAB_PORT (8888), LAB_IP (127.0.0.1), JUPYTER_TOKEN (default:
// a new random one), DYNAMODB_PORT (8000), SQS_PORT (9324), LAB_PUBLIC_URL
// (the URL people open when it differs from http://127.0.0.1:LAB_PORT),
// WORKSHOP_SKIP_SETUP=1 (skip step 1).
func runWorkshop(_ context.Context, args []string, _, stderr io.Writer) error {
	// The signals first: from here on none ends the process by itself. The
	// channel stays registered until the process exits, so the second and
	// third signal cannot cut the cleanup short either.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignals...)
	if len(ignoredSignals) > 0 {
		signal.Ignore(ignoredSignals...)
	}
	if helpAsked(args) {
		fmt.Fprintln(os.Stdout, workshopUsage)
		return errHelpShown
	}
	if err := parse(newFlags("workshop"), args); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var (
		mu        sync.Mutex
		stoppedBy os.Signal
	)
	go func() {
		for sig := range sigs {
			mu.Lock()
			if stoppedBy == nil {
				stoppedBy = sig
				cancel(errStopped)
			}
			mu.Unlock()
		}
	}()

	l, err := newLauncher("workshop", "workshop.log", stderr)
	if err != nil {
		return err
	}
	defer l.close()
	w := &workshop{l: l}
	err = w.start(ctx)
	w.stop()
	mu.Lock()
	sig := stoppedBy
	mu.Unlock()
	if sig == nil {
		return err
	}
	status, said := signalStatus(sig)
	l.say("stopped (%s)", said)
	if v, ok := os.LookupEnv("WORKSHOP_SIGNAL_STATUS"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			status = n
		}
	}
	return exitStatus{status}
}

const workshopUsage = `Usage: queuekit workshop   (make workshop)
Setup (quick when done), DynamoDB Local and ElasticMQ on 127.0.0.1 (started or joined), the sample
nights seeded, your copies of the notebooks in workspace/, JupyterLab with notebook 00 open. Step
lines only; the tools' output goes to .cache/workshop.log. Ctrl-C, TERM or HUP stops it.
Environment: LAB_PORT (8888), LAB_IP (127.0.0.1), JUPYTER_TOKEN (default: a new one), DYNAMODB_PORT
(8000), SQS_PORT (9324), AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS (servers to use instead),
LAB_PUBLIC_URL, WORKSHOP_SKIP_SETUP=1, WORKSHOP_SIGNAL_STATUS (status after a stop by a signal).`

// helpAsked reports whether args is a request for help.
func helpAsked(args []string) bool {
	return len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// exitStatus ends the command with this status and no error line.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(e.code) }

// workshop is what one run started, for stop.
type workshop struct {
	l       *launcher
	lease   serverLease
	lab     *labProcess
	bgStop  context.CancelFunc
	bgDone  chan struct{}
	stopped bool
}

func (w *workshop) start(ctx context.Context) error {
	l := w.l
	l.say("nightly job queue workshop, version %s (CHANGELOG.md); tools' output: %s", queuekit.Version, l.logPath)
	preset := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" && os.Getenv("AWS_ENDPOINT_URL_SQS") != ""
	if err := l.checkPrereqs(ctx, !preset); err != nil {
		return err
	}
	deferGopls := false
	if os.Getenv("WORKSHOP_SKIP_SETUP") != "1" {
		l.step("1/5 setup (queuekit setup; quick when done)")
		deferGopls = true
		if err := l.setup(ctx, setupOptions{deferGopls: true, numbered: "1/5 "}); err != nil {
			return err
		}
	}

	l.step("2/5 DynamoDB Local and ElasticMQ (SQS), 127.0.0.1 only")
	if _, ok := os.LookupEnv("DYNAMODB_JAVA_OPTS"); !ok {
		// A participant's DynamoDB Local: C1 only, a quarter less CPU over
		// session one than with C2 (docs/speed.md, Cells); the benchmarks'
		// servers keep C2 (servers.DynamoDBJavaOpts).
		os.Setenv("DYNAMODB_JAVA_OPTS", servers.DynamoDBJavaOpts+" -XX:TieredStopAtLevel=1")
	}
	lease, err := acquireServers(ctx, l)
	if err != nil {
		return err
	}
	w.lease = lease
	eps := lease.Endpoints()
	os.Setenv("AWS_ENDPOINT_URL_DYNAMODB", eps["dynamodb"])
	os.Setenv("AWS_ENDPOINT_URL_SQS", eps["sqs"])

	l.step("3/5 seeding the sample nights into %s", eps["dynamodb"])
	if err := l.alive("seeding", func() error { return runSeed(ctx, []string{"--sample"}, l.log, l.log) }); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("seeding failed (%s): %w", l.logPath, err)
	}

	l.step("4/5 your copies of the notebooks (workspace/)")
	if err := l.prepareWorkspace(ctx); err != nil {
		return err
	}

	port := envOr("LAB_PORT", "8888")
	ip := envOr("LAB_IP", "127.0.0.1")
	l.step("5/5 starting JupyterLab on %s:%s", ip, port)
	token := os.Getenv("JUPYTER_TOKEN")
	if token == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		token = hex.EncodeToString(b)
	}
	w.lab, err = startLab(l, ip, port, token)
	if err != nil {
		return err
	}
	url := "http://127.0.0.1:" + port
	if err := l.alive("waiting for JupyterLab", func() error { return w.lab.waitReady(ctx, url+"/api") }); err != nil {
		return err
	}
	public := envOr("LAB_PUBLIC_URL", url)
	first := "00-welcome.ipynb"
	if m, _ := filepath.Glob(filepath.Join(l.workspaceDir(), "00-*.ipynb")); len(m) > 0 {
		first = filepath.Base(m[0])
	}
	l.mu.Lock()
	fmt.Fprintf(l.out, `
  The workshop is running. Open this URL in your browser (notebook 00 opens first):

      %s/lab/tree/%s?token=%s

  Notebooks: %s (your copies; make reset-notebooks starts them afresh)
  DynamoDB: %s    SQS: %s
  Log of the tools and JupyterLab: %s
  Press Ctrl-C to stop everything this command started.

`, public, first, token, l.workspaceDir(), eps["dynamodb"], eps["sqs"], l.logPath)
	l.mu.Unlock()
	l.step("ready")
	if deferGopls && !isExec(filepath.Join(l.venv, "bin", "gopls")) {
		w.goplsBehind(ctx)
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-w.lab.done:
		return fmt.Errorf("JupyterLab exited (%v); its output is in %s", w.lab.err, l.logPath)
	}
}

// goplsBehind builds gopls in the background: cells already run, and
// completion and hover work once it is there. Its steps go to the log; one
// line says when it starts and one when it is ready.
func (w *workshop) goplsBehind(ctx context.Context) {
	l := w.l
	bctx, stop := context.WithCancel(ctx)
	w.bgStop, w.bgDone = stop, make(chan struct{})
	quiet := &launcher{root: l.root, venv: l.venv, prefix: l.prefix, out: io.Discard, logPath: l.logPath, log: l.log, began: l.began}
	l.say("building gopls in the background (completion and hover; cells already run)")
	go func() {
		defer close(w.bgDone)
		if err := quiet.setupGopls(bctx); err != nil {
			if bctx.Err() == nil {
				l.say("gopls did not build (%v); cells still run, without completion and hover: rerun make setup", err)
			}
			return
		}
		l.say("gopls ready: completion and hover work in notebooks opened from now (Kernel > Restart for an open one)")
	}()
}

// stop stops what start started: JupyterLab (with its kernels), the gopls
// build, then leaves the servers. It runs once.
func (w *workshop) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	if w.lab != nil {
		w.lab.stop(w.l)
	}
	if w.bgStop != nil {
		w.bgStop()
		<-w.bgDone
	}
	if w.lease != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := w.lease.Release(ctx); err != nil {
			w.l.say("leaving the servers: %v", err)
		}
	}
}

// labProcess is the running JupyterLab.
type labProcess struct {
	cmd  *os.Process
	done chan struct{}
	err  error
}

func startLab(l *launcher, ip, port, token string) (*labProcess, error) {
	args := []string{"lab", "--no-browser",
		"--ServerApp.ip=" + ip, "--ServerApp.port=" + port, "--ServerApp.port_retries=0",
		"--ServerApp.root_dir=" + l.workspaceDir(), "--ServerApp.open_browser=False"}
	// Containers and CI machines often run as root; JupyterLab refuses that
	// unless told.
	if isRootUser() {
		args = append(args, "--allow-root")
	}
	if err := os.MkdirAll(os.Getenv("JUPYTER_RUNTIME_DIR"), 0o700); err != nil {
		return nil, err
	}
	// Not CommandContext: the launcher stops it itself (stop), TERM first
	// so it shuts its kernels down.
	cmd := l.command(context.Background(), l.root, filepath.Join(l.venv, "bin", "jupyter"), args...)
	cmd.Cancel = nil
	dieWithLauncher(cmd)
	// The token through the environment, so it never shows in ps.
	cmd.Env = append(os.Environ(), "JUPYTER_TOKEN="+token)
	fmt.Fprintf(l.log, "=== workshop: $ jupyter %v\n", args)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start JupyterLab: %w", err)
	}
	p := &labProcess{cmd: cmd.Process, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady waits until url answers any HTTP status, for a minute.
func (p *labProcess) waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-p.done:
			return fmt.Errorf("JupyterLab exited at start (%v): is port %s free? set LAB_PORT to another port", p.err, os.Getenv("LAB_PORT"))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return errors.New("JupyterLab did not answer on " + url + " within a minute")
}

// stop sends TERM to JupyterLab (it shuts its kernels down), waits up to
// 10 s, then kills what is left of its process group.
func (p *labProcess) stop(l *launcher) {
	select {
	case <-p.done:
	default:
		l.say("stopping JupyterLab (pid %d) and its kernels", p.cmd.Pid)
		p.cmd.Signal(termSignal)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	}
	stopGroup(p.cmd, true)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
