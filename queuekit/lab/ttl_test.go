package lab

import (
	"slices"
	"testing"
)

// By the rule (a week late must be harmless), three of the six candidates
// suit a TTL timer: the two clean-ups measured in weeks and the share link
// whose deletion may wait (its readers filter on the TTL attribute).
func TestTTLSuitsTheJobsThatMayBeAWeekLate(t *testing.T) {
	want := []string{"archive-finished-jobs", "drop-attempt-records", "expire-share-link"}
	if got := TTLSuits(TTLJobs); !slices.Equal(got, want) {
		t.Fatalf("TTLSuits = %v, want %v", got, want)
	}
	if !CheckTTLChoice([]string{"expire-share-link", "archive-finished-jobs", "drop-attempt-records", "archive-finished-jobs"}) {
		t.Error("the right three (one twice, any order): want pass")
	}
	if CheckTTLChoice([]string{"archive-finished-jobs", "start-etl-0100"}) {
		t.Error("one missing... and one that cannot wait: want not yet")
	}
}
