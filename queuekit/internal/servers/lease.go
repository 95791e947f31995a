package servers

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// portLock is the per-server, per-port lock every decision is taken under,
// so two programs starting or stopping together cannot both believe they own
// the server.
type portLock struct{ f *os.File }

func (s *server) lock() (*portLock, error) {
	if err := os.MkdirAll(s.run, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: lock: %w", s.file, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: lock %s: %w", s.file, s.lockPath(), err)
	}
	return &portLock{f}, nil
}

// tryLockPort takes the port lock when it is free; nil when it is not.
func (s *server) tryLockPort() (*portLock, error) {
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	got, err := tryLock(f)
	if err != nil || !got {
		f.Close()
		return nil, err
	}
	return &portLock{f}, nil
}

func (l *portLock) unlock() { l.f.Close() }

// registration is one user of a server: "manual" (a plain file), or a file
// this process keeps locked while it lives.
type registration struct {
	name string
	f    *os.File
}

// register adds this process (or the manual user) as a user.
func (s *server) register() (*registration, error) {
	if err := os.MkdirAll(s.usersDir(), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	if s.cfg.user == "manual" {
		if err := os.WriteFile(filepath.Join(s.usersDir(), "manual"), nil, 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		return &registration{name: "manual"}, nil
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	f, err := os.OpenFile(filepath.Join(s.usersDir(), name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: register: %w", s.file, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: register: %w", s.file, err)
	}
	return &registration{name: name, f: f}, nil
}

// remove deletes the registration (under the port lock).
func (s *server) unregister(r *registration) {
	_ = os.Remove(filepath.Join(s.usersDir(), r.name))
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// liveUsers lists the registrations that still count ("manual", or a file
// whose program still holds its lock) and deletes the others. Call it under
// the port lock.
func (s *server) liveUsers() []string {
	entries, err := os.ReadDir(s.usersDir())
	if err != nil {
		return nil
	}
	var live []string
	for _, e := range entries {
		p := filepath.Join(s.usersDir(), e.Name())
		if e.Name() == "manual" {
			live = append(live, "manual")
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		got, err := tryLock(f)
		if err == nil && got { // its program is gone
			_ = os.Remove(p)
		} else if err == nil {
			live = append(live, e.Name())
		}
		f.Close()
	}
	return live
}

// describeUsers says "pid 123, a manual start" for messages.
func describeUsers(users []string) string {
	var out []string
	for _, u := range users {
		if u == "manual" {
			out = append(out, "a manual start (queuekit servers start)")
			continue
		}
		pid, _, _ := strings.Cut(u, "-")
		out = append(out, "pid "+pid)
	}
	return strings.Join(out, ", ")
}

// supervisorPid returns the pid of this server's live supervisor, or 0. A
// supervisor keeps its pid file locked; a pid file nobody holds is stale:
// what its group left running (a server whose supervisor was killed) is
// killed and the file removed. Call it under the port lock.
func (s *server) supervisorPid() int {
	f, err := os.OpenFile(s.pidPath(), os.O_RDWR, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	pid := readPid(f)
	got, err := tryLock(f)
	if err != nil {
		return 0
	}
	if !got {
		return pid
	}
	if groupAlive(pid) {
		s.say("the server its supervisor (pid %d) left behind on port %d is stopped (KILL to its process group)", pid, s.port)
		signalGroup(pid, true)
		waitGone(pid, 5*time.Second)
	}
	_ = os.Remove(s.pidPath())
	_ = os.RemoveAll(s.usersDir())
	return 0
}

func readPid(f *os.File) int {
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(sc.Text()))
	return pid
}

// waitGone waits until process group pgid has no process left, up to d.
func waitGone(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// acquire starts or joins the server and registers this program; the
// registration is nil when the server answering was not started here.
func (s *server) acquire(ctx context.Context) (*registration, error) {
	lk, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	if pid := s.supervisorPid(); pid > 0 {
		reg, err := s.register()
		if err != nil {
			return nil, err
		}
		s.say("already running on %s (supervisor pid %d); %d user(s)", s.endpoint(), pid, len(s.liveUsers()))
		return reg, nil
	}
	switch st, why := s.probe(ctx, s.endpoint()); st {
	case answers:
		s.say("%s already answers on %s (not started by queuekit servers); using it", s.label, s.endpoint())
		return nil, nil
	case wrong:
		return nil, fmt.Errorf("%s: port %d on 127.0.0.1 is taken by something that is not %s (%s); stop it or choose another port: %s=<port> queuekit servers start %s",
			s.file, s.port, s.label, why, s.portVar, s.name)
	}
	if err := s.install(ctx); err != nil {
		return nil, err
	}
	// A new server: registrations left from an earlier one belong to it.
	_ = os.RemoveAll(s.usersDir())
	reg, err := s.register()
	if err != nil {
		return nil, err
	}
	pid, err := s.spawn(ctx)
	if err != nil {
		s.unregister(reg)
		return nil, err
	}
	mode := "in memory"
	switch {
	case s.name == SQS:
		mode = "ElasticMQ starts at the first connection"
	case s.name == Limits:
		mode = "in front of " + s.target
	case s.cfg.env("DYNAMODB_DB_PATH") != "":
		mode = "tables in " + s.cfg.env("DYNAMODB_DB_PATH")
	}
	s.say("running on %s, 127.0.0.1 only (supervisor pid %d, %s, log %s)", s.endpoint(), pid, mode, s.logPath())
	return reg, nil
}

// spawn starts the supervisor and waits until the server answers.
func (s *server) spawn(ctx context.Context) (int, error) {
	if len(s.cfg.self) == 0 {
		return 0, fmt.Errorf("%s: cannot find this program's executable to run the supervisor", s.file)
	}
	log, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s: log: %w", s.file, err)
	}
	defer log.Close()
	cmd := exec.Command(s.cfg.self[0], s.cfg.self[1:]...)
	cmd.Dir = s.root
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), superviseEnv+"="+strings.Join([]string{s.name, strconv.Itoa(s.port), s.root, s.target}, "\t"))
	newGroup(cmd)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%s: start the supervisor %s: %w", s.file, s.cfg.self[0], err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	fail := func(format string, a ...any) (int, error) {
		signalGroup(pid, false)
		if !waitGone(pid, 10*time.Second) {
			signalGroup(pid, true)
		}
		_ = os.Remove(s.pidPath())
		return 0, fmt.Errorf(format, a...)
	}
	deadline := time.Now().Add(s.timeout())
	for {
		if s.name == SQS {
			// Listening is ready: a ListQueues would start ElasticMQ.
			if s.supervisorListening(s.endpoint()) {
				return pid, nil
			}
		} else if st, _ := s.probe(ctx, s.endpoint()); st == answers && s.supervisorReady() {
			return pid, nil
		}
		select {
		case <-exited:
			return fail("%s: %s exited before answering on %s: %s (log: %s)", s.file, s.label, s.endpoint(), lastLine(s.logPath()), s.logPath())
		case <-ctx.Done():
			return fail("%s: interrupted while waiting for %s on %s", s.file, s.label, s.endpoint())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail("%s: %s did not answer on %s within %s (log: %s); check the log, or raise %s", s.file, s.label, s.endpoint(), s.timeout(), s.logPath(), s.timeVar)
		}
	}
}

// supervisorReady reports whether the supervisor has written and locked its
// pid file.
func (s *server) supervisorReady() bool {
	f, err := os.OpenFile(s.pidPath(), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := tryLock(f) // closing f lets go at once when it got the lock
	return err == nil && !got
}

// lastLine is the log's last non-empty line, cut to 200 bytes.
func lastLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200]
	}
	if l == "" {
		return "nothing in the log"
	}
	return l
}

