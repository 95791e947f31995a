package servers

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/jars"
)

// superviseEnv carries a supervisor's task from the program that starts it:
// name, port, checkout and (limits) target, separated by tabs.
const superviseEnv = "QUEUEKIT_SUPERVISE"

// IsSupervisor reports whether this process was started as a supervisor
// (QUEUEKIT_SUPERVISE is set): its main function should call Supervise.
func IsSupervisor() bool { return os.Getenv(superviseEnv) != "" }

// The JVMs' default settings, as the variables DYNAMODB_JAVA_OPTS and
// ELASTICMQ_JAVA_OPTS replace them. The JVM's own defaults size the heap at a
// quarter of the machine's memory and let G1 grow into it (DynamoDB Local:
// 721 MB resident after the lease tests, 231 MB with these flags; its items
// live in SQLite's native memory, not the heap: docs/room.md). DynamoDB
// Local keeps C2: the executors' benchmarks measure its throughput.
// ElasticMQ keeps its messages on the heap; C1 only (TieredStopAtLevel=1)
// compiles quickly on a shared 2-core machine.
const (
	DynamoDBJavaOpts  = "-Xms16m -Xmx192m -XX:+UseSerialGC -Xss512k -XX:ReservedCodeCacheSize=48m"
	ElasticMQJavaOpts = "-Xms16m -Xmx128m -XX:+UseSerialGC -Xss512k -XX:ReservedCodeCacheSize=32m -XX:TieredStopAtLevel=1 -XX:MaxMetaspaceSize=96m"
)

// DefaultIdleStop is how long ElasticMQ may go without a byte through the
// SQS port before its supervisor stops it (when no queue exists);
// SQS_IDLE_STOP (a Go duration, "0" never) changes it.
const DefaultIdleStop = 10 * time.Minute

// Supervise runs the supervisor QUEUEKIT_SUPERVISE describes until its
// server stops, and returns the exit status. Its output is the server's log.
func Supervise() int {
	f := strings.Split(os.Getenv(superviseEnv), "\t")
	if len(f) != 4 {
		fmt.Fprintf(os.Stderr, "supervisor: %s=%q: want name, port, checkout, target\n", superviseEnv, os.Getenv(superviseEnv))
		return 2
	}
	c := newConfig(nil)
	s, err := c.server(f[2], f[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "supervisor: %v\n", err)
		return 2
	}
	s.port, _ = strconv.Atoi(f[1])
	s.target = f[3]
	c.log = os.Stderr
	sv := &supervisor{s: s, done: make(chan string, 4)}
	return sv.run()
}

type supervisor struct {
	s    *server
	done chan string // why to stop

	mu    sync.Mutex // the child and the proxy's connections
	child *child
	conns map[net.Conn]struct{}
	last  atomic.Int64 // unix nanoseconds of the last byte proxied
	inner string       // ElasticMQ's internal address
	kept  bool         // an idle stop was skipped because queues exist
}

// child is a server process of the supervisor's group.
type child struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func (sv *supervisor) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "supervisor: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func (sv *supervisor) run() int {
	s := sv.s
	signal.Ignore(ignoredSignals...)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, termSignals...)

	pidf, err := os.OpenFile(s.pidPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		err = lockFile(pidf)
	}
	if err == nil {
		_ = pidf.Truncate(0)
		_, err = pidf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		sv.logf("pid file %s: %v", s.pidPath(), err)
		return 1
	}
	defer pidf.Close()

	var ln net.Listener
	switch s.name {
	case SQS:
		ln, err = net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err != nil {
			sv.logf("cannot listen on 127.0.0.1:%d: %v", s.port, err)
			return 1
		}
		sv.conns = map[net.Conn]struct{}{}
		sv.last.Store(time.Now().UnixNano())
		go sv.accept(ln)
		sv.logf("listening on 127.0.0.1:%d; ElasticMQ starts at the first connection, stops after %s idle with no queue", s.port, sv.idle())
	default:
		if err := sv.startChild(); err != nil {
			sv.logf("%v", err)
			return 1
		}
	}

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	why := ""
	var held *portLock // the port lock, held while stopping with no user left
	for why == "" {
		var exited chan struct{}
		sv.mu.Lock()
		if sv.child != nil {
			exited = sv.child.exited
		}
		sv.mu.Unlock()
		select {
		case sig := <-sigs:
			why = "asked to stop (" + sig.String() + ")"
		case <-exited:
			if s.name != SQS {
				why = s.label + " exited by itself"
			} else {
				sv.mu.Lock()
				sv.logf("ElasticMQ exited by itself; it starts again at the next connection")
				sv.child = nil
				_ = os.Remove(s.jvmPidPath())
				sv.mu.Unlock()
			}
		case <-tick.C:
			if held = sv.noUsers(); held != nil {
				why = "no user left"
			} else if s.name == SQS {
				sv.idleStop()
			}
		}
	}
	if ln != nil {
		ln.Close()
	}
	sv.logf("stopping: %s", why)
	sv.mu.Lock()
	sv.stopChild()
	for c := range sv.conns {
		c.Close()
	}
	sv.mu.Unlock()
	if held != nil {
		// No program asked: clean up as leave would, still under the lock,
		// so nobody joins a server that is stopping.
		_ = os.Remove(s.pidPath())
		_ = os.RemoveAll(s.usersDir())
		held.unlock()
	}
	sv.logf("stopped")
	return 0
}

