package fanoutlab_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fanout/pacing"
	"github.com/nightqueue/workshop/queuekit/lab/fanoutlab"
)

func TestJitterSentenceFollowsTheValues(t *testing.T) {
	plain := pacing.Row{Workers: 12, Processed: 4, Dead: 8}
	for _, c := range []struct {
		jittered pacing.Row
		want     []string
		not      string
	}{
		{pacing.Row{Processed: 7, Dead: 5}, []string{"4 of 12", "full jitter 7", "let 3 more through", "Even with jitter 5 healthy"}, "fewer"},
		{pacing.Row{Processed: 4, Dead: 8}, []string{"let no more slices through"}, "more through"},
		{pacing.Row{Processed: 3, Dead: 9}, []string{"let fewer slices through"}, "more through"},
		{pacing.Row{Processed: 12}, []string{"let 8 more through"}, "Even with jitter"},
	} {
		s := fanoutlab.JitterSentence(plain, c.jittered)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("sentence %q lacks %q", s, w)
			}
		}
		if strings.Contains(s, c.not) {
			t.Errorf("sentence %q says %q, which the values do not show", s, c.not)
		}
	}
}

// The table and sentence notebook 07 shows beside its jitter run.
func ExampleJitterSentence() {
	plain := pacing.Row{Workers: 12, Elapsed: 4400 * time.Millisecond, Processed: 4, Dead: 8, Throttled: 38, Received: 42}
	jittered := pacing.Row{Workers: 12, Elapsed: 9700 * time.Millisecond, Processed: 6, Dead: 6, Throttled: 35, Received: 41}
	for _, r := range fanoutlab.JitterRows(plain, jittered) {
		fmt.Println(strings.Join(r, " | "))
	}
	fmt.Println(fanoutlab.JitterSentence(plain, jittered))
	// Output:
	// same pause for all | 4.4 s | 4 | 8 | 38 | 42
	// full jitter | 9.7 s | 6 | 6 | 35 | 41
	// Without jitter 4 of 12 slices were processed; with full jitter 6: jitter let 2 more through, because retries spread over the window instead of arriving together, where the limit lets one of them pass. Even with jitter 6 healthy slices ended in the dead-letter queue: jitter softens a stampede, pacing prevents it.
}
