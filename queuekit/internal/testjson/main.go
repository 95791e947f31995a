// Command testjson reads the event stream of `go test -json` on its
// standard input and prints what `go test` prints without -json: a line
// per package ("ok", "FAIL", "?"), the output of each failed test (not the
// chatter of the ones that passed), build errors; then one summary line
// counted from the events, not from the text:
//
//	testjson: 38 Go packages passed, 0 failed
//	testjson: 37 Go packages passed, 1 failed; 2 tests failed
//
// It exits 1 when a package or a test failed (a failed build is a failed
// package), else 0; make test-go runs it in a pipeline under pipefail, so
// go test's own exit status counts too. scripts/test-stages.sh sums the
// summary lines of a stage. A line that is not an event (a go command's
// message) is printed as it came.
//
// Usage: go test -json ./... | go run ./queuekit/internal/testjson
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, plus
// the build events of Go 1.24+).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // a package's fail caused by a failed build
}

// Counts is what a stream held.
type Counts struct {
	Passed, Failed, TestsFailed int // packages passed and failed, tests (and subtests) failed
}

// Summary is the line testjson ends with.
func (c Counts) Summary() string {
	s := fmt.Sprintf("testjson: %d Go packages passed, %d failed", c.Passed, c.Failed)
	if c.TestsFailed > 0 {
		s += fmt.Sprintf("; %d tests failed", c.TestsFailed)
	}
	return s
}

// Filter reads events from r and writes go test's plain output to w; it
// returns the counts. A test's output is held until its top-level test
// ends, then printed, in the order it came, for the tests of that family
// that failed (a failed subtest fails its parents).
func Filter(r io.Reader, w io.Writer) (Counts, error) {
	var c Counts
	type key struct{ pkg, test string }
	type line struct{ test, text string }
	held := map[key][]line{} // by top-level test
	failed := map[key]bool{} // tests (any level) that failed
	flush := func(root key, print bool) {
		for _, l := range held[root] {
			if print && failed[key{root.pkg, l.test}] && !chatter(l.text) {
				fmt.Fprint(w, l.text)
			}
		}
		delete(held, root)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		var e event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", raw)
			continue
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test != "":
			root := key{e.Package, strings.SplitN(e.Test, "/", 2)[0]}
			switch e.Action {
			case "output":
				held[root] = append(held[root], line{e.Test, e.Output})
			case "fail":
				c.TestsFailed++
				failed[key{e.Package, e.Test}] = true
				if e.Test == root.test {
					flush(root, true)
				}
			case "pass", "skip":
				if e.Test == root.test {
					flush(root, false)
				}
			}
		case e.Action == "output":
			if e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "pass":
			c.Passed++
		case e.Action == "fail":
			c.Failed++
			for root := range held { // tests cut short (a panic, a timeout): their output explains the failure
				if root.pkg == e.Package {
					for _, l := range held[root] {
						failed[key{root.pkg, l.test}] = true
					}
					flush(root, true)
				}
			}
		}
	}
	return c, sc.Err()
}

// chatter reports the lines -json adds that plain go test does not print
// for a failed test.
func chatter(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func main() {
	c, err := Filter(os.Stdin, os.Stdout)
	fmt.Println(c.Summary())
	if err != nil {
		fmt.Fprintf(os.Stderr, "testjson: reading go test -json: %v\n", err)
		os.Exit(1)
	}
	if c.Failed > 0 || c.TestsFailed > 0 {
		os.Exit(1)
	}
}
