package lab

import (
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/nightqueue/workshop/queuekit/format"
)

// exit ends the cell; a variable so tests can watch it.
var exit = os.Exit

// osExit is the real exit, for tests that replace exit.
var osExit = os.Exit

// cleanups are what Cleanup registered, run by Stop before it exits.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

// Stop ends the cell when err is not nil, printing "✗ " and the error's one
// line (the catalog's errors already say what to run), instead of a panic's
// stack trace. Before it exits it runs what Cleanup registered, last first
// (os.Exit skips a cell's defers). With a nil error it does nothing, so a
// cell reads
//
//	night, _, err := nightlab.Night(ctx, "2026-05-13")
//	lab.Stop(err)
func Stop(err error) {
	if err == nil {
		return
	}
	fmt.Println("✗", err)
	runCleanups()
	exit(1)
}

// Must is v when err is nil; otherwise it stops the cell with Stop, so a
// cell reads p := lab.Must(night.Params(2)) instead of two lines.
func Must[T any](v T, err error) T {
	Stop(err)
	return v
}

// Cleanup registers f (dropping a table, deleting a queue, stopping the
// limits layer) to run if Stop ends the cell, and returns a func that runs
// f at most once, for the cell's defer when it ends normally:
//
//	defer lab.Cleanup(drop)()
func Cleanup(f func()) (run func()) {
	var once sync.Once
	run = func() { once.Do(f) }
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, run)
	return run
}

// runCleanups runs the registered cleanups, last registered first, and
// forgets them.
func runCleanups() {
	cleanupMu.Lock()
	todo := cleanups
	cleanups = nil
	cleanupMu.Unlock()
	for i := len(todo) - 1; i >= 0; i-- {
		todo[i]()
	}
}

// Plural is "1 worker", "4 workers", with the number's thousands separated.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return format.Int(n) + " " + many
}

// Times is how often something happened, as prose writes it: "once",
// "twice", "3 times" (thousands separated).
func Times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return format.Int(n) + " times"
}

// Over is "n x" a limit, one decimal ("0.2x" under it, "0x" for none,
// "under 0.1x" for a little), for a table cell or a sentence.
func Over(units, limit float64) string {
	switch r := math.Round(10*units/limit) / 10; {
	case units <= 0:
		return "0x"
	case r == 0:
		return "under 0.1x"
	default:
		return format.Num(r) + "x"
	}
}
