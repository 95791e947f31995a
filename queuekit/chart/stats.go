package chart

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
	"gonum.org/v1/gonum/stat"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Histogram draws the distribution of values (per-job waits from
// sim.Result.Waits, or the per-replication p95 waits of a Monte Carlo run) as
// bars of the given width, binned by sim.Bins; a width <= 0 picks one with
// sim.AutoBinWidth. xName names the values
// ("wait (minutes)"). Its table lists the bins, up to MaxTableBins of them,
// and otherwise summarises the values rather than repeat the chart.
func Histogram(values []float64, width float64, xName string, set ...Setting) (*Chart, error) {
	if width <= 0 {
		width = sim.AutoBinWidth(values)
	}
	bins, err := sim.Bins(values, width)
	if err != nil {
		return nil, fmt.Errorf("histogram of %s: %w", xName, err)
	}
	o := apply("Distribution of "+xName, 0, 360, set)
	names := make([]string, len(bins))
	data := make([]opts.BarData, len(bins))
	for i, b := range bins {
		names[i] = format.Num(b.Low) + "–" + format.Num(b.High)
		data[i] = opts.BarData{Value: b.Count}
	}
	t := histogramTable(values, bins, xName)
	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: fmt.Sprintf("%d values, bins of %s", len(values), format.Num(width))}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "40", Top: "70", Bottom: "60"}),
		charts.WithXAxisOpts(opts.XAxis{Name: xName, NameLocation: "middle", NameGap: 32}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "count", MinInterval: 1}),
	)
	bar.SetXAxis(names)
	bar.AddSeries("count", data,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorMain}),
		charts.WithBarChartOpts(opts.BarChart{BarCategoryGap: "5%"}),
	)
	opt, err := optionOf(bar)
	if err != nil {
		return nil, fmt.Errorf("histogram of %s: %w", xName, err)
	}
	return &Chart{Kind: "histogram", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// MaxTableBins is the most bins a histogram's table lists one by one; a
// histogram with more is summarised instead (the chart shows the bins).
const MaxTableBins = 12

// histogramTable lists the bins, or, beyond MaxTableBins, summarises the
// values: how many, min, median, p95 (nearest rank), max, mean and the most
// common bin.
func histogramTable(values []float64, bins []sim.Bin, xName string) format.Table {
	if len(bins) <= MaxTableBins {
		t := format.Table{Headers: []string{xName, "count", "share"}}
		for _, b := range bins {
			t.Rows = append(t.Rows, []string{"[" + format.Num(b.Low) + ", " + format.Num(b.High) + ")", strconv.Itoa(b.Count),
				format.Percent(float64(b.Count) / float64(len(values)))})
		}
		return t
	}
	// Many bins means many values: Quantile is ok; with none it gives 0.
	rank := func(q float64) float64 { v, _ := queuekit.Quantile(values, q); return v }
	mode := bins[0]
	for _, b := range bins {
		if b.Count > mode.Count {
			mode = b
		}
	}
	return format.Table{Headers: []string{"statistic", xName}, Rows: [][]string{
		{"values", format.Int(len(values))},
		{"min", format.Num(rank(1.0 / float64(len(values))))},
		{"median", format.Num(rank(0.5))},
		{"p95 (nearest rank)", format.Num(rank(0.95))},
		{"max", format.Num(rank(1))},
		{"mean", format.Num(stat.Mean(values, nil))},
		{"most common bin", fmt.Sprintf("[%s, %s): %s values (%s)", format.Num(mode.Low), format.Num(mode.High), format.Int(mode.Count),
			format.Percent(float64(mode.Count)/float64(len(values))))},
	}}
}

// WaitHistogram draws the per-job waits of a traced result in bins of the
// given width in minutes (<= 0: automatic).
func WaitHistogram(r sim.Result, width float64, set ...Setting) (*Chart, error) {
	if len(r.Schedule) == 0 && r.Jobs > 0 {
		return nil, fmt.Errorf("wait histogram: %w", sim.ErrNoTrace)
	}
	set = append([]Setting{Title(fmt.Sprintf("Per-job wait, c = %d (%s)", r.Workers, policyName(r.Policy)))}, set...)
	return Histogram(r.Waits(), width, "wait (minutes)", set...)
}

// SweepPoint is one worker count of a sweep: Monte Carlo estimates with
// their 95% intervals (Student t for the p95 wait and utilisation, Wilson
// for the overflow probability). Fractions are in 0..1. An interval whose
// Low and High are both zero is treated as absent.
type SweepPoint struct {
	Workers                                      int
	P95Wait, P95Low, P95High                     float64 // minutes
	Overflow, OverflowLow, OverflowHigh          float64 // P(the night finishes after the cutoff)
	Utilization, UtilizationLow, UtilizationHigh float64
}

// xWorkers is the worker-count axis: a value axis from 0 to one past the
// largest c, a tick at every c when there are at most 12 of them.
func xWorkers(maxC int) opts.XAxis {
	x := opts.XAxis{Type: "value", Name: "workers c", NameLocation: "middle", NameGap: 28, Min: 0, Max: maxC + 1, MinInterval: 1}
	if maxC <= 12 {
		x.MaxInterval = 1
	}
	return x
}

// maxWorkers is the largest worker count of a sweep.
func maxWorkers(points []SweepPoint) int {
	m := 0
	for _, p := range points {
		m = max(m, p.Workers)
	}
	return m
}

// errorBarRenderItem draws a vertical error bar with caps from value(1) to
// value(2) at x = value(0).
const errorBarRenderItem = `function (params, api) {
  var x = api.value(0);
  var lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
  var w = Math.min(api.size([1, 0])[0] * 0.25, 18);
  var st = {stroke: api.visual('color'), lineWidth: 2, fill: null};
  return {type: 'group', children: [
    {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: st},
    {type: 'line', shape: {x1: lo[0] - w / 2, y1: lo[1], x2: lo[0] + w / 2, y2: lo[1]}, style: st},
    {type: 'line', shape: {x1: hi[0] - w / 2, y1: hi[1], x2: hi[0] + w / 2, y2: hi[1]}, style: st}]};
}`

// axisTooltip lists each series at the hovered worker count: a point [c, v]
// shows v, an error bar [c, low, high] shows "low – high".
const axisTooltip = `function (ps) {
  var out = ps.length ? ps[0].axisValueLabel : '';
  for (var i = 0; i < ps.length; i++) {
    var p = ps[i], v = p.value;
    var t = !Array.isArray(v) ? v : (v.length > 2 ? v[1] + ' – ' + v[2] : v[1]);
    out += '<br/>' + p.marker + p.seriesName + ': ' + t;
  }
  return out;
}`

type sweepMetric struct {
	kind, title, yName, col string
	scale                   float64 // multiply values for the chart (100 for percentages)
	fmt                     func(float64) string
	get                     func(SweepPoint) (v, lo, hi float64)
	yMax                    interface{}
}

func sweepChart(points []SweepPoint, m sweepMetric, set []Setting) (*Chart, error) {
	if len(points) == 0 {
		return nil, fmt.Errorf("%s sweep: no points", m.kind)
	}
	o := apply(m.title, 0, 380, set)
	hasCI := false
	for _, p := range points {
		if p.Workers < 1 {
			return nil, fmt.Errorf("%s sweep: point with %d workers, want at least 1", m.kind, p.Workers)
		}
		v, lo, hi := m.get(p)
		for _, x := range []float64{v, lo, hi} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s sweep: c = %d: value %v", m.kind, p.Workers, x)
			}
		}
		if lo != 0 || hi != 0 {
			hasCI = true
		}
	}
	t := format.Table{Headers: []string{"workers", m.col}}
	if hasCI {
		t.Headers = append(t.Headers, "95% low", "95% high")
	}
	if o.HasTarget {
		t.Headers = append(t.Headers, "meets target "+m.fmt(o.Target))
	}
	// The worker count is a value axis, not categories: a sweep over
	// c = 1..6, 8 leaves the gap at 7 visible.
	line := make([]opts.LineData, len(points))
	var bars []opts.CustomData
	for i, p := range points {
		v, lo, hi := m.get(p)
		c := float64(p.Workers)
		line[i] = opts.LineData{Value: []float64{c, round4(v * m.scale)}}
		row := []string{strconv.Itoa(p.Workers), m.fmt(v)}
		if hasCI {
			row = append(row, m.fmt(lo), m.fmt(hi))
			bars = append(bars, opts.CustomData{Value: []float64{c, round4(lo * m.scale), round4(hi * m.scale)}})
		}
		if o.HasTarget {
			ok := v <= o.Target
			if hasCI {
				ok = hi <= o.Target
			}
			row = append(row, map[bool]string{true: "yes", false: "no"}[ok])
		}
		t.Rows = append(t.Rows, row)
	}
	sub := "95% intervals as error bars"
	if !hasCI {
		sub = "point estimates"
	}
	if o.HasTarget {
		sub += "; target " + m.fmt(o.Target)
		if hasCI {
			sub += " (met when the whole interval is under it)"
		}
	}
	l := charts.NewLine()
	l.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: sub}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", Formatter: opts.FuncOpts(axisTooltip)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "40", Top: "70", Bottom: "60"}),
		charts.WithXAxisOpts(xWorkers(maxWorkers(points))),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.yName, Min: 0, Max: m.yMax}),
	)
	lineOpts := []charts.SeriesOpts{
		charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: colorMain}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorMain}),
		charts.WithLineChartOpts(opts.LineChart{Symbol: "circle", SymbolSize: 7}),
	}
	if o.HasTarget {
		lineOpts = append(lineOpts,
			charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: "target", YAxis: round4(o.Target * m.scale)}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
				// Inside the plot, above the line's end: at the default
				// position, past the end, the label is clipped by the edge.
				Label:     &opts.Label{Show: opts.Bool(true), Position: "insideEndTop", Formatter: types.FuncStr("target " + m.fmt(o.Target))},
				LineStyle: &opts.LineStyle{Color: colorTarget, Width: 2, Type: "dashed"}}))
	}
	l.AddSeries(m.col, line, lineOpts...)
	if hasCI {
		l.AddSeries("95% interval", nil, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Type = types.ChartCustom
			s.RenderItem = opts.FuncOpts(errorBarRenderItem)
			s.Data = bars
		}),
			charts.WithEncodeOpts(opts.Encode{X: 0, Y: []int{1, 2}}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#34495e"}))
	}
	opt, err := optionOf(l)
	if err != nil {
		return nil, fmt.Errorf("%s sweep: %w", m.kind, err)
	}
	return &Chart{Kind: "sweep-" + m.kind, Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// SweepP95 draws the p95 wait (minutes) against the worker count, with its
// 95% confidence interval as error bars. Target(minutes) adds a target line.
func SweepP95(points []SweepPoint, set ...Setting) (*Chart, error) {
	return sweepChart(points, sweepMetric{kind: "p95", title: "p95 wait by worker count", yName: "minutes",
		col: "p95 wait (min)", scale: 1, fmt: format.Num,
		get: func(p SweepPoint) (float64, float64, float64) { return p.P95Wait, p.P95Low, p.P95High }}, set)
}

// SweepOverflow draws the overflow probability (the night finishing after
// the cutoff) against the worker count, in percent, with its Wilson 95%
// interval as error bars. Target(fraction) adds a target line.
func SweepOverflow(points []SweepPoint, set ...Setting) (*Chart, error) {
	return sweepChart(points, sweepMetric{kind: "overflow", title: "Overflow probability by worker count", yName: "% of nights",
		col: "overflow probability", scale: 100, fmt: percent1, yMax: 100,
		get: func(p SweepPoint) (float64, float64, float64) { return p.Overflow, p.OverflowLow, p.OverflowHigh }}, set)
}

// percent1 is the sweep tables' one rounding rule: one decimal in every
// cell, "over 99.9%" for a fraction short of 1 (format.PercentAt).
func percent1(f float64) string { return format.PercentAt(f, 1) }

// SweepUtilization draws worker utilisation inside the window against the
// worker count, in percent, with its interval when present.
func SweepUtilization(points []SweepPoint, set ...Setting) (*Chart, error) {
	return sweepChart(points, sweepMetric{kind: "utilization", title: "Worker utilisation by worker count", yName: "% of window",
		col: "utilisation", scale: 100, fmt: percent1, yMax: 100,
		get: func(p SweepPoint) (float64, float64, float64) {
			return p.Utilization, p.UtilizationLow, p.UtilizationHigh
		}}, set)
}