// noUsers returns the port lock, held, when no live user remains; nil when
// users remain or another program holds the lock (then the next tick
// decides: a program stopping the server holds it while it waits for this
// supervisor to exit on its TERM).
func (sv *supervisor) noUsers() *portLock {
	lk, err := sv.s.tryLockPort()
	if err != nil || lk == nil {
		return nil
	}
	if len(sv.s.liveUsers()) > 0 {
		lk.unlock()
		return nil
	}
	return lk
}

// command is the server's command line and working directory.
func (sv *supervisor) command() ([]string, string, error) {
	s := sv.s
	switch s.name {
	case DynamoDB:
		store := []string{"-inMemory"}
		if p := s.cfg.env("DYNAMODB_DB_PATH"); p != "" {
			abs, err := filepath.Abs(p)
			if st, e := os.Stat(abs); err != nil || e != nil || !st.IsDir() {
				return nil, "", fmt.Errorf("DYNAMODB_DB_PATH=%s is not a directory; create it first, or unset DYNAMODB_DB_PATH to keep the tables in memory", p)
			}
			store = []string{"-dbPath", abs}
		}
		launcher, err := s.launcherDir()
		if err != nil {
			return nil, "", err
		}
		args := []string{"java", "-Djava.net.preferIPv4Stack=true"}
		args = append(args, javaOpts(s.cfg.env("DYNAMODB_JAVA_OPTS"), DynamoDBJavaOpts)...)
		args = append(args, "-cp", launcher+string(os.PathListSeparator)+"DynamoDBLocal.jar", launcherClass)
		args = append(args, store...)
		args = append(args, "-sharedDb", "-port", strconv.Itoa(s.port), "-disableTelemetry")
		return args, jars.DynamoDBLocal.Home(s.dir), nil
	case Limits:
		exe, err := os.Executable()
		if err != nil {
			return nil, "", err
		}
		if b := s.cfg.env("QUEUEKIT_BIN"); b != "" {
			exe = b
		}
		scale := s.cfg.env("LIMITS_SCALE")
		if scale == "" {
			scale = "1"
		}
		args := []string{exe, "limits", "--listen", fmt.Sprintf("127.0.0.1:%d", s.port), "--target", s.target, "--scale", scale}
		if st := s.cfg.env("LIMITS_STATS"); st != "" {
			args = append(args, "--json-stats", st)
		}
		return args, s.root, nil
	case SQS:
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, "", err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		conf := filepath.Join(s.run, fmt.Sprintf("elasticmq-%d.conf", s.port))
		// The bundled defaults (the request timeout 20 s long polls need),
		// then 127.0.0.1 only on the internal port, with queue URLs naming
		// the public one.
		text := fmt.Sprintf(`include classpath("application.conf")
node-address { protocol = http, host = 127.0.0.1, port = %d, context-path = "" }
rest-sqs { enabled = true, bind-port = %d, bind-hostname = "127.0.0.1", sqs-limits = strict }
aws { region = "us-east-1", accountId = "000000000000" }
`, s.port, port)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, "", err
		}
		sv.inner = fmt.Sprintf("127.0.0.1:%d", port)
		args := []string{"java", "-Djava.net.preferIPv4Stack=true"}
		args = append(args, javaOpts(s.cfg.env("ELASTICMQ_JAVA_OPTS"), ElasticMQJavaOpts)...)
		args = append(args, "-Dconfig.file="+conf, "-cp", "lib/*", "org.elasticmq.server.Main")
		return args, jars.ElasticMQ.Home(s.dir), nil
	}
	return nil, "", fmt.Errorf("unknown server %q", s.name)
}

func javaOpts(v, def string) []string {
	if strings.TrimSpace(v) == "" {
		v = def
	}
	return strings.Fields(v)
}

// startChild starts the server in the supervisor's process group. Call it
// with sv.mu held, or before the proxy runs.
func (sv *supervisor) startChild() error {
	args, dir, err := sv.command()
	if err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", args[0], err)
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.exited) }()
	sv.child = c
	sv.logf("started %s (pid %d): %s", sv.s.label, cmd.Process.Pid, strings.Join(args, " "))
	if sv.s.name != Limits {
		_ = os.WriteFile(sv.s.jvmPidPath(), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	}
	return nil
}

