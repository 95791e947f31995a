package leaselab

import (
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/claimrate"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/lease"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// The verdict follows the spreads' order, never the medians alone: runs
// that overlap cannot rank the settings.
func TestPollVerdictFollowsTheRanges(t *testing.T) {
	row := func(ms int, lags ...float64) PollRow {
		return PollRow{Poll: time.Duration(ms) * time.Millisecond, MeanLag: SpreadOf(lags)}
	}
	cases := []struct {
		name string
		rows []PollRow
		want string
	}{
		{"long poll lags more in every run", []PollRow{row(5, 0.1, 0.2, 0.3), row(80, 1.0, 1.1, 1.5)}, "every 80 ms run lagged more than every 5 ms run"},
		{"long poll lags less in every run", []PollRow{row(5, 2, 3, 4), row(80, 0.5, 0.6, 1)}, "every 80 ms run lagged less than every 5 ms run"},
		{"ranges overlap although the medians differ", []PollRow{row(5, 0.1, 0.2, 1.2), row(80, 1.0, 1.1, 1.5)}, "the 5 ms and 80 ms runs overlap"},
		{"one setting", []PollRow{row(5, 1)}, "nothing to compare"},
	}
	for _, c := range cases {
		if got := PollVerdict(c.rows); !strings.Contains(got, c.want) {
			t.Errorf("%s: PollVerdict = %q, want it to say %q", c.name, got, c.want)
		}
	}
}

// A poll of 5 ms on a 20 ms job-minute is a quarter job-minute; the last
// row is the forecast, which has no lag.
func TestPollRowsConvertsThePollToJobMinutes(t *testing.T) {
	rows := PollRows([]PollRow{{Poll: 5 * time.Millisecond, MeanLag: SpreadOf([]float64{0.5}), MaxLag: SpreadOf([]float64{1}),
		AverageWait: SpreadOf([]float64{30}), Drained: SpreadOf([]float64{161}), ForecastWait: 29, ForecastDrained: 160}}, 20*time.Millisecond)
	if len(rows) != 2 || rows[0][0] != "5" || rows[0][1] != "0.25" || rows[1][0] != "forecast" || rows[1][4] != "29" || rows[1][5] != "160" {
		t.Fatalf("rows %q: want the 5 ms row at 0.25 job-minutes, then the forecast's 29 and 160", rows)
	}
}

// A shard is owned only while its lease is live; an acquire over an ended
// lease says by how much it came after the end, with separators.
func TestOwnerAndHistoryRows(t *testing.T) {
	at := time.UnixMilli(10_000)
	owners := OwnerRows([]fleet.ShardState{{Shard: 0, Holder: "ann", UntilMS: 12_000, Token: 3}, {Shard: 1, Holder: "bob", UntilMS: 9_000, Token: 2}}, at)
	if owners[0][1] != "ann" || owners[1][1] != "nobody" {
		t.Fatalf("owners %q: want ann (live lease) and nobody (ended lease)", owners)
	}
	hist := HistoryRows(fleet.ShardState{History: []fleet.Tenure{{Op: "acquire", Holder: "bob", Token: 1},
		{Op: "acquire", Holder: "ann", Token: 2, AtMS: 11_500, PrevUntilMS: 10_000}, {Op: "release", Holder: "ann", Token: 2}}})
	if hist[0][3] != "a free shard" || hist[1][3] != "a lease that had ended 1,500 ms before" || hist[2][3] != "" {
		t.Fatalf("history %q", hist)
	}
}

// The summary's ratio is the fleet's median over the night executor's, at
// the same worker count, and the ceiling is the fleet rows' median.
func TestExecutorSummaryIsBuiltFromTheRows(t *testing.T) {
	rows := []claimrate.Row{
		{Executor: claimrate.Night, Workers: 1, Median: 50, LostPerWon: 0},
		{Executor: claimrate.FleetOwned, Workers: 1, Median: 100, Ceiling: 1500},
		{Executor: claimrate.Night, Workers: 4, Median: 40, LostPerWon: 2.5},
		{Executor: claimrate.FleetOwned, Workers: 4, Median: 400, Ceiling: 1700},
	}
	got := ExecutorSummary(rows)
	for _, want := range []string{"1 worker: the fleet ran **2 times**", "4 workers: the fleet ran **10 times**", "lost 2.5 claims per claim won",
		"**1,600** conditional writes a second"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q: want %q", got, want)
		}
	}
}

// The sentence under the sleeper's table says what the fence refused in
// this run: the late end, or the heartbeat that made the sleeper drop the
// job; the outcome is never escaped twice.
func TestSleeperSummarySaysWhatTheFenceRefused(t *testing.T) {
	base := SleeperResult{Lease: time.Second, Paused: 3 * time.Second, Ended: 1, Job: lease.JobState{Status: queuekit.StatusSuccess, Token: 4}}
	ended := base
	ended.Sleeper.Fenced = 1
	dropped := base
	dropped.Sleeper.Dropped = 1
	for _, c := range []struct {
		r    SleeperResult
		want string
	}{
		{ended, "Its late end was refused by the fence: **1 refused end**"},
		{dropped, "first write after waking was a **heartbeat**"},
		{base, "not stopped past its lease"},
	} {
		got := SleeperSummary(c.r)
		if !strings.Contains(got, c.want) || !strings.Contains(got, "Ends the pool counted for the job: **1**") {
			t.Errorf("summary %q: want %q and one counted end", got, c.want)
		}
	}
}

// A dead worker's job shows all its attempts, the dead worker's and the
// retry's, with their outcomes as written (no Markdown escapes).
func TestAttemptRowsShowTheDeadWorkersJobs(t *testing.T) {
	rep := lease.Report{Schedule: []lease.Entry{
		{Slot: sim.Slot{ID: "J1", Start: 0, Finish: 10}, Attempt: 1, Worker: "doomed", Outcome: lease.LeaseExpired},
		{Slot: sim.Slot{ID: "J1", Start: 60, Finish: 85}, Attempt: 2, Worker: "main-1", Outcome: queuekit.StatusSuccess},
		{Slot: sim.Slot{ID: "J2", Start: 0, Finish: 25}, Attempt: 1, Worker: "main-2", Outcome: queuekit.StatusSuccess},
	}}
	rows := AttemptRows(rep, "doomed")
	if len(rows) != 2 || rows[0][5] != "LEASE_EXPIRED" || rows[1][2] != "main-1" {
		t.Fatalf("rows %q: want J1's two attempts, the first LEASE_EXPIRED", rows)
	}
}
