// Package servers supervises the workshop's local servers: DynamoDB Local,
// ElasticMQ (SQS) and the limits layer (queuekit limits), on 127.0.0.1 only,
// shared by every program of the checkout that uses them at once.
//
// A program takes a Lease with Acquire: each server it names is started, or
// joined when it already runs, and the Lease holds one user registration on
// it: a file under .cache/<server>/run/<server>-<port>.leases/ that the
// program keeps locked (flock) while it lives. A registration whose program
// died, even by SIGKILL, no longer counts, since the kernel drops its lock.
// Release leaves; the last user to leave stops the server, and never a
// server someone else still uses.
//
// Each server runs under a supervisor of its own: a `queuekit servers
// supervise` process in a new process group (the server's JVM or queuekit
// limits in the same group), detached from the terminal, which stops its
// server (TERM, then KILL after 10 s) and exits when no live user remains,
// when a user with --force or the last user asks, or on TERM. The supervisor
// of ElasticMQ listens on the SQS port itself and starts the JVM, on an
// internal port, at the first connection, proxying TCP; it stops the JVM again
// after IdleStop without traffic when no queue exists (ElasticMQ keeps queues
// in memory, so nothing is lost). Notebooks that never use SQS never start it.
//
// Readiness is checked through the AWS layer: a DynamoDB ListTables, an SQS
// ListQueues. A port held by something that is not the server is an error of
// one line naming the port and the variable that moves it. A server that
// answers on the port but was not started by a supervisor (docker compose's,
// one of an older checkout) is used and never stopped.
//
// Each step prints one line, "<server>: ...", to the log writer; the
// servers' own output goes to .cache/<server>/run/<server>-<port>.log.
package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Names of the servers, in the order they start.
const (
	DynamoDB = "dynamodb"
	SQS      = "sqs"
	Limits   = "limits"
)

// spec is one server's fixed facts.
type spec struct {
	name    string // DynamoDB, SQS, Limits
	file    string // file and line prefix: "dynamodb-local"
	label   string // "DynamoDB Local"
	portVar string // "DYNAMODB_PORT"
	defPort int
	dirVar  string // install directory variable, "" for limits
	cache   string // .cache/<cache>
	envVar  string // the endpoint variable a program gets
	timeVar string // start timeout variable
}

var specs = map[string]spec{
	DynamoDB: {DynamoDB, "dynamodb-local", "DynamoDB Local", "DYNAMODB_PORT", 8000, "DYNAMODB_LOCAL_DIR", "dynamodb-local", "AWS_ENDPOINT_URL_DYNAMODB", "DYNAMODB_START_TIMEOUT"},
	SQS:      {SQS, "elasticmq", "ElasticMQ (SQS)", "SQS_PORT", 9324, "ELASTICMQ_DIR", "elasticmq", "AWS_ENDPOINT_URL_SQS", "SQS_START_TIMEOUT"},
	Limits:   {Limits, "limits", "the limits layer", "LIMITS_PORT", 8400, "", "limits", "AWS_ENDPOINT_URL_DYNAMODB", "LIMITS_START_TIMEOUT"},
}

// order is the start order; Release leaves in reverse.
var order = []string{DynamoDB, SQS, Limits}

// Known reports whether name is a server this package supervises.
func Known(name string) bool { _, ok := specs[name]; return ok }

