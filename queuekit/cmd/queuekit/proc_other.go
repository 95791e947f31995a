//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// On Windows the workshop runs in WSL2 (a Linux): these are enough for the
// command to build and for the launcher's steps that start no long-lived
// process group; docs/running.md says so.

func ownGroup(*exec.Cmd) {}

func stopGroup(p *os.Process, _ bool) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

var stopSignals = []os.Signal{os.Interrupt}

var ignoredSignals []os.Signal

func signalStatus(os.Signal) (int, string) { return 130, "Ctrl-C" }

func isRootUser() bool { return false }

var termSignal = os.Kill
