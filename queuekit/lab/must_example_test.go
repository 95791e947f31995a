package lab_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nightqueue/workshop/queuekit/lab"
)

// A notebook cell opens the workshop's catalog and builds the queuekit
// command without helpers declared in another cell, so it runs after a
// kernel restart as it does in order.
func ExampleMustCatalog() {
	cat := lab.MustCatalog()
	fmt.Println(cat.Table())
	fmt.Println(cat.Table() + "_fleet")
	// Output:
	// db_batch_window_requests
	// db_batch_window_requests_fleet
}

func ExampleMustQueuekitBinary() {
	bin := lab.MustQueuekitBinary()
	_, err := os.Stat(bin)
	fmt.Println(filepath.Base(bin), err == nil)
	// Output: queuekit true
}

func ExampleTimes() {
	fmt.Println(lab.Times(1), lab.Times(2), lab.Times(3), lab.Times(1200), lab.Times(0))
	// Output: once twice 3 times 1,200 times 0 times
}
