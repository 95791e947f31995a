package ttllab

import (
	"maps"
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

// Notebook 06's decision: each job's mechanism, judged rule by rule.
func TestJudgeTimerPlan(t *testing.T) {
	right := map[string]string{
		"archive-finished-jobs": ViaTTL, "start-etl-0100": ViaScheduler, "retry-in-5-minutes": ViaDelayQueue,
		"drop-attempt-records": ViaTTL, "deadline-reminder": ViaScheduler, "expire-share-link": ViaTTLFilter,
	}
	if v := JudgeTimerPlan(TTLJobs, right); !v.OK() {
		t.Errorf("the instructor's plan: %+v, want no rule broken", v)
	}
	alsoRight := maps.Clone(right)
	alsoRight["retry-in-5-minutes"], alsoRight["archive-finished-jobs"] = ViaScheduler, ViaTTLFilter
	if v := JudgeTimerPlan(TTLJobs, alsoRight); !v.OK() {
		t.Errorf("a scheduler for the retry, a filter nobody needs: %+v, want no rule broken", v)
	}
	wrong := maps.Clone(right)
	wrong["start-etl-0100"], wrong["expire-share-link"], wrong["deadline-reminder"] = ViaTTL, ViaTTL, ViaDelayQueue
	wrong["drop-attempt-records"] = "?"
	want := TimerPlanVerdict{Unknown: 1, TTLTooLate: 1, Unfiltered: 1, DelayTooLong: 1}
	if v := JudgeTimerPlan(TTLJobs, wrong); v != want {
		t.Errorf("the lookup's plan: %+v, want %+v", v, want)
	}
	wrong = maps.Clone(right)
	wrong["archive-finished-jobs"] = ViaScheduler
	if v := JudgeTimerPlan(TTLJobs, wrong); v != (TimerPlanVerdict{NotOnTTL: 1}) {
		t.Errorf("a schedule per archived night: %+v, want NotOnTTL 1", v)
	}
}
