package toxitest

import "syscall"

// diesWithParent makes the child killed when the process that started it
// exits (Linux's parent-death signal).
func diesWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
