package queuekit_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// docs/code.md names every package of the module (go list ./...), each as
// `queuekit/...` in its table, so a new package cannot go unlisted.
func TestCodeMapListsEveryPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	doc, err := os.ReadFile("../docs/code.md")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/nightqueue/workshop/"
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list ./... listed %d packages: %q", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		name := strings.TrimPrefix(p, module)
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/code.md does not list %s: add a row to its table", name)
		}
	}
}
