package chart

import (
	"math"
	"strings"
	"testing"
)

func TestLinesTableAndOption(t *testing.T) {
	c, err := Lines("cost", "jobs/day", "$", []Series{
		{Name: "on demand", X: []float64{1e6, 1e8}, Y: []float64{3.83, 383}},
		{Name: "provisioned", X: []float64{1e6, 1e8}, Y: []float64{1.1064, 110.64}},
	}, LogX(), Target(100))
	if err != nil {
		t.Fatal(err)
	}
	md := c.Markdown()
	for _, want := range []string{"| jobs/day | on demand | provisioned |", "| 100,000,000 | 383 | 110.64 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(c.Option(), `"log"`) || !strings.Contains(c.Option(), "limit 100") {
		t.Errorf("option lacks the log axis or the limit line: %s", c.Option())
	}
	if !strings.Contains(c.HTML(), "echarts.init(") {
		t.Error("HTML does not init ECharts")
	}
}

func TestLinesRejectsBadInput(t *testing.T) {
	for name, s := range map[string][]Series{
		"none":       nil,
		"mismatch":   {{Name: "a", X: []float64{1, 2}, Y: []float64{1}}},
		"other x":    {{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}, {Name: "b", X: []float64{1, 3}, Y: []float64{1, 2}}},
		"NaN":        {{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}},
		"log of 0 x": {{Name: "a", X: []float64{0}, Y: []float64{1}}},
	} {
		set := []Setting{}
		if name == "log of 0 x" {
			set = append(set, LogX())
		}
		if _, err := Lines("t", "x", "y", s, set...); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestBars(t *testing.T) {
	c, err := Bars("hottest key", "WCU/s", []string{"batch_date", "due minute # 8 shards"},
		[]Series{{Name: "WCU/s", Y: []float64{4629.63, 578.7}}}, Target(1000))
	if err != nil {
		t.Fatal(err)
	}
	if md := c.Markdown(); !strings.Contains(md, "| batch\\_date | 4,629.63 |") {
		t.Errorf("table:\n%s", md)
	}
	if !strings.Contains(c.Option(), "limit 1,000") {
		t.Error("no limit line")
	}
	if _, err := Bars("t", "y", []string{"a"}, []Series{{Name: "s", Y: []float64{1, 2}}}); err == nil {
		t.Error("2 values for 1 category: want an error")
	}
}
