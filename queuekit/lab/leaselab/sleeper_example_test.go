package leaselab_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

func ExampleMustQueuekitBinary() {
	bin := leaselab.MustQueuekitBinary()
	_, err := os.Stat(bin)
	fmt.Println(filepath.Base(bin), err == nil)
	// Output: queuekit true
}
