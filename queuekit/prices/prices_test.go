package prices

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// priceName matches names that would hold a price.
var priceName = regexp.MustCompile(`(?i)price|usd|dollar|percent?million`)

// distinctive are values of Table2026 no other figure of the module has:
// one of them as a literal anywhere else is a copied price.
var distinctive = []float64{Table2026.OnDemandPerMillionWrites, Table2026.ProvisionedWCUHour, Table2026.ProvisionedRCUHour}

// strayPrices returns "file:line: what" for every numeric literal in src
// that is a price outside this package: bound to a name that says price
// (const, var, struct field or assignment), or equal to a distinctive value
// of the table.
func strayPrices(fset *token.FileSet, file *ast.File) []string {
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	named := func(name string, v ast.Expr) {
		if lit, ok := ast.Unparen(v).(*ast.BasicLit); ok && (lit.Kind == token.FLOAT || lit.Kind == token.INT) && priceName.MatchString(name) {
			report(lit, name+" = "+lit.Value)
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if i < len(n.Names) {
					named(n.Names[i].Name, v)
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				named(k.Name, n.Value)
			}
		case *ast.AssignStmt:
			for i, v := range n.Rhs {
				if k, ok := n.Lhs[min(i, len(n.Lhs)-1)].(*ast.Ident); ok {
					named(k.Name, v)
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.FLOAT {
				if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
					for _, d := range distinctive {
						if f == d {
							report(n, "literal "+n.Value+" is a price of Table2026")
						}
					}
				}
			}
		}
		return true
	})
	return found
}

// The module has one price table: Table2026, dated, sourced from AWS pages,
// and no price literal in any other Go file (tests aside: they state
// hand-derived expected values). Two tables that once lived in catalog and
// access would fail this test, as the first case shows.
func TestPricesAreOneDatedTable(t *testing.T) {
	p := Table2026
	if _, err := time.Parse(time.DateOnly, p.Checked); err != nil || p.Region != "us-east-1" || len(p.Sources) < 3 {
		t.Errorf("price table lacks its date, region or sources: %+v", p)
	}
	for _, s := range p.Sources {
		if !strings.HasPrefix(s, "https://aws.amazon.com/") {
			t.Errorf("source %q is not an AWS page", s)
		}
	}
	// The scanner finds the tables this package replaced.
	fset := token.NewFileSet()
	old, err := parser.ParseFile(fset, "old.go", `package x
const PricePerMillionReads = 0.125
var Prices = struct{ USDPerWCUHour float64 }{USDPerWCUHour: 0.00065}
func cost(u float64) float64 { return u * 0.625 / 1e6 }`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strayPrices(fset, old); len(got) != 4 { // the const, the field, its distinctive value, 0.625
		t.Fatalf("scanner found %q in the old tables, want 4 prices", got)
	}
	// No other Go file of the repository holds a price.
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".cache", ".venv", "node_modules", ".git", "prices":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, s := range strayPrices(fset, f) {
			t.Errorf("a price outside package prices: %s; take it from prices.Table2026", s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
