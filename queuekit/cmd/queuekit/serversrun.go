package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/nightqueue/workshop/queuekit/internal/servers"
)

const serversUsage = `Usage:
  queuekit servers install [--dynamodb] [--elasticmq]     download the pinned jars (servers.lock)
  queuekit servers start [--force] [SERVER...]             start or join them for you, in the background
  queuekit servers stop [--force] [SERVER...]              leave them; each stops after its last user
  queuekit servers status [SERVER...]                      say whether each runs (exit 1: one does not)
  queuekit servers with [--servers LIST] [--use-preset] -- COMMAND [ARG...]
                                                           run COMMAND with them, then leave them
  queuekit servers run dynamodb                            DynamoDB Local in the foreground, unsupervised
SERVER: dynamodb (DYNAMODB_PORT, default 8000), sqs (SQS_PORT, 9324: ElasticMQ starts at the
first connection and stops after SQS_IDLE_STOP idle with no queue), limits (LIMITS_PORT, 8400).
Default: dynamodb sqs, and limits when LIMITS_PORT is set. All on 127.0.0.1 only; logs in
.cache/<server>/run/. Shared: a server stops when its last user (a with, a start) is done.`

// runServersSupervised is `queuekit servers start|stop|status|with|supervise`.
func runServersSupervised(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := args[0]
	if sub == "supervise" {
		if !servers.IsSupervisor() {
			return usagef("queuekit servers supervise is started by queuekit servers itself")
		}
		os.Exit(servers.Supervise())
	}
	if sub == "run" {
		return runServerForeground(ctx, args[1:], stderr)
	}
	fs := newFlags("servers " + sub)
	force := fs.Bool("force", false, "stop: stop now, even with other users (start: ignored)")
	list := fs.String("servers", "", "with: the servers, comma-separated (default: $SERVERS, else dynamodb,sqs, and limits when LIMITS_PORT is set)")
	preset := fs.Bool("use-preset", false, "with: use AWS_ENDPOINT_URL_DYNAMODB / _SQS when set (checked first) instead of starting a server")
	rest := args[1:]
	var command []string
	if sub == "with" {
		for i, a := range rest {
			if a == "--" {
				rest, command = rest[:i], rest[i+1:]
				break
			}
		}
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, serversUsage)
			return errHelpShown
		}
		return usagef("%w (see queuekit servers -h)", err)
	}
	root, err := checkout()
	if err != nil {
		return fmt.Errorf("queuekit servers runs in the workshop's checkout: %w", err)
	}
	names := fs.Args()
	if sub == "with" {
		if len(command) == 0 {
			command, names = fs.Args(), nil
		}
		if len(command) == 0 {
			return usagef("no command: want queuekit servers with [--servers dynamodb,sqs] -- COMMAND [ARG...]")
		}
		names = nil
		if *list == "" {
			*list = os.Getenv("SERVERS")
		}
	} else if len(names) > 0 {
		*list = strings.Join(names, ",")
	}
	if *list == "" {
		*list = "dynamodb,sqs"
	}
	// As with-servers.sh did: LIMITS_PORT adds the limits layer, in front of
	// DynamoDB Local, whatever the list.
	if os.Getenv("LIMITS_PORT") != "" && (sub == "with" || sub == "status") && !strings.Contains(*list, "limits") {
		*list += ",limits"
	}
	names, err = servers.ParseNames(*list)
	if err != nil {
		return usagef("%w", err)
	}
	switch sub {
	case "start":
		lease, err := servers.Acquire(ctx, root, names, servers.Manual(), servers.WithLog(stderr))
		if err != nil {
			return err
		}
		for _, kv := range lease.Env() {
			fmt.Fprintf(stdout, "export %s\n", kv)
		}
		return nil
	case "stop":
		return servers.Stop(ctx, root, names, *force, servers.WithLog(stderr))
	case "status":
		states, err := servers.Status(ctx, root, names)
		if err != nil {
			return err
		}
		down := 0
		for _, st := range states {
			fmt.Fprintf(stdout, "%s: %s\n", st.Name, st.Detail)
			if !st.Running {
				down++
			}
		}
		if down > 0 {
			return errNotRunning
		}
		return nil
	}
	return runWith(ctx, root, names, *preset, command, stderr)
}

// errNotRunning is status's exit 1 with nothing more to say.
var errNotRunning = errors.New("not every server runs")

// runWith runs command with the servers up and their endpoints exported,
// then leaves them, and exits with the command's status (128+signal when a
// signal ended it or stopped this program).
func runWith(ctx context.Context, root string, names []string, preset bool, command []string, stderr io.Writer) error {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	opts := []servers.Option{servers.WithLog(stderr)}
	if preset {
		opts = append(opts, servers.UsePreset())
	}
	actx, cancel := context.WithCancel(ctx)
	var first os.Signal
	go func() {
		select {
		case first = <-sigs:
			cancel()
		case <-actx.Done():
		}
	}()
	lease, err := servers.Acquire(actx, root, names, opts...)
	cancel()
	if err != nil {
		if first != nil {
			os.Exit(128 + sigNum(first))
		}
		return err
	}
	code := 0
	if first == nil {
		code = runChild(command, lease.Env(), sigs, stderr)
	} else {
		code = 128 + sigNum(first)
	}
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if err := lease.Release(context.Background()); err != nil {
		fmt.Fprintf(stderr, "queuekit servers with: %v\n", err)
	}
	os.Exit(code)
	return nil
}

// runChild runs command in this process group (Ctrl-C reaches it from the
// terminal), forwards signals sent to this process alone, and returns its
// exit status.
func runChild(command, env []string, sigs chan os.Signal, stderr io.Writer) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "queuekit servers with: %v\n", err)
		return 127
	}
	done := make(chan struct{})
	var got os.Signal
	go func() {
		for {
			select {
			case sig := <-sigs:
				if got == nil {
					got = sig
				}
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case err == nil:
		if got != nil {
			return 128 + sigNum(got)
		}
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "queuekit servers with: %v\n", err)
	return 1
}

func sigNum(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 1
}

// runServerForeground is `queuekit servers run dynamodb`: the server's JVM
// in the foreground on DYNAMODB_PORT, as its supervisor runs it (installed
// first when needed); its exit status is the server's.
func runServerForeground(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) != 1 || args[0] != servers.DynamoDB {
		return usagef("want queuekit servers run dynamodb")
	}
	root, err := checkout()
	if err != nil {
		return fmt.Errorf("queuekit servers runs in the workshop's checkout: %w", err)
	}
	port := 8000
	if v := os.Getenv("DYNAMODB_PORT"); v != "" {
		if port, err = strconv.Atoi(v); err != nil {
			return usagef("DYNAMODB_PORT=%q is not a port", v)
		}
	}
	cmd, err := servers.Command(ctx, root, servers.DynamoDB, port, servers.WithLog(stderr))
	if err != nil {
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	return err
}