// ParseNames splits "dynamodb,sqs" (commas or spaces) into names in start
// order, without duplicates; unknown names are an error naming the known.
func ParseNames(s string) ([]string, error) {
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !Known(f) {
			return nil, fmt.Errorf("unknown server %q; known: dynamodb, sqs, limits", f)
		}
		seen[f] = true
	}
	var out []string
	for _, n := range order {
		if seen[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// Option changes how Acquire, Stop and Status work.
type Option func(*config)

type config struct {
	log    io.Writer
	user   string // "" : this process, locked; "manual": a plain file
	self   []string
	preset bool
	env    func(string) string
}

// WithLog sends the step lines to w (default os.Stderr).
func WithLog(w io.Writer) Option { return func(c *config) { c.log = w } }

// Manual registers the person at the terminal instead of this process: the
// registration outlives the program until Stop (`queuekit servers start`).
func Manual() Option { return func(c *config) { c.user = "manual" } }

// WithSupervisor sets the command line that runs a supervisor, followed by
// no further arguments (it reads QUEUEKIT_SUPERVISE); default: this program
// with `servers supervise`. Tests pass their own binary, whose TestMain calls
// Supervise.
func WithSupervisor(argv ...string) Option { return func(c *config) { c.self = argv } }

// UsePreset makes Acquire use an endpoint already set in the environment
// (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS: docker compose sets
// both) after checking that it answers, instead of starting a server.
func UsePreset() Option { return func(c *config) { c.preset = true } }

// WithEnv reads variables through get instead of os.Getenv.
func WithEnv(get func(string) string) Option { return func(c *config) { c.env = get } }

func newConfig(opts []Option) *config {
	c := &config{log: os.Stderr, env: os.Getenv}
	for _, o := range opts {
		o(c)
	}
	if c.self == nil {
		if exe, err := os.Executable(); err == nil {
			c.self = []string{exe, "servers", "supervise"}
		}
	}
	return c
}

// server is one spec placed in a checkout, on a port.
type server struct {
	spec
	root string
	port int
	dir  string // install directory (.cache/<cache> or $dirVar)
	run  string // run directory
	cfg  *config
	// target is the limits layer's DynamoDB endpoint.
	target string
}

func (c *config) server(root, name string) (*server, error) {
	sp, ok := specs[name]
	if !ok {
		return nil, fmt.Errorf("unknown server %q; known: dynamodb, sqs, limits", name)
	}
	port := sp.defPort
	if v := c.env(sp.portVar); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%s=%q is not a port; unset it or give a number such as %d", sp.portVar, v, sp.defPort)
		}
		port = p
	}
	dir := filepath.Join(root, ".cache", sp.cache)
	if sp.dirVar != "" && c.env(sp.dirVar) != "" {
		d, err := filepath.Abs(c.env(sp.dirVar))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sp.dirVar, err)
		}
		dir = d
	}
	return &server{spec: sp, root: root, port: port, dir: dir, run: filepath.Join(dir, "run"), cfg: c}, nil
}

// Endpoint is the server's URL, http://127.0.0.1:<port>.
func (s *server) endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", s.port) }

func (s *server) base() string { return filepath.Join(s.run, fmt.Sprintf("%s-%d", s.file, s.port)) }
func (s *server) lockPath() string {
	return filepath.Join(s.run, fmt.Sprintf(".%s-%d.lock", s.file, s.port))
}
func (s *server) pidPath() string  { return s.base() + ".supervisor" }
func (s *server) usersDir() string { return s.base() + ".leases" }
func (s *server) logPath() string  { return s.base() + ".log" }

// jvmPidPath holds the pid of the server's JVM while it runs (DynamoDB
// Local, ElasticMQ): what benchmarks pin or measure.
func (s *server) jvmPidPath() string { return s.base() + ".jvm" }

func (s *server) say(format string, a ...any) {
	fmt.Fprintf(s.cfg.log, "%s: %s\n", s.file, fmt.Sprintf(format, a...))
}

func (s *server) timeout() time.Duration {
	if v := s.cfg.env(s.timeVar); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 60 * time.Second
}

// Lease is a program's hold on the servers it acquired. Release it once.
type Lease struct {
	held      []*hold
	endpoints map[string]string
	log       io.Writer
}

// hold is one server joined: its registration (nil for a server used but
// not supervised here).
type hold struct {
	s   *server
	reg *registration
}

// Endpoints maps each acquired server's name to its URL. When the limits
// layer was acquired, DynamoDB's programs should use its endpoint: Env says so.
func (l *Lease) Endpoints() map[string]string {
	out := make(map[string]string, len(l.endpoints))
	for k, v := range l.endpoints {
		out[k] = v
	}
	return out
}

// Env is the environment a program run under the lease gets:
// AWS_ENDPOINT_URL_DYNAMODB (the limits layer's when acquired) and
// AWS_ENDPOINT_URL_SQS, as NAME=value.
func (l *Lease) Env() []string {
	var env []string
	if ep, ok := l.endpoints[Limits]; ok {
		env = append(env, specs[Limits].envVar+"="+ep)
	} else if ep, ok := l.endpoints[DynamoDB]; ok {
		env = append(env, specs[DynamoDB].envVar+"="+ep)
	}
	if ep, ok := l.endpoints[SQS]; ok {
		env = append(env, specs[SQS].envVar+"="+ep)
	}
	return env
}

