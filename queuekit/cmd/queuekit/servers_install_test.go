package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `servers` without a subcommand, an unknown one or server, `with` without
// a command, or a bad flag, is bad usage (exit 2);
// an install directory that cannot be made is a runtime failure (exit 1),
// one line naming the directory. Neither downloads anything.
func TestServersInstallExitStatus(t *testing.T) {
	for _, args := range [][]string{{"servers"}, {"servers", "begin"}, {"servers", "start", "redis"}, {"servers", "with"}, {"servers", "install", "--bogus"}, {"servers", "install", "extra"}} {
		if _, errOut, code := runCLI(t, args...); code != 2 || !strings.Contains(errOut, "queuekit servers") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a usage line", args, code, errOut)
		}
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "servers", "install", "--elasticmq", "--elasticmq-dir", filepath.Join(file, "elasticmq"))
	if code != 1 || !strings.Contains(errOut, file) || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
		t.Errorf("unwritable dir: exit %d, stderr %q; want 1 and one line naming it", code, errOut)
	}
}

// The install directory comes from the flag, else the variable, else
// .cache/<name> in the checkout this test runs in.
func TestServersInstallDirectory(t *testing.T) {
	t.Setenv("ELASTICMQ_DIR", "")
	got, err := installDir("", "ELASTICMQ_DIR", "elasticmq", "elasticmq")
	if err != nil || !strings.HasSuffix(filepath.ToSlash(got), "/.cache/elasticmq") {
		t.Errorf("default: %q, %v; want <checkout>/.cache/elasticmq", got, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(got)), "go.mod")); err != nil {
		t.Errorf("default %q is not under the checkout: %v", got, err)
	}
	dir := t.TempDir()
	t.Setenv("ELASTICMQ_DIR", dir)
	if got, _ := installDir("", "ELASTICMQ_DIR", "elasticmq", "elasticmq"); got != dir {
		t.Errorf("from the variable: %q, want %q", got, dir)
	}
	if got, _ := installDir(filepath.Join(dir, "x"), "ELASTICMQ_DIR", "elasticmq", "elasticmq"); got != filepath.Join(dir, "x") {
		t.Errorf("from the flag: %q, want %q", got, filepath.Join(dir, "x"))
	}
}
