package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The launcher: what `queuekit setup`, `queuekit workshop`, `queuekit
// prefetch` and `queuekit workspace` share. It prints only its own step
// lines ("workshop: [12 s] 2/5 ..."), one every aliveEvery at least while a
// step runs; the output of every tool it runs (pip, go, gonb, jupyter, the
// server scripts) goes to a log file in .cache/ whose name the first line
// gives. Nothing here is specific to one operating system: processes and
// signals are in proc_unix.go and proc_other.go.

// aliveEvery is the longest a step runs without a line.
const aliveEvery = 5 * time.Second

// launcher is one run of a launcher command in the checkout root.
type launcher struct {
	root, venv string
	prefix     string    // "workshop", "setup", ...
	out        io.Writer // the person's terminal (stderr)
	logPath    string
	log        *os.File
	began      time.Time

	mu sync.Mutex // serialises lines to out
}

// newLauncher finds the checkout from the working directory, sets the
// environment scripts/env.sh used to set (Jupyter, IPython, pip inside the
// checkout; Go's module cache first on GOPROXY) and opens the log
// .cache/<logName>, truncated.
func newLauncher(prefix, logName string, out io.Writer) (*launcher, error) {
	root, err := checkout()
	if err != nil {
		return nil, usagef("%v; run it in the workshop's checkout (make %s)", err, prefix)
	}
	l := &launcher{root: root, venv: filepath.Join(root, ".venv"), prefix: prefix, out: out, began: time.Now()}
	// make counts from its own start, so the launcher's build is in the times.
	if t0, err := strconv.ParseInt(os.Getenv("PROGRESS_START"), 10, 64); err == nil && t0 > 0 && time.Unix(t0, 0).Before(l.began) {
		l.began = time.Unix(t0, 0)
	}
	if err := os.MkdirAll(filepath.Join(root, ".cache"), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Join(root, ".cache"), err)
	}
	l.logPath = filepath.Join(root, ".cache", logName)
	if l.log, err = os.Create(l.logPath); err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	l.setEnv()
	return l, nil
}

// newInstaller is newLauncher for the commands that install (setup,
// prefetch): it names the log on the terminal and checks Go and Python
// first, closing the log when they are missing.
func newInstaller(ctx context.Context, prefix string, out io.Writer) (*launcher, error) {
	l, err := newLauncher(prefix, prefix+".log", out)
	if err != nil {
		return nil, err
	}
	l.step("log of the tools' output: %s", l.logPath)
	if err := l.checkPrereqs(ctx, false); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// close closes the log.
func (l *launcher) close() { l.log.Close() }

// setEnv is scripts/env.sh's environment, for this process and every one it
// starts: .venv/bin first on PATH, every Jupyter and IPython file inside
// .venv (nothing in $HOME but Go's caches), the workshop's Jupyter
// configuration (jupyter/), pip's and npm's caches in .cache/ (JupyterLab
// runs npm when it is installed), gopls' and
// goimports' caches in .cache/user-cache, static credentials for
// the local servers, and Go's module cache first on GOPROXY (GoNB's `go get`
// before each cell answers from it, offline too).
func (l *launcher) setEnv() {
	share := filepath.Join(l.venv, "share", "jupyter")
	set := map[string]string{
		"WORKSHOP_ROOT":             l.root,
		"WORKSHOP_VENV":             l.venv,
		"JUPYTER_DATA_DIR":          share,
		"JUPYTER_CONFIG_DIR":        filepath.Join(l.venv, "etc", "jupyter"),
		"JUPYTER_CONFIG_PATH":       filepath.Join(l.root, "jupyter"),
		"JUPYTER_RUNTIME_DIR":       filepath.Join(share, "runtime"),
		"JUPYTERLAB_SETTINGS_DIR":   filepath.Join(share, "lab", "user-settings"),
		"JUPYTERLAB_WORKSPACES_DIR": filepath.Join(share, "lab", "workspaces"),
		"IPYTHONDIR":                filepath.Join(l.venv, "share", "ipython"),
	}
	for k, v := range set {
		os.Setenv(k, v)
	}
	bin := filepath.Join(l.venv, "bin")
	if p := os.Getenv("PATH"); !strings.HasPrefix(p, bin+string(os.PathListSeparator)) {
		os.Setenv("PATH", bin+string(os.PathListSeparator)+p)
	}
	for k, v := range map[string]string{
		"PIP_CACHE_DIR": filepath.Join(l.root, ".cache", "pip"),
		// JupyterLab runs `npm prefix --global` when npm is installed, and
		// npm writes its debug log under its cache, ~/.npm by default.
		"npm_config_cache":      filepath.Join(l.root, ".cache", "npm"),
		"AWS_ACCESS_KEY_ID":     "local",
		"AWS_SECRET_ACCESS_KEY": "local",
		"AWS_REGION":            "us-east-1",
	} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY", "GOCACHE").Output(); err == nil {
		f := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(f) == 3 {
			cache := "file://" + filepath.ToSlash(filepath.Join(f[0], "cache", "download"))
			if !strings.Contains(","+f[1]+",", ","+cache+",") {
				os.Setenv("GOPROXY", cache+","+f[1])
			}
			// gopls and goimports, which the kernel runs, keep caches in
			// the user's cache directory ($XDG_CACHE_HOME, else ~/.cache):
			// inside the checkout instead, with Go's build cache pinned
			// where it is (its default follows XDG_CACHE_HOME too).
			if os.Getenv("XDG_CACHE_HOME") == "" {
				os.Setenv("GOCACHE", f[2])
				os.Setenv("XDG_CACHE_HOME", filepath.Join(l.root, ".cache", "user-cache"))
			}
		}
	}
}

