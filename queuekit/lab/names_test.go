package lab_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every lab function a message names exists: a string in the lab packages'
// code (an error, a hint) that says "start one with limitslab.StartLimits"
// sends a participant to a function; the test reads every lab package's
// source (go/parser), collects its exported top-level functions, and fails
// on a string naming <labpkg>.<Func> that its package does not declare
// (three errors named lab.StartLimits, which had moved to limitslab).
func TestMessagesNameFunctionsThatExist(t *testing.T) {
	dirs, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]map[string]bool{} // package name -> exported funcs and types
	var files []*ast.File
	fset := token.NewFileSet()
	for _, d := range append([]string{"."}, dirs...) {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		names, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			pkg := f.Name.Name
			if declared[pkg] == nil {
				declared[pkg] = map[string]bool{}
			}
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() {
						declared[pkg][d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, sp := range d.Specs {
						if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.IsExported() {
							declared[pkg][ts.Name.Name] = true
						}
					}
				}
			}
		}
	}
	if len(declared) < 5 {
		t.Fatalf("read %d lab packages; want the lab package and its sub-packages", len(declared))
	}
	named := regexp.MustCompile(`\b([a-z]+lab|lab)\.([A-Z][A-Za-z0-9]*)\b`)
	checked := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range named.FindAllStringSubmatch(s, -1) {
				checked++
				if funcs, ok := declared[m[1]]; !ok || !funcs[m[2]] {
					t.Errorf("%s: %q names %s.%s, which package %s does not declare", fset.Position(lit.Pos()), s, m[1], m[2], m[1])
				}
			}
			return true
		})
	}
	t.Logf("%d names in %d files' strings checked against %d packages", checked, len(files), len(declared))
}