// leave removes a registration and stops the server when no live user
// remains (at once with force).
func (s *server) leave(ctx context.Context, reg *registration, force bool) error {
	lk, err := s.lock()
	if err != nil {
		return err
	}
	defer lk.unlock()
	s.unregister(reg)
	pid := s.supervisorPid()
	others := s.liveUsers()
	if pid == 0 {
		if reg.name == "manual" && len(others) == 0 {
			if st, _ := s.probe(ctx, s.endpoint()); st == answers {
				s.say("%s answers on %s but was not started by queuekit servers; leaving it alone", s.label, s.endpoint())
			} else {
				s.say("not running on port %d", s.port)
			}
		}
		return nil
	}
	if len(others) > 0 && !force {
		s.say("still used by %s; it stops when the last one is done (or: queuekit servers stop --force %s)", describeUsers(others), s.name)
		return nil
	}
	s.stopSupervisor(pid)
	return nil
}

// stopSupervisor sends TERM to the supervisor (it stops its server, TERM then
// KILL), waits for its group to end, and KILLs what is left after 15 s.
func (s *server) stopSupervisor(pid int) {
	signalPid(pid, false)
	how := "TERM"
	if !waitGone(pid, 15*time.Second) {
		signalGroup(pid, true)
		waitGone(pid, 5*time.Second)
		how = "KILL after 15 s"
	}
	_ = os.Remove(s.pidPath())
	_ = os.RemoveAll(s.usersDir())
	s.say("stopped (port %d, %s)", s.port, how)
}

func (s *server) status(ctx context.Context) State {
	st := State{Name: s.name, Endpoint: s.endpoint()}
	lk, err := s.lock()
	if err != nil {
		st.Detail = err.Error()
		return st
	}
	pid := s.supervisorPid()
	users := s.liveUsers()
	lk.unlock()
	if pid > 0 {
		st.Running, st.Ours, st.Users = true, true, len(users)
		extra := ""
		if s.name == SQS {
			extra = "; ElasticMQ not started (it starts at the first connection)"
			if jvm, err := os.ReadFile(s.jvmPidPath()); err == nil {
				extra = "; ElasticMQ runs (pid " + strings.TrimSpace(string(jvm)) + ")"
			}
		}
		st.Detail = fmt.Sprintf("running on %s (supervisor pid %d, %d user(s)%s)", s.endpoint(), pid, len(users), extra)
		return st
	}
	switch a, why := s.probe(ctx, s.endpoint()); a {
	case answers:
		st.Running = true
		st.Detail = fmt.Sprintf("running on %s (not started by queuekit servers)", s.endpoint())
	case wrong:
		st.Detail = fmt.Sprintf("not running: port %d is taken by something that is not %s (%s)", s.port, s.label, why)
	default:
		st.Detail = fmt.Sprintf("not running on port %d; start it with queuekit servers start %s", s.port, s.name)
	}
	return st
}

// waitPreset waits up to 30 s for an endpoint set from outside to answer.
func (s *server) waitPreset(ctx context.Context, ep string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, why := s.probe(ctx, ep)
		if st == answers {
			s.say("using %s at %s (%s is set)", s.label, ep, s.envVar)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: %s=%s does not answer like %s (%s); start it, or unset %s to start one here",
				s.file, s.envVar, ep, s.label, why, s.envVar)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
