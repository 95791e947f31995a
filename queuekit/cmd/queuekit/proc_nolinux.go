//go:build !linux

package main

import "os/exec"

// dieWithLauncher: only Linux has a parent-death signal; elsewhere the
// launcher's cleanup is the only stop.
func dieWithLauncher(*exec.Cmd) {}
