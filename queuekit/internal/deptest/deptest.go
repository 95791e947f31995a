// Package deptest lets a package's tests check which packages it depends
// on, so that a layering rule (chart imports no AWS, queue no DynamoDB) fails
// a test when it is broken.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns every package the package in the current directory depends
// on (go list -deps), failing t if the list cannot be read or does not
// include mustHave, the proof that it is the package's real dependency list.
func Deps(t *testing.T, mustHave string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		if d == mustHave {
			return deps
		}
	}
	t.Fatalf("go list -deps listed %d packages without %s; the check is not looking at the package's dependencies", len(deps), mustHave)
	return nil
}

// Module is the import path of the workshop's Go packages.
const Module = "github.com/nightqueue/workshop/queuekit"

// Forbid fails t for each of the package's dependencies (Deps with
// mustHave) that is one of the forbidden packages or a package under one;
// forbidden names are relative to Module ("capacity", "lease/poolrules").
// It states a layering rule: the package in the current directory imports
// none of them, directly or through another package.
func Forbid(t *testing.T, mustHave string, forbidden ...string) {
	t.Helper()
	for _, d := range Deps(t, mustHave) {
		for _, f := range forbidden {
			if p := Module + "/" + f; d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("depends on %s, which it must not import (the layering rule of docs/code.md)", d)
			}
		}
	}
}