// say prints one line of the launcher's own.
func (l *launcher) say(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, l.prefix+": "+format+"\n", a...)
	fmt.Fprintf(l.log, "=== "+l.prefix+": "+format+"\n", a...)
}

// step prints a step line with the seconds since the command started.
func (l *launcher) step(format string, a ...any) {
	l.say("[%d s] %s", l.elapsed(), fmt.Sprintf(format, a...))
}

func (l *launcher) elapsed() int { return int(time.Since(l.began).Seconds()) }

// alive runs fn; while it runs, a line every aliveEvery says it still does.
func (l *launcher) alive(label string, fn func() error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t0 := time.Now()
		t := time.NewTicker(aliveEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.step("still %s (%d s so far)", label, int(time.Since(t0).Seconds()))
			}
		}
	}()
	err := fn()
	close(done)
	wg.Wait()
	return err
}

// command is a tool's process: output to the log, in a process group of its
// own (proc_unix.go) that is stopped with it when ctx ends.
func (l *launcher) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = l.log, l.log
	ownGroup(cmd)
	cmd.Cancel = func() error { return stopGroup(cmd.Process, false) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// run runs a tool (output to the log) with a line every aliveEvery; an error
// names the command and the log.
func (l *launcher) run(ctx context.Context, label, dir, name string, args ...string) error {
	cmd := l.command(ctx, dir, name, args...)
	fmt.Fprintf(l.log, "=== %s: $ %s %s\n", l.prefix, name, strings.Join(args, " "))
	if err := l.alive(label, cmd.Run); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("%s %s: %w (its output: %s)", filepath.Base(name), strings.Join(args, " "), err, l.logPath)
	}
	return nil
}

// output runs a quick tool and returns its standard output (stderr to the log).
func (l *launcher) output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := l.command(ctx, dir, name, args...)
	cmd.Stdout = nil
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w (its output: %s)", filepath.Base(name), strings.Join(args, " "), err, l.logPath)
	}
	return string(out), nil
}

// hashFiles is the SHA-256, hex, of the files' contents one after another
// (scripts/setup.sh's `cat FILES | sha256sum`).
func hashFiles(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashString(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// stamps: .venv/.setup/<name> holds what the step was last completed with.
func (l *launcher) stampOK(name, want string) bool {
	b, err := os.ReadFile(filepath.Join(l.venv, ".setup", name))
	return err == nil && string(b) == want
}

func (l *launcher) stampSet(name, value string) error {
	dir := filepath.Join(l.venv, ".setup")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("stamp %s: %w", name, err)
	}
	return writeAtomic(filepath.Join(dir, name), []byte(value), 0o644)
}

// writeAtomic writes data to a temporary file beside dst and renames it, so
// a reader (or a running kernel) never sees half a file.
func writeAtomic(dst string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}

// copyFile copies src to dst (atomically) unless dst already holds the same
// bytes; it reports whether it wrote.
func copyFile(src, dst string, mode os.FileMode) (bool, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", src, err)
	}
	if old, err := os.ReadFile(dst); err == nil && string(old) == string(b) {
		return false, nil
	}
	return true, writeAtomic(dst, b, mode)
}

// errStopped is the cause of a launcher's context when a signal stopped it.
var errStopped = errors.New("stopped")
