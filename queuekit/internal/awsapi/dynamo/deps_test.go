package dynamo

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/deptest"
)

const module = "github.com/nightqueue/workshop/queuekit"

// The AWS layer holds no job code: it imports only the rest of the layer
// (awsapi) and the module's internal helpers, never the catalog or the
// domain package built on it.
func TestDynamoImportsNoJobCode(t *testing.T) {
	for _, d := range deptest.Deps(t, module+"/internal/awsapi") {
		rest, ok := strings.CutPrefix(d, module)
		if ok && !strings.HasPrefix(rest, "/internal/") {
			t.Errorf("dynamo depends on %s, a package built on it", d)
		}
	}
}

// The packages with a table of their own hold a handle of this layer (a
// *Table opened from the catalog's, with Open and RidingOut), not a
// catalog on another table: each imports dynamo itself (the catalog has
// no Sibling, RidingOut or Call left to lean on).
func TestTableOwnersImportTheHandle(t *testing.T) {
	owners := []string{"lease", "fleet", "fleet/fleetrun", "timers", "results", "fanout"}
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}
	for _, p := range owners {
		args = append(args, module+"/"+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(owners) {
		t.Fatalf("go list gave %d packages, want %d: %q", len(lines), len(owners), out)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if !slices.Contains(f[1:], module+"/internal/awsapi/dynamo") {
			t.Errorf("%s does not import internal/awsapi/dynamo: it reaches its table some other way", f[0])
		}
	}
}