// Acquire starts or joins each named server of the checkout at root (ports
// from DYNAMODB_PORT, SQS_PORT, LIMITS_PORT) and registers this program as a
// user of each. On error, what it had joined is released.
func Acquire(ctx context.Context, root string, names []string, opts ...Option) (*Lease, error) {
	c := newConfig(opts)
	l := &Lease{endpoints: map[string]string{}, log: c.log}
	names, err := ParseNames(strings.Join(names, ","))
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		s, err := c.server(root, n)
		if err != nil {
			_ = l.Release(context.Background())
			return nil, err
		}
		if c.preset && s.name != Limits {
			if ep := c.env(s.envVar); ep != "" {
				if err := s.waitPreset(ctx, ep); err != nil {
					_ = l.Release(context.Background())
					return nil, err
				}
				l.endpoints[n] = ep
				continue
			}
		}
		if s.name == Limits {
			target := l.endpoints[DynamoDB]
			if target == "" {
				target = c.env("LIMITS_TARGET")
			}
			if target == "" {
				target = fmt.Sprintf("http://127.0.0.1:%d", specs[DynamoDB].defPort)
			}
			s.target = target
		}
		reg, err := s.acquire(ctx)
		if reg != nil || err == nil {
			l.held = append(l.held, &hold{s: s, reg: reg})
		}
		if err != nil {
			_ = l.Release(context.Background())
			return nil, err
		}
		l.endpoints[n] = s.endpoint()
	}
	return l, nil
}

// Release leaves every server of the lease, in reverse order; each stops
// when its last user has left. It waits for the stops, and it is safe to
// call twice.
func (l *Lease) Release(ctx context.Context) error {
	var errs []error
	for i := len(l.held) - 1; i >= 0; i-- {
		h := l.held[i]
		if h.reg == nil {
			continue
		}
		if err := h.s.leave(ctx, h.reg, false); err != nil {
			errs = append(errs, err)
		}
	}
	l.held = nil
	return errors.Join(errs...)
}

// State is what Status reports for one server.
type State struct {
	Name     string
	Endpoint string
	Running  bool   // something answers (or, for SQS, the supervisor listens)
	Ours     bool   // a supervisor of this checkout runs it
	Users    int    // live registrations
	Detail   string // one line for people
}

// Status says, for each named server, whether it runs and who uses it.
func Status(ctx context.Context, root string, names []string, opts ...Option) ([]State, error) {
	c := newConfig(opts)
	var out []State
	for _, n := range names {
		s, err := c.server(root, n)
		if err != nil {
			return nil, err
		}
		out = append(out, s.status(ctx))
	}
	return out, nil
}

// Stop removes the manual registration on each named server (`queuekit
// servers start`'s); a server stops when no live user remains, or at once
// with force.
func Stop(ctx context.Context, root string, names []string, force bool, opts ...Option) error {
	c := newConfig(append(opts, Manual()))
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		s, err := c.server(root, names[i])
		if err != nil {
			return err
		}
		if err := s.leave(ctx, &registration{name: "manual"}, force); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Command installs the server when needed and returns its command line in
// the foreground, as its supervisor runs it, on port (127.0.0.1 only): the
// process is the server itself, for tests that pause or kill it. Only
// DynamoDB Local; DYNAMODB_DB_PATH and DYNAMODB_JAVA_OPTS (through opts'
// WithEnv, or the environment) apply.
func Command(ctx context.Context, root, name string, port int, opts ...Option) (*exec.Cmd, error) {
	if name != DynamoDB {
		return nil, fmt.Errorf("servers.Command runs DynamoDB Local only, not %q", name)
	}
	c := newConfig(opts)
	s, err := c.server(root, name)
	if err != nil {
		return nil, err
	}
	s.port = port
	if err := s.install(ctx); err != nil {
		return nil, err
	}
	args, dir, err := (&supervisor{s: s}).command()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	return cmd, nil
}
