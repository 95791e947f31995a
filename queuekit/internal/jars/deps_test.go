package jars

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

// Installing the servers needs the standard library and fetch only: no AWS
// code, no other queuekit package, nothing outside the module but the
// standard library, so the launcher can install before anything else is
// built or reachable.
func TestJarsDependsOnFetchAndTheStandardLibraryOnly(t *testing.T) {
	for _, d := range deptest.Deps(t, "github.com/nightqueue/workshop/queuekit/internal/fetch") {
		switch {
		case d == "github.com/nightqueue/workshop/queuekit/internal/jars",
			d == "github.com/nightqueue/workshop/queuekit/internal/fetch",
			d == "github.com/nightqueue/workshop/queuekit/internal/wait":
		case strings.Contains(strings.SplitN(d, "/", 2)[0], "."):
			t.Errorf("jars depends on %s", d)
		}
	}
}
