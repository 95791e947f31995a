package access

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// Rounds interleave the reads (a, b, a, b, ...) after one untimed warm-up
// round, keep every timed wall time in order, and report the median; read
// units come from the first timed read.
func TestRoundsInterleaveAndKeepEverySample(t *testing.T) {
	var order []string
	elapsed := map[string][]time.Duration{
		"a": {99, 5, 1, 3}, // the first (99) is the warm-up
		"b": {99, 40, 20, 30},
	}
	read := func(name string) func() (catalog.AccessReport, error) {
		return func() (catalog.AccessReport, error) {
			i := 0
			for _, o := range order {
				if o == name {
					i++
				}
			}
			order = append(order, name)
			return catalog.AccessReport{Method: name, ConsumedRCU: float64(10 * i), Elapsed: elapsed[name][i]}, nil
		}
	}
	var prog status
	out, err := Study{Repeats: 3}.rounds(context.Background(), &prog, []func() (catalog.AccessReport, error){read("a"), read("b")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "a", "b", "a", "b", "a", "b"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if !slices.Equal(out[0].Samples, []time.Duration{5, 1, 3}) || !slices.Equal(out[1].Samples, []time.Duration{40, 20, 30}) {
		t.Errorf("samples %v and %v, want the three timed reads each, in order", out[0].Samples, out[1].Samples)
	}
	if out[0].Elapsed != 3 || out[1].Elapsed != 30 {
		t.Errorf("elapsed %v and %v, want the medians 3 and 30", out[0].Elapsed, out[1].Elapsed)
	}
	if out[0].ConsumedRCU != 10 {
		t.Errorf("read units %v, want the first timed read's (10)", out[0].ConsumedRCU)
	}
	if prog.Done != 8 {
		t.Errorf("progress counted %d reads, want 8", prog.Done)
	}
}

// A failing read stops the rounds with its error.
func TestRoundsStopAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var prog status
	_, err := Study{Repeats: 3}.rounds(context.Background(), &prog, []func() (catalog.AccessReport, error){
		func() (catalog.AccessReport, error) { return catalog.AccessReport{}, boom },
	})
	if !errors.Is(err, boom) {
		t.Errorf("err %v, want boom", err)
	}
}
