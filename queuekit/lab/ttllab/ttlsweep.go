package ttllab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// SweepBatch is timers that fired together: delays (seconds late) with no
// gap of SweepGap or more between neighbours.
type SweepBatch struct {
	Timers     int
	First, Max float64 // the batch's smallest and largest delay, seconds
}

// SweepGap separates two of DynamoDB Local's TTL passes in a trial's delays:
// timers deleted by one pass fire within a second or two of each other, and
// passes come about 10 s apart.
const SweepGap = 4.0

// SweepBatches groups delays (seconds, any order) into the batches that
// fired together, earliest first.
func SweepBatches(delays []float64) []SweepBatch {
	d := slices.Clone(delays)
	slices.Sort(d)
	var out []SweepBatch
	for i, v := range d {
		if i == 0 || v-d[i-1] >= SweepGap {
			out = append(out, SweepBatch{First: v})
		}
		b := &out[len(out)-1]
		b.Timers++
		b.Max = v
	}
	return out
}

// SweepSummary is the sentence notebook 06 prints under its histogram: how
// many batches, how many timers each, and how far apart they started.
func SweepSummary(batches []SweepBatch) string {
	if len(batches) == 0 {
		return "No timer fired."
	}
	var parts []string
	total := 0
	for _, b := range batches {
		total += b.Timers
		parts = append(parts, fmt.Sprintf("**%s** at %s to %s s", format.Int(b.Timers), format.Num(b.First), format.Num(b.Max)))
	}
	s := fmt.Sprintf("The %s fired in **%s**: %s.", lab.Plural(total, "timer", "timers"), lab.Plural(len(batches), "batch", "batches"), strings.Join(parts, ", "))
	if len(batches) > 1 {
		var gaps []string
		for i := 1; i < len(batches); i++ {
			gaps = append(gaps, format.Num(batches[i].First-batches[i-1].First))
		}
		s += fmt.Sprintf(" One batch a pass of Local's sweep; the passes began %s s apart.", strings.Join(gaps, ", "))
	}
	return s
}
