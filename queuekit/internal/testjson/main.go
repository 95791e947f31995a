// Command testjson reads the event stream of `go test -json` on its
// standard input and prints what `go test` prints without -json: a line
// per package ("ok", "FAIL", "?"), the output of each failed test (not the
// chatter of the ones that passed), build errors; then one summary line
// counted from the events, not from the text:
//
//	testjson: 38 Go packages passed, 0 failed; 912 tests passed, 0 failed, 3 skipped
//	testjson: 37 Go packages passed, 1 failed; 905 tests passed, 2 failed, 3 skipped
//
// Tests are every test, example, fuzz seed and subtest that ran (a
// failed subtest fails its parent: both count).
//
// With STAGE_TIMES set to a file's path (scripts/test-stages.sh sets it for
// each stage), it appends a line "SECONDS<TAB>PACKAGE TEST" for every
// top-level test that ended, its own elapsed time as go test measured it
// (a parallel test's time counts from when it resumed), and one for every
// package, "SECONDS<TAB>PACKAGE (package)"; the stage's budget warning
// names the slowest of them.
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
	"strconv"
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
	Elapsed     float64
}

// Counts is what a stream held.
type Counts struct {
	Passed, Failed int // packages
	// Tests (examples, fuzz seeds and subtests included) that passed,
	// failed and were skipped.
	TestsPassed, TestsFailed, TestsSkipped int
	// Times are the top-level tests' and the packages' elapsed times, in
	// the order they ended.
	Times []Time
}

// Time is one test's or package's elapsed time.
type Time struct {
	Package, Test string // Test is "" for the package as a whole
	Seconds       float64
}

// Summary is the line testjson ends with.
func (c Counts) Summary() string {
	return fmt.Sprintf("testjson: %d Go packages passed, %d failed; %d tests passed, %d failed, %d skipped",
		c.Passed, c.Failed, c.TestsPassed, c.TestsFailed, c.TestsSkipped)
}

// WriteTimes appends c's times to w, a line each: seconds, a tab, the
// package and the test (or "(package)").
func (c Counts) WriteTimes(w io.Writer) error {
	var b strings.Builder
	for _, t := range c.Times {
		name := t.Test
		if name == "" {
			name = "(package)"
		}
		fmt.Fprintf(&b, "%s\t%s %s\n", strconv.FormatFloat(t.Seconds, 'f', 2, 64), t.Package, name)
	}
	_, err := io.WriteString(w, b.String())
	return err
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
					c.Times = append(c.Times, Time{e.Package, e.Test, e.Elapsed})
					flush(root, true)
				}
			case "pass", "skip":
				if e.Action == "pass" {
					c.TestsPassed++
				} else {
					c.TestsSkipped++
				}
				if e.Test == root.test {
					c.Times = append(c.Times, Time{e.Package, e.Test, e.Elapsed})
					flush(root, false)
				}
			}
		case e.Action == "output":
			if e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "pass":
			c.Passed++
			c.Times = append(c.Times, Time{e.Package, "", e.Elapsed})
		case e.Action == "fail":
			c.Failed++
			c.Times = append(c.Times, Time{e.Package, "", e.Elapsed})
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
	if path := os.Getenv("STAGE_TIMES"); path != "" {
		if err := appendTimes(path, c); err != nil {
			fmt.Fprintf(os.Stderr, "testjson: STAGE_TIMES: %v\n", err)
			os.Exit(1)
		}
	}
	if c.Failed > 0 || c.TestsFailed > 0 {
		os.Exit(1)
	}
}

// appendTimes appends c's times to the file at path, creating it if needed.
func appendTimes(path string, c Counts) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := c.WriteTimes(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
