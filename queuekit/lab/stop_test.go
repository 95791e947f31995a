package lab

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestStopExitsOnlyOnError(t *testing.T) {
	var code []int
	exit = func(c int) { code = append(code, c) }
	defer func() { exit = osExit }()
	Stop(nil)
	if len(code) != 0 {
		t.Fatalf("Stop(nil) exited with %v", code)
	}
	Stop(errors.New("boom"))
	if len(code) != 1 || code[0] != 1 {
		t.Fatalf("Stop(err) exit codes %v, want [1]", code)
	}
}

// Stop runs the registered cleanups, last first, before it exits; a cleanup
// the cell's defer already ran does not run again.
func TestStopRunsCleanupsBeforeExit(t *testing.T) {
	var code []int
	exit = func(c int) { code = append(code, c) }
	defer func() { exit = osExit }()
	var ran []string
	first := Cleanup(func() { ran = append(ran, "table") })
	Cleanup(func() { ran = append(ran, "queue") })
	done := Cleanup(func() { ran = append(ran, "limits") })
	done() // the cell's defer, early
	out := captureStdout(t, func() { Stop(errors.New("boom")) })
	if got, want := strings.Join(ran, " "), "limits queue table"; got != want {
		t.Errorf("ran %q, want %q (limits by its defer, then the rest last first)", got, want)
	}
	if len(code) != 1 || code[0] != 1 || out != "✗ boom\n" {
		t.Errorf("exit codes %v, printed %q; want [1] and the error's line", code, out)
	}
	first()
	if len(ran) != 3 {
		t.Errorf("a cleanup ran twice: %v", ran)
	}
	Stop(errors.New("again"))
	if len(ran) != 3 {
		t.Errorf("Stop ran cleanups it had run already: %v", ran)
	}
}

// Must passes the value through on a nil error and stops on an error.
func TestMustStopsOnError(t *testing.T) {
	var code []int
	exit = func(c int) { code = append(code, c) }
	defer func() { exit = osExit }()
	if got := Must(42, nil); got != 42 || len(code) != 0 {
		t.Fatalf("Must(42, nil) = %d, exits %v", got, code)
	}
	out := captureStdout(t, func() { Must(0, errors.New("no table")) })
	if len(code) != 1 || out != "✗ no table\n" {
		t.Errorf("exit codes %v, printed %q", code, out)
	}
}

// captureStdout returns what f prints to os.Stdout.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = old }()
	f()
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
