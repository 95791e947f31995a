//go:build unix

package servers

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLock takes an exclusive flock on f without waiting; false when another
// open file holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// newGroup makes cmd start in a process group of its own, so that Ctrl-C
// at the terminal does not reach it and its whole group can be signalled.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalPid sends TERM (kill false) or KILL to pid.
func signalPid(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(pid, sig)
}

// signalGroup sends TERM or KILL to the process group pgid.
func signalGroup(pgid int, kill bool) {
	if pgid > 1 {
		signalPid(-pgid, kill)
	}
}

// groupAlive reports whether any process of group pgid exists.
func groupAlive(pgid int) bool { return pgid > 1 && exists(-pgid) }

// exists sends signal 0 to pid (negative: a process group).
func exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// termSignals are the signals a supervisor stops on.
var termSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT}

// ignoredSignals are the signals a supervisor ignores (the terminal closing).
var ignoredSignals = []os.Signal{syscall.SIGHUP, syscall.SIGPIPE}
