//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// dieWithLauncher makes the kernel send TERM to cmd when the launcher dies
// without its cleanup (SIGKILL, a crash), so JupyterLab does not outlive it.
// Linux only (prctl PR_SET_PDEATHSIG); elsewhere the cleanup is the only stop.
func dieWithLauncher(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
