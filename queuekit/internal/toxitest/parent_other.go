//go:build !linux

package toxitest

import "syscall"

// diesWithParent has no parent-death signal outside Linux: the server is
// stopped by Stop, or by whoever reaps the test's process group.
func diesWithParent() *syscall.SysProcAttr { return nil }
