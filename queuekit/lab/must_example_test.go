package lab_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/lab"
)

func ExampleTimes() {
	fmt.Println(lab.Times(1), lab.Times(2), lab.Times(3), lab.Times(1200), lab.Times(0))
	// Output: once twice 3 times 1,200 times 0 times
}