// stopChild stops the server: TERM, then KILL after 10 s. Call it with
// sv.mu held.
func (sv *supervisor) stopChild() {
	c := sv.child
	if c == nil {
		return
	}
	sv.child = nil
	signalPid(c.cmd.Process.Pid, false)
	select {
	case <-c.exited:
		sv.logf("%s stopped (TERM)", sv.s.label)
	case <-time.After(10 * time.Second):
		signalPid(c.cmd.Process.Pid, true)
		<-c.exited
		sv.logf("%s stopped (KILL: no exit 10 s after TERM)", sv.s.label)
	}
	_ = os.Remove(sv.s.jvmPidPath())
}

// idle is how long ElasticMQ may go without traffic before an idle stop.
func (sv *supervisor) idle() time.Duration {
	if v := sv.s.cfg.env("SQS_IDLE_STOP"); v != "" {
		if v == "0" {
			return 0
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return DefaultIdleStop
}

// idleStop stops ElasticMQ when nothing went through the SQS port for the
// idle time and no queue exists, so that nothing is lost.
func (sv *supervisor) idleStop() {
	d := sv.idle()
	if d == 0 || time.Since(time.Unix(0, sv.last.Load())) < d {
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.child == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	before := sv.last.Load()
	qs, err := listQueues(ctx, "http://"+sv.inner)
	if sv.last.Load() != before || time.Since(time.Unix(0, before)) < d {
		return // a request came in meanwhile
	}
	if err != nil || len(qs) > 0 {
		if !sv.kept {
			sv.logf("idle for %s, but ElasticMQ keeps running: %d queue(s) exist%s", d, len(qs), errNote(err))
			sv.kept = true
		}
		return
	}
	sv.kept = false
	sv.logf("idle for %s and no queue exists: stopping ElasticMQ until the next connection", d)
	for c := range sv.conns {
		c.Close()
	}
	sv.stopChild()
}

// accept proxies each connection to ElasticMQ, starting it first when it
// does not run.
func (sv *supervisor) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go sv.proxy(c)
	}
}

func (sv *supervisor) proxy(c net.Conn) {
	// The first bytes start ElasticMQ: a bare connection (a readiness
	// check, a port scan) does not.
	first := make([]byte, 32<<10)
	n, err := c.Read(first)
	if n == 0 || err != nil && n == 0 {
		c.Close()
		return
	}
	first = first[:n]
	sv.last.Store(time.Now().UnixNano())
	sv.mu.Lock()
	if sv.child == nil {
		if err := sv.startElasticMQ(); err != nil {
			sv.mu.Unlock()
			sv.logf("%v", err)
			c.Close()
			return
		}
	}
	inner := sv.inner
	sv.conns[c] = struct{}{}
	sv.mu.Unlock()
	defer func() {
		sv.mu.Lock()
		delete(sv.conns, c)
		sv.mu.Unlock()
		c.Close()
	}()
	b, err := net.Dial("tcp4", inner)
	if err != nil {
		sv.logf("connect to ElasticMQ at %s: %v", inner, err)
		return
	}
	defer b.Close()
	if _, err := b.Write(first); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sv.pipe(b, c)
		if tc, ok := b.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	sv.pipe(c, b)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	wg.Wait()
}

// pipe copies src to dst, noting the time of each chunk.
func (sv *supervisor) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			sv.last.Store(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// startElasticMQ starts the JVM and waits until it answers ListQueues on
// its internal port. Call it with sv.mu held.
func (sv *supervisor) startElasticMQ() error {
	t0 := time.Now()
	if err := sv.startChild(); err != nil {
		return err
	}
	deadline := t0.Add(sv.s.timeout())
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := listQueues(ctx, "http://"+sv.inner)
		cancel()
		if err == nil {
			sv.last.Store(time.Now().UnixNano()) // idle counts from here
			sv.logf("ElasticMQ answers on %s after %.1f s", sv.inner, time.Since(t0).Seconds())
			return nil
		}
		select {
		case <-sv.child.exited:
			sv.child = nil
			_ = os.Remove(sv.s.jvmPidPath())
			return fmt.Errorf("ElasticMQ exited before answering on %s", sv.inner)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			sv.stopChild()
			return fmt.Errorf("ElasticMQ did not answer on %s within %s", sv.inner, sv.s.timeout())
		}
	}
}

// errNote is "" or " (ListQueues: <err>)".
func errNote(err error) string {
	if err == nil {
		return ""
	}
	return " (ListQueues: " + err.Error() + ")"
}
