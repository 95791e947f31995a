//go:build !unix

package servers

import (
	"errors"
	"os"
	"os/exec"
)

// The workshop runs on Linux and macOS, and on Windows through WSL2 (a
// Linux): a native Windows build has no supervisor.
var errNoUnix = errors.New("the servers' supervisor needs Linux or macOS (on Windows, run the workshop in WSL2)")

func lockFile(*os.File) error        { return errNoUnix }
func tryLock(*os.File) (bool, error) { return false, errNoUnix }
func newGroup(*exec.Cmd)             {}
func signalPid(int, bool)            {}
func signalGroup(int, bool)          {}
func groupAlive(int) bool            { return false }

var termSignals = []os.Signal{os.Interrupt}

var ignoredSignals []os.Signal
