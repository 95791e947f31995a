package main

import (
	"strings"
	"testing"
)

// A stream as go test -json writes it (Go 1.26): one package passing with
// a chatty test, one failing in a subtest, one that does not build, one
// without tests, and a line that is not an event.
const stream = `{"Action":"start","Package":"m/ok"}
{"Action":"run","Package":"m/ok","Test":"TestQuiet"}
{"Action":"output","Package":"m/ok","Test":"TestQuiet","Output":"=== RUN   TestQuiet\n"}
{"Action":"output","Package":"m/ok","Test":"TestQuiet","Output":"    ok_test.go:9: chatter of a passing test\n"}
{"Action":"output","Package":"m/ok","Test":"TestQuiet","Output":"--- PASS: TestQuiet (0.00s)\n"}
{"Action":"pass","Package":"m/ok","Test":"TestQuiet","Elapsed":1.5}
{"Action":"output","Package":"m/ok","Output":"PASS\n"}
{"Action":"output","Package":"m/ok","Output":"ok  \tm/ok\t0.01s\n"}
{"Action":"pass","Package":"m/ok","Elapsed":0.01}
{"Action":"start","Package":"m/bad"}
{"Action":"run","Package":"m/bad","Test":"TestParent"}
{"Action":"output","Package":"m/bad","Test":"TestParent","Output":"=== RUN   TestParent\n"}
{"Action":"output","Package":"m/bad","Test":"TestParent","Output":"    bad_test.go:5: parent says\n"}
{"Action":"run","Package":"m/bad","Test":"TestParent/sub"}
{"Action":"output","Package":"m/bad","Test":"TestParent/sub","Output":"    bad_test.go:6: sub broke\n"}
{"Action":"output","Package":"m/bad","Test":"TestParent/sub","Output":"--- FAIL: TestParent/sub (0.00s)\n"}
{"Action":"fail","Package":"m/bad","Test":"TestParent/sub","Elapsed":0}
{"Action":"output","Package":"m/bad","Test":"TestParent","Output":"--- FAIL: TestParent (0.00s)\n"}
{"Action":"fail","Package":"m/bad","Test":"TestParent","Elapsed":0}
{"Action":"output","Package":"m/bad","Output":"FAIL\n"}
{"Action":"output","Package":"m/bad","Output":"FAIL\tm/bad\t0.02s\n"}
{"Action":"fail","Package":"m/bad","Elapsed":0.02}
{"ImportPath":"m/broken [m/broken.test]","Action":"build-output","Output":"# m/broken [m/broken.test]\n"}
{"ImportPath":"m/broken [m/broken.test]","Action":"build-output","Output":"./x.go:2:23: cannot use \"s\" as int value\n"}
{"ImportPath":"m/broken [m/broken.test]","Action":"build-fail"}
{"Action":"start","Package":"m/broken"}
{"Action":"output","Package":"m/broken","Output":"FAIL\tm/broken [build failed]\n"}
{"Action":"fail","Package":"m/broken","Elapsed":0,"FailedBuild":"m/broken [m/broken.test]"}
{"Action":"start","Package":"m/none"}
{"Action":"output","Package":"m/none","Output":"?   \tm/none\t[no test files]\n"}
{"Action":"skip","Package":"m/none","Elapsed":0}
go: downloading example.com/x v1.0.0
`

func TestFilterPrintsPlainOutputAndCountsEvents(t *testing.T) {
	var out strings.Builder
	c, err := Filter(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Passed != 1 || c.Failed != 2 || c.TestsPassed != 1 || c.TestsFailed != 2 || c.TestsSkipped != 0 {
		t.Errorf("counts %+v; want 1 package passed, 2 failed (a test, a build), 1 test passed, 2 failed (TestParent and its subtest)", c)
	}
	// Top-level tests and packages, in the order they ended; the subtest
	// and the package without tests (skipped) have no line.
	var times strings.Builder
	if err := c.WriteTimes(&times); err != nil {
		t.Fatal(err)
	}
	wantTimes := "1.50\tm/ok TestQuiet\n0.01\tm/ok (package)\n0.00\tm/bad TestParent\n0.02\tm/bad (package)\n0.00\tm/broken (package)\n"
	if times.String() != wantTimes {
		t.Errorf("times:\n%s\nwant:\n%s", times.String(), wantTimes)
	}
	want := "ok  \tm/ok\t0.01s\n" +
		"    bad_test.go:5: parent says\n    bad_test.go:6: sub broke\n--- FAIL: TestParent/sub (0.00s)\n--- FAIL: TestParent (0.00s)\n" +
		"FAIL\nFAIL\tm/bad\t0.02s\n" +
		"# m/broken [m/broken.test]\n./x.go:2:23: cannot use \"s\" as int value\nFAIL\tm/broken [build failed]\n" +
		"?   \tm/none\t[no test files]\n" +
		"go: downloading example.com/x v1.0.0\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if s := c.Summary(); s != "testjson: 1 Go packages passed, 2 failed; 1 tests passed, 2 failed, 0 skipped" {
		t.Errorf("summary %q", s)
	}
	if s := (Counts{Passed: 3, TestsPassed: 40, TestsSkipped: 1}).Summary(); s != "testjson: 3 Go packages passed, 0 failed; 40 tests passed, 0 failed, 1 skipped" {
		t.Errorf("summary %q", s)
	}
}

// A test cut short (a panic kills the binary: no fail event of its own)
// has its output printed when its package fails.
func TestFilterPrintsATestCutShort(t *testing.T) {
	in := `{"Action":"output","Package":"m/p","Test":"TestPanics","Output":"=== RUN   TestPanics\n"}
{"Action":"output","Package":"m/p","Test":"TestPanics","Output":"panic: boom\n"}
{"Action":"output","Package":"m/p","Output":"FAIL\tm/p\t0.01s\n"}
{"Action":"fail","Package":"m/p","Elapsed":0.01}
`
	var out strings.Builder
	c, err := Filter(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Failed != 1 || out.String() != "FAIL\tm/p\t0.01s\npanic: boom\n" {
		t.Errorf("counts %+v, printed %q", c, out.String())
	}
}
