//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so stopGroup reaches
// everything it starts (the go command's compilers, JupyterLab's helpers),
// and a Ctrl-C at the terminal reaches only the launcher, which decides.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopGroup sends TERM (or KILL) to p's process group.
func stopGroup(p *os.Process, kill bool) error {
	if p == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// stopSignals are the signals that stop the workshop: Ctrl-C, a service
// manager's TERM, a closed terminal's HUP.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ignoredSignals are ignored while the launcher runs: a closed output pipe
// (make workshop | tee) must not cut the cleanup short.
var ignoredSignals = []os.Signal{syscall.SIGPIPE}

// signalStatus is the exit status after a stop by sig (128+signal) and what
// the stop line says.
func signalStatus(sig os.Signal) (int, string) {
	switch sig {
	case syscall.SIGTERM:
		return 143, "TERM"
	case syscall.SIGHUP:
		return 129, "HUP: the terminal closed"
	default:
		return 130, "Ctrl-C"
	}
}

// isRootUser reports whether this process runs as root (JupyterLab needs
// --allow-root then).
func isRootUser() bool { return os.Geteuid() == 0 }

// termSignal asks a process to shut down cleanly.
var termSignal os.Signal = syscall.SIGTERM
