package forecastlab

import (
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/forecast"
	"github.com/nightqueue/workshop/queuekit/montecarlo"
)

func TestIntervalAndFindRecord(t *testing.T) {
	if got := Interval(montecarlo.Interval{Mean: 32.1, Low: 25, High: 39.2}); got != "32.1 [25 to 39.2]" {
		t.Errorf("Interval = %q", got)
	}
	if _, err := FindRecord(nil, "2026-05-04"); err == nil || !strings.Contains(err.Error(), "2026-05-04") {
		t.Errorf("a missing night: err %v, want one naming it", err)
	}
}

// A seed ranking is never called a verdict: one forecaster first on every
// seed is "had the smallest MAE", a split names the counts.
func TestSeedRankingSaysRankingNotVerdict(t *testing.T) {
	hist, err := forecast.History(forecast.HistoryConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FindRecord(hist, hist[3].Night.BatchDate); err != nil {
		t.Fatal(err)
	}
	res, err := forecast.Seeds(forecast.StudyConfig{History: forecast.HistoryConfig{Truth: forecast.LoadTruth}, TrainShare: 0.8}, []uint64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	got := SeedRanking("load world", "all held-out nights", res, false)
	if !strings.Contains(got, "smallest MAE") || strings.Contains(got, "verdict:") {
		t.Errorf("ranking %q: want 'smallest MAE' and no verdict", got)
	}
	if rows := SeedRows(res); len(rows) != 2 || rows[0][0] != "1" {
		t.Errorf("rows %q", rows)
	}
}
