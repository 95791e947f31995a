package fanoutlab

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/fanout/nights"
)

func TestSliceListAndOutliving(t *testing.T) {
	if got := SliceList(nil); got != "none" {
		t.Errorf("SliceList(nil) = %q, want none", got)
	}
	if got := SliceList([]int{3, 17, 1200}); got != "3, 17, 1,200" {
		t.Errorf("SliceList = %q", got)
	}
	rt := []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 3 * time.Second}
	if got := Outliving(rt, time.Second); got != 2 {
		t.Errorf("Outliving(1 s) = %d, want 2 (a runtime equal to the timeout does not outlive it)", got)
	}
}

// The same seed gives the same runtimes (the notebook's prediction is
// checkable), and a lognormal with median 1 s puts about half of a large
// sample above 1 s.
func TestSliceRuntimesAreSeededLognormal(t *testing.T) {
	a, b := SliceRuntimes(7, 1, 2000), SliceRuntimes(7, 1, 2000)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different runtimes")
	}
	if above := Outliving(a, time.Second); above < 900 || above > 1100 {
		t.Errorf("%d of 2,000 above the median of 1 s: want about 1,000", above)
	}
}

// With p = 0 only the poison slice fails; with p = 1 every slice does.
func TestFlakySlices(t *testing.T) {
	never, always := FlakySlices(0, 17), FlakySlices(1, 17)
	for i := range 30 {
		if err := never(fanout.Pointer{Slice: i}); (err != nil) != (i == 17) {
			t.Errorf("p = 0, slice %d: err %v", i, err)
		}
		if always(fanout.Pointer{Slice: i}) == nil {
			t.Errorf("p = 1, slice %d: no error", i)
		}
	}
}

func TestFanOutRowReadsTheCapacityReport(t *testing.T) {
	res, _ := json.Marshal(nights.Capacity{Nights: 28, OverflowNights: 2, OverflowJobs: 5, MeanUtilization: 0.5, WorstNight: "2026-01-02"})
	row, err := FanOutRow(fanout.Outcome{Final: fanout.Final{Slices: 30, Processed: 28, DeadLettered: []int{3, 17}, Result: res}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"30", "28", "3, 17", "0", "28", "2", "5", "50.0%", "2026-01-02"}
	if !slices.Equal(row, want) {
		t.Fatalf("row %q, want %q", row, want)
	}
	if _, err := FanOutRow(fanout.Outcome{Final: fanout.Final{Result: json.RawMessage("{")}}); err == nil {
		t.Error("a broken report: want an error")
	}
}
