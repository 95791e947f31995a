package catalog

import (
	"reflect"
	"testing"
)

// A package with a table of its own opens a handle of the AWS layer
// (c.DB().Open, RidingOut), not a second catalog: the job catalog keeps
// no way to make one on another table.
func TestCatalogMakesNoSiblingCatalogs(t *testing.T) {
	for _, m := range []string{"Sibling", "RidingOut", "CreateTableFrom"} {
		if _, ok := reflect.TypeOf(&Catalog{}).MethodByName(m); ok {
			t.Errorf("(*Catalog).%s exists: a table of another package's belongs behind a dynamo.Table handle", m)
		}
	}
}
