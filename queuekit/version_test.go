package queuekit

import (
	"bufio"
	"os"
	"regexp"
	"testing"
)

// The CHANGELOG's first released entry ("## [X.Y.Z] - date", after an
// optional "## [Unreleased]") is the version the code reports.
func TestVersionIsTheChangelogsTopEntry(t *testing.T) {
	f, err := os.Open("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile(`^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := entry.FindStringSubmatch(sc.Text()); m != nil {
			if m[1] != Version {
				t.Fatalf("CHANGELOG.md's top version is %s, queuekit.Version is %s: add a CHANGELOG entry for %s or set Version to %s", m[1], Version, Version, m[1])
			}
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal(`CHANGELOG.md has no version entry of the form "## [X.Y.Z] - YYYY-MM-DD"`)
}
