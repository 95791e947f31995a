package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
	"github.com/nightqueue/workshop/queuekit/internal/jars"
)

// runPrefetch is `queuekit prefetch` (make prefetch): fill every cache the
// workshop needs, so that a laptop or a room with no network starts the
// workshop and runs its notebooks. Run it online, at home; then make
// workshop needs no network (make test-offline checks it with the network
// cut). Steps, one line each with what is there and how big:
//
//  1. queuekit setup in full (venv, gonb, goimports, gopls, kernelspec, the
//     echarts tarball in .cache/echarts, the Go build cache warm)
//  2. DynamoDB Local's and ElasticMQ's jars into .cache/ (queuekit servers install)
//  3. `go mod download all` for the workshop module and tools/go.mod, on
//     copies of go.mod and go.sum (the checkout's stay unchanged): every
//     module of both graphs with their checksum database answers
//  4. the Python wheels of requirements.txt into .cache/wheels, marked
//     complete for this requirements.txt and interpreter, so setup installs
//     a new venv from there with --no-index
//  5. the Go build cache: the queuekit command too
//
// Quick when done. Writes nothing in $HOME but Go's caches.
func runPrefetch(ctx context.Context, args []string, _, stderr io.Writer) error {
	if helpAsked(args) {
		fmt.Fprintln(os.Stdout, "Usage: queuekit prefetch   (make prefetch)\nOnline, before a room with no network: setup in full, both servers' jars, every Go module of\nthe workshop and tools/go.mod, the Python wheels, the Go build cache. Then make workshop runs offline.")
		return errHelpShown
	}
	if err := parse(newFlags("prefetch"), args); err != nil {
		return err
	}
	l, err := newInstaller(ctx, "prefetch", stderr)
	if err != nil {
		return err
	}
	defer l.close()
	if err := l.setup(ctx, setupOptions{numbered: "1/5 "}); err != nil {
		return err
	}
	l.step("1/5 setup: .venv %s, tools built in .cache/tools %s, echarts tarball %s",
		size(l.venv), size(filepath.Join(l.root, ".cache", "tools")), size(filepath.Join(l.root, ".cache", "echarts")))

	var dirs []string
	for _, s := range []struct {
		srv       jars.Server
		env, name string
	}{{jars.DynamoDBLocal, "DYNAMODB_LOCAL_DIR", "dynamodb-local"}, {jars.ElasticMQ, "ELASTICMQ_DIR", "elasticmq"}} {
		dir, err := installDir("", s.env, s.name, s.srv.Name)
		if err != nil {
			return err
		}
		if err := l.alive("downloading "+s.srv.Label, func() error {
			_, err := jars.Install(ctx, s.srv, dir, fetch.Options{Log: l.log})
			return err
		}); err != nil {
			return err
		}
		dirs = append(dirs, s.srv.Label+" "+size(dir))
	}
	l.step("2/5 servers: %s in .cache/", strings.Join(dirs, ", "))

	zips := map[string]bool{}
	for _, mod := range []string{l.root, filepath.Join(l.root, "tools")} {
		if err := l.downloadModules(ctx, mod, zips); err != nil {
			return err
		}
	}
	var zipList []string
	for z := range zips {
		zipList = append(zipList, z)
	}
	sort.Strings(zipList)
	modcache, err := l.output(ctx, l.root, "go", "env", "GOMODCACHE")
	if err != nil {
		return err
	}
	modcache = strings.TrimSpace(modcache)
	l.step("3/5 Go modules: %d modules (workshop and tools/go.mod, test dependencies included), %s of zips in %s, checksum database answers %s",
		len(zipList), size(zipList...), modcache, size(filepath.Join(modcache, "cache", "download", "sumdb")))

	wheels := filepath.Join(l.root, ".cache", "wheels")
	reqHash, err := hashFiles(filepath.Join(l.root, "requirements.txt"))
	if err != nil {
		return err
	}
	if ok, err := l.wheelsComplete(ctx, reqHash); err != nil {
		return err
	} else if !ok {
		os.Remove(filepath.Join(wheels, ".complete"))
		if err := l.run(ctx, "downloading the Python wheels", l.root, filepath.Join(l.venv, "bin", "python"),
			"-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-input",
			"--only-binary=:all:", "-r", filepath.Join(l.root, "requirements.txt"), "-d", wheels); err != nil {
			return err
		}
		tag, err := l.wheelsTag(ctx, reqHash)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(wheels, ".complete"), []byte(tag), 0o644); err != nil {
			return err
		}
	}
	whl, _ := filepath.Glob(filepath.Join(wheels, "*.whl"))
	l.step("4/5 Python wheels: %d wheels, %s in .cache/wheels (setup installs from there with --no-index)", len(whl), size(wheels))

	if err := l.run(ctx, "building the queuekit command", l.root, "go", "build", "-o", os.DevNull, "./queuekit/cmd/queuekit"); err != nil {
		return err
	}
	gocache, err := l.output(ctx, l.root, "go", "env", "GOCACHE")
	if err != nil {
		return err
	}
	gocache = strings.TrimSpace(gocache)
	l.step("5/5 Go build cache: the notebooks' packages (setup step 6) and the queuekit command, %s %s", gocache, size(gocache))
	l.step("done: everything the workshop needs is cached; make workshop runs with no network (check: sudo make test-offline)")
	return nil
}

// downloadModules runs `go mod download -json all` for the module in dir,
// on a copy of its go.mod and go.sum, and adds the zips' paths to zips.
func (l *launcher) downloadModules(ctx context.Context, dir string, zips map[string]bool) error {
	tmp, err := os.MkdirTemp("", "queuekit-prefetch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := copyFile(filepath.Join(dir, f), filepath.Join(tmp, f), 0o644); err != nil {
			return err
		}
	}
	var out string
	err = l.alive("downloading the modules of "+dir, func() error {
		var err error
		out, err = l.output(ctx, tmp, "go", "mod", "download", "-json", "all")
		return err
	})
	if err != nil {
		return fmt.Errorf("go mod download all in %s: %w", dir, err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var m struct{ Zip, Error string }
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("go mod download -json: %w", err)
		}
		if m.Error != "" {
			return fmt.Errorf("go mod download all in %s: %s", dir, m.Error)
		}
		if m.Zip != "" {
			zips[m.Zip] = true
		}
	}
	return nil
}

// size is the disk use of the paths that exist, e.g. "312 MB".
func size(paths ...string) string {
	var n int64
	for _, p := range paths {
		filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if info, err := d.Info(); err == nil {
					n += info.Size()
				}
			}
			return nil
		})
	}
	if n >= 10<<30 {
		return fmt.Sprintf("%d GB", n>>30)
	}
	return fmt.Sprintf("%d MB", n>>20)
}
