package nightlab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/lab/nightlab"
)

// A notebook cell opens the workshop's catalog and builds the queuekit
// command without helpers declared in another cell, so it runs after a
// kernel restart as it does in order.
func ExampleMustCatalog() {
	cat := nightlab.MustCatalog()
	fmt.Println(cat.Table())
	fmt.Println(cat.Table() + "_fleet")
	// Output:
	// db_batch_window_requests
	// db_batch_window_requests_fleet
}
