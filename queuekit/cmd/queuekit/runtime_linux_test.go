package main

// The launcher's runtime tests (make test-runtime): the real `make workshop`
// and `queuekit setup` / `queuekit workspace prepare` as processes, on free
// ports, in this checkout (its .venv must exist: make setup). They take
// minutes, so `go test -short` (make test-go) skips them. Linux only: they
// use GNU env's --default-signal and ps; the launcher itself is portable.

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runtimeRoot skips in -short mode and returns the checkout, which must
// have the venv and tools that make setup installs.
func runtimeRoot(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runtime test: runs the real launcher for minutes (make test-runtime)")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".venv/bin/jupyter", ".venv/bin/gonb"} {
		if !isExec(filepath.Join(root, p)) {
			t.Fatalf("%s is missing; run make setup first", filepath.Join(root, p))
		}
	}
	return root
}

var (
	launcherOnce sync.Once
	launcherBin  string
	launcherErr  error
)

// launcherBinary builds this command once for the tests that run it
// directly (the signals test goes through make workshop, which builds its own).
func launcherBinary(t *testing.T, root string) string {
	t.Helper()
	launcherOnce.Do(func() {
		dir, err := os.MkdirTemp("", "queuekit-runtime-")
		if err != nil {
			launcherErr = err
			return
		}
		launcherBin = filepath.Join(dir, "queuekit")
		cmd := exec.Command("go", "build", "-o", launcherBin, "./queuekit/cmd/queuekit")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			launcherErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if launcherErr != nil {
		t.Fatal(launcherErr)
	}
	return launcherBin
}

// freePorts returns n ports nothing listens on, chosen by the kernel.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
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

// listening reports whether something accepts connections on the port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// eventually polls cond every 200 ms for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// homeEnv is the environment with HOME an empty directory: Go's caches and
// configuration stay where they are (so nothing is rebuilt), and the
// variables that would move Jupyter's or the XDG directories are unset.
func homeEnv(t *testing.T, home string, extra ...string) []string {
	t.Helper()
	var goenv []string
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		goenv = append(goenv, v+"="+strings.TrimSpace(string(out)))
	}
	drop := regexp.MustCompile(`^(HOME|XDG_CONFIG_HOME|XDG_DATA_HOME|XDG_CACHE_HOME|JUPYTER_[A-Z_]+|JUPYTERLAB_[A-Z_]+|IPYTHONDIR|AWS_ENDPOINT_URL_DYNAMODB|AWS_ENDPOINT_URL_SQS|DYNAMODB_PORT|SQS_PORT|LAB_PORT|WORKSHOP_[A-Z_]+)=`)
	var env []string
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	env = append(env, goenv...)
	return append(env, extra...)
}

// writtenInHome lists what appeared in home but Go's own ~/.config/go.
func writtenInHome(t *testing.T, home string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(home, p)
		switch {
		case err != nil || rel == "." || rel == ".config":
			return nil
		case rel == filepath.Join(".config", "go"):
			return filepath.SkipDir
		}
		found = append(found, rel)
		return nil
	})
	return found
}

// TestRuntimeWorkshopStopsOnSignals: `make workshop` stopped by TERM, Ctrl-C
// (INT) or HUP, three times 0.3 s apart, to its whole process group (a
// terminal's Ctrl-C, a service manager's stop) or TERM to make's PID alone
// (`kill -TERM <pid>`: make forwards it to the launcher, the second TERM kills
// make itself while the launcher cleans up), stops JupyterLab, leaves the
// servers (they stop: nobody else uses these ports), leaves no process of
// its group and no supervisor file, says which signal stopped it, prints no
// make error line, and writes nothing into $HOME.
func TestRuntimeWorkshopStopsOnSignals(t *testing.T) {
	root := runtimeRoot(t)
	for _, c := range []struct {
		sig  syscall.Signal
		to   string
		said string
	}{
		{syscall.SIGTERM, "group", "TERM"},
		{syscall.SIGINT, "group", "Ctrl-C"},
		{syscall.SIGTERM, "pid", "TERM"},
		{syscall.SIGHUP, "group", "HUP: the terminal closed"},
	} {
		t.Run(strings.SplitN(c.said, ":", 2)[0]+" to the "+c.to, func(t *testing.T) {
			stopBySignal(t, root, c.sig, c.to == "group", c.said)
		})
	}
}

