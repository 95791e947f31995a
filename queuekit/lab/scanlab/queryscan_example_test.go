package scanlab_test

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/lab/scanlab"
)

// Notebook 02's experiment and its saved points: a cell that reads them
// after a kernel restart gets the points the measuring cell saved.
func ExampleQueryVsScanPoints() {
	s := scanlab.QueryVsScanStudy(nil)
	fmt.Println(s.Sizes, s.PadBytes, s.Repeats)
	ps := scanlab.QueryVsScanPoints(context.Background())
	fmt.Println(len(ps), ps[len(ps)-1].Nights, ps[len(ps)-1].Query.Count == ps[len(ps)-1].Scan.Count)
	// Output:
	// [7 30 90 365] 1024 5
	// 4 365 true
}
