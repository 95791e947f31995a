// Command queuekit runs the nightly job queue workshop from a terminal: the
// reference tutorial, simulations, the analytic M/M/c model, and the DynamoDB
// job catalog (seed, access, reset).
//
// Usage:
//
//	queuekit <command> [flags]
//
// Run "queuekit help" for the list of commands. Bad flags or input print one
// line on stderr and exit with status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/nightqueue/workshop/queuekit"
)

// command is one subcommand. run parses args itself with a flag.FlagSet made
// by newFlags, so every command reports bad flags the same way.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

// commands is filled by each command's file in init.
var commands = map[string]command{}

// usageError is a problem with the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("queuekit "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args and turns flag errors and stray arguments into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return errHelpShown
		}
		return usagef("%v (see %s -h)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (see %s -h)", fs.Arg(0), fs.Name())
	}
	return nil
}

// checkDate checks a --batch-date value; "" is allowed (not given).
func checkDate(d string) error {
	if d == "" {
		return nil
	}
	if _, err := queuekit.ParseBatchDate(d); err != nil {
		return usagef("--batch-date: %v", err)
	}
	return nil
}

// checkWindow checks a --window value; "" is allowed (the whole night).
func checkWindow(w string) error {
	if w == "" {
		return nil
	}
	if _, err := queuekit.ParseClock(w); err != nil {
		return usagef("--window: %v", err)
	}
	return nil
}

// checkFinite checks that a float flag is a finite number >= 0.
func checkFinite(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return usagef("--%s %v: must be a finite number >= 0", name, v)
	}
	return nil
}

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

var errHelpShown = errors.New("help shown")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "queuekit: unknown command %q; run \"queuekit help\" for the list\n", args[0])
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout)
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	default:
		// One line: joined errors are folded so a script can grep them.
		fmt.Fprintf(stderr, "queuekit %s: %s\n", args[0], strings.ReplaceAll(err.Error(), "\n", "; "))
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "queuekit: plan a nightly database job queue (see README.md)")
	fmt.Fprintln(w, "\nUsage: queuekit <command> [flags]; queuekit <command> -h for its flags\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