func stopBySignal(t *testing.T, root string, sig syscall.Signal, group bool, said string) {
	ports := freePorts(t, 3)
	home := t.TempDir()
	token := fmt.Sprintf("runtime-test-%d", os.Getpid())
	// A session of its own (so a group signal reaches make, the launcher and
	// nothing else) with INT and TERM at their default actions, whatever
	// go test inherited.
	cmd := exec.Command("env", "--default-signal=INT,TERM,HUP", "make", "-C", root, "workshop")
	cmd.Env = homeEnv(t, home,
		fmt.Sprintf("DYNAMODB_PORT=%d", ports[0]), fmt.Sprintf("SQS_PORT=%d", ports[1]), fmt.Sprintf("LAB_PORT=%d", ports[2]),
		"WORKSHOP_SKIP_SETUP=1", "JUPYTER_TOKEN="+token, "WORKSHOP_WORKSPACE="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("make workshop's output:\n%s", out.String())
		}
	}()
	if !eventually(10*time.Minute, func() bool {
		select {
		case err := <-waited:
			waited <- err
			return true
		default:
		}
		return strings.Contains(out.String(), "The workshop is running")
	}) || !strings.Contains(out.String(), "The workshop is running") {
		t.Fatal("make workshop printed no URL")
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/lab/tree/(\S+)\?token=`).FindStringSubmatch(out.String())
	if url == nil || !strings.HasPrefix(url[1], "00-") {
		t.Errorf("the URL does not open notebook 00: %q", url)
	}
	labURL := fmt.Sprintf("http://127.0.0.1:%d/api", ports[2])
	labAnswers := func() bool {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(labURL)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	}
	if !labAnswers() {
		t.Error("JupyterLab does not answer")
	}
	if !listening(ports[0]) || !listening(ports[1]) {
		t.Errorf("DynamoDB Local (%d) or ElasticMQ (%d) does not listen", ports[0], ports[1])
	}

	target := -pgid
	if !group {
		target = pgid
	}
	for range 3 {
		syscall.Kill(target, sig)
		time.Sleep(300 * time.Millisecond)
	}
	var status error
	select {
	case status = <-waited:
	case <-time.After(60 * time.Second):
		t.Fatalf("make workshop still runs 60 s after the last %v", sig)
	}
	if status == nil {
		t.Errorf("make workshop exited 0 after %v; want non-zero (interrupted)", sig)
	}
	if !eventually(30*time.Second, func() bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }) {
		ps, _ := exec.Command("ps", "-o", "pid=,command=", "-g", fmt.Sprint(pgid)).Output()
		t.Errorf("processes of make workshop's group still run:\n%s", ps)
	}
	if !eventually(30*time.Second, func() bool { return !listening(ports[0]) && !listening(ports[1]) }) {
		t.Errorf("DynamoDB Local (%d) or ElasticMQ (%d) still listens after the workshop left them", ports[0], ports[1])
	}
	if labAnswers() {
		t.Error("JupyterLab still answers")
	}
	for _, pat := range []string{fmt.Sprintf(".cache/dynamodb-local/run/*-%d.*", ports[0]), fmt.Sprintf(".cache/elasticmq/run/*-%d.*", ports[1])} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range m {
			// the supervisor's and the JVM's pid files (logs, lock files and
			// the empty registrations folder may stay)
			if strings.HasSuffix(f, ".supervisor") || strings.HasSuffix(f, ".jvm") {
				t.Errorf("left behind: %s", f)
			}
		}
	}
	log := out.String()
	if strings.Contains(log, "make: ***") {
		t.Errorf("%v reads as an error: make printed an error line", sig)
	}
	if !strings.Contains(log, "workshop: stopped ("+said+")") {
		t.Errorf("no line 'workshop: stopped (%s)'", said)
	}
	if m := regexp.MustCompile(`(?i:broken pipe|write error)|Terminated`).FindString(log); m != "" {
		t.Errorf("a sign of a cleanup cut short: %q", m)
	}
	if w := writtenInHome(t, home); len(w) > 0 {
		t.Errorf("written into $HOME: %v", w)
	}
}

// TestRuntimeNothingInHome: queuekit setup (its kernelspec step forced, the
// one that runs gonb and jupyter), queuekit workspace prepare (which starts
// the gonb kernel) and `jupyter kernelspec list` with HOME an empty
// directory write nothing there but Go's ~/.config/go; setup installs into
// the checkout.
func TestRuntimeNothingInHome(t *testing.T) {
	root := runtimeRoot(t)
	bin := launcherBinary(t, root)
	home := t.TempDir()
	ws := t.TempDir()
	info := filepath.Join(root, ".venv", "share", "gonb-language-info.json")
	restore := keepFile(t, info)
	defer restore()
	os.Remove(info) // prepare starts the kernel only without it
	if err := os.Remove(filepath.Join(root, ".venv", ".setup", "kernel")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, args := range [][]string{{bin, "setup"}, {bin, "workspace", "prepare"}, {filepath.Join(root, ".venv", "bin", "jupyter"), "kernelspec", "list"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = root
		cmd.Env = homeEnv(t, home, "WORKSHOP_WORKSPACE="+ws)
		if args[1] == "kernelspec" { // run directly: the environment queuekit gives the tools it runs
			venv := filepath.Join(root, ".venv")
			cmd.Env = append(cmd.Env, "JUPYTER_DATA_DIR="+filepath.Join(venv, "share", "jupyter"),
				"JUPYTER_CONFIG_DIR="+filepath.Join(venv, "etc", "jupyter"), "JUPYTER_CONFIG_PATH="+filepath.Join(root, "jupyter"),
				"JUPYTER_RUNTIME_DIR="+filepath.Join(venv, "share", "jupyter", "runtime"), "IPYTHONDIR="+filepath.Join(venv, "share", "ipython"))
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s with an empty home: %v\n%s", strings.Join(args[1:], " "), err, out)
		}
		if args[1] == "kernelspec" && !listsKernel(string(out), "gonb") {
			t.Errorf("jupyter kernelspec list does not list gonb:\n%s", out)
		}
	}
	if w := writtenInHome(t, home); len(w) > 0 {
		t.Errorf("written into $HOME (only ~/.config/go may be): %v", w)
	}
}

// keepFile saves path and returns a function that puts it back as it was.
func keepFile(t *testing.T, path string) func() {
	t.Helper()
	saved, err := os.ReadFile(path)
	had := err == nil
	return func() {
		if had {
			if err := os.WriteFile(path, saved, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestRuntimeNoKernelProcessLeft: workspace prepare asks the gonb kernel for
// its metadata (when the metadata file is missing) and shuts it down; gonb
// starts gopls in a process group of its own, so a kernel killed rather
// than shut down used to leave gopls running. Three prepares, each starting
// and stopping a kernel, leave no gonb or gopls of this checkout's .venv
// that did not run before.
func TestRuntimeNoKernelProcessLeft(t *testing.T) {
	root := runtimeRoot(t)
	if !isExec(filepath.Join(root, ".venv", "bin", "gopls")) {
		t.Fatal(".venv/bin/gopls is missing; run make setup first")
	}
	bin := launcherBinary(t, root)
	info := filepath.Join(root, ".venv", "share", "gonb-language-info.json")
	restore := keepFile(t, info)
	defer restore()
	ours := func() map[string]string {
		out, err := exec.Command("ps", "-A", "-o", "pid=,command=").Output()
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		prefix := filepath.Join(root, ".venv", "bin")
		// .venv/bin/gopls is a wrapper that execs .venv/libexec/gopls.
		real := filepath.Join(root, ".venv", "libexec", "gopls")
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && (f[1] == prefix+"/gonb" || f[1] == prefix+"/gopls" || f[1] == real) {
				found[f[0]] = strings.Join(f[1:], " ")
			}
		}
		return found
	}
	before := ours()
	ws := t.TempDir()
	for i := 1; i <= 3; i++ {
		os.Remove(info)
		cmd := exec.Command(bin, "workspace", "prepare")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "WORKSHOP_WORKSPACE="+ws)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("prepare %d: %v\n%s", i, err, out)
		}
		if b, err := os.ReadFile(info); err != nil || !strings.Contains(string(b), `"language_info"`) {
			t.Fatalf("prepare %d wrote no language_info into %s (%v)", i, info, err)
		}
	}
	var left map[string]string
	if !eventually(10*time.Second, func() bool {
		left = map[string]string{}
		for pid, c := range ours() {
			if before[pid] == "" {
				left[pid] = c
			}
		}
		return len(left) == 0
	}) {
		t.Errorf("still running after the kernels were shut down: %v", left)
	}
}
