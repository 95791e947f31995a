package chart

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/nightqueue/workshop/queuekit/format"
)

// Series is one named line or set of bars: Y[i] belongs to X[i] (Lines) or
// to the i-th category (Bars, where X is unused).
type Series struct {
	Name string
	X, Y []float64
}

// LogX draws the x axis of Lines on a log scale (every x must be > 0).
func LogX() Setting { return func(o *Settings) { o.LogX = true } }

// LogY draws the y axis on a log scale (every y must be > 0).
func LogY() Setting { return func(o *Settings) { o.LogY = true } }

var seriesColors = []string{colorMain, colorExclusive, colorTarget, "#8e44ad", colorCutoff, "#16a085", "#7f8c8d"}

func checkValues(kind, name string, vs []float64, positive bool) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
			return fmt.Errorf("%s %q: value %v, want a finite number%s", kind, name, v, map[bool]string{true: " > 0 (log axis)", false: ""}[positive])
		}
	}
	return nil
}

func axisType(log bool) string {
	if log {
		return "log"
	}
	return "value"
}

// targetLine marks a horizontal line at o.Target, labelled label.
func targetLine(o Settings, label string) []charts.SeriesOpts {
	if !o.HasTarget {
		return nil
	}
	return []charts.SeriesOpts{
		charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: label, YAxis: round4(o.Target)}),
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			Label:     &opts.Label{Show: opts.Bool(true), Formatter: types.FuncStr(label)},
			LineStyle: &opts.LineStyle{Color: colorTarget, Width: 2, Type: "dashed"}}),
	}
}

// Lines draws one line per series against a shared x axis (every series has
// the same X), with a table of the numbers: one row per x, one column per
// series. Target(v) draws a dashed horizontal line at v labelled "limit v";
// LogX and LogY switch the axes to log scales.
func Lines(title, xName, yName string, series []Series, set ...Setting) (*Chart, error) {
	if len(series) == 0 || len(series[0].X) == 0 {
		return nil, fmt.Errorf("lines %q: no points", title)
	}
	o := apply(title, 0, 380, set)
	xs := series[0].X
	t := format.Table{Headers: []string{xName}}
	for _, s := range series {
		if len(s.X) != len(xs) || len(s.Y) != len(xs) {
			return nil, fmt.Errorf("lines %q: series %q has %d x and %d y values, want %d of each", title, s.Name, len(s.X), len(s.Y), len(xs))
		}
		for i := range xs {
			if s.X[i] != xs[i] {
				return nil, fmt.Errorf("lines %q: series %q has x %v where the first has %v; give every series the same x", title, s.Name, s.X[i], xs[i])
			}
		}
		if err := checkValues("lines", s.Name, s.X, o.LogX); err != nil {
			return nil, err
		}
		if err := checkValues("lines", s.Name, s.Y, o.LogY); err != nil {
			return nil, err
		}
		t.Headers = append(t.Headers, s.Name)
	}
	labels := make([]string, len(xs))
	for i, x := range xs {
		labels[i] = format.Figure(x)
	}
	t.Rows = seriesRows(labels, series)
	l := charts.NewLine()
	l.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "60", Top: "60", Bottom: "70"}),
		charts.WithXAxisOpts(opts.XAxis{Type: axisType(o.LogX), Name: xName, NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Type: axisType(o.LogY), Name: yName}),
	)
	for k, s := range series {
		data := make([]opts.LineData, len(xs))
		for i := range xs {
			data[i] = opts.LineData{Value: []float64{round4(s.X[i]), round4(s.Y[i])}}
		}
		c := seriesColors[k%len(seriesColors)]
		so := []charts.SeriesOpts{
			charts.WithLineChartOpts(opts.LineChart{Symbol: "circle", SymbolSize: 6}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: c}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: c}),
		}
		if k == 0 {
			so = append(so, targetLine(o, "limit "+format.Num(o.Target))...)
		}
		l.AddSeries(s.Name, data, so...)
	}
	opt, err := optionOf(l)
	if err != nil {
		return nil, fmt.Errorf("lines %q: %w", title, err)
	}
	return &Chart{Kind: "lines", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// Bars draws grouped bars: one bar per series in each category (Series.Y[i]
// for categories[i]), with a table of the numbers. Target(v) draws a dashed
// horizontal line at v labelled "limit v"; LogY switches to a log scale.
func Bars(title, yName string, categories []string, series []Series, set ...Setting) (*Chart, error) {
	if len(categories) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("bars %q: no categories or no series", title)
	}
	o := apply(title, 0, 380, set)
	t := format.Table{Headers: []string{""}}
	for _, s := range series {
		if len(s.Y) != len(categories) {
			return nil, fmt.Errorf("bars %q: series %q has %d values for %d categories", title, s.Name, len(s.Y), len(categories))
		}
		if err := checkValues("bars", s.Name, s.Y, o.LogY); err != nil {
			return nil, err
		}
		t.Headers = append(t.Headers, s.Name)
	}
	t.Rows = seriesRows(categories, series)
	b := charts.NewBar()
	b.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(len(series) > 1), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "60", Top: "60", Bottom: "70"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: rotation(categories)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: axisType(o.LogY), Name: yName}),
	)
	b.SetXAxis(categories)
	for k, s := range series {
		data := make([]opts.BarData, len(s.Y))
		for i, v := range s.Y {
			data[i] = opts.BarData{Value: round4(v)}
		}
		so := []charts.SeriesOpts{charts.WithItemStyleOpts(opts.ItemStyle{Color: seriesColors[k%len(seriesColors)]})}
		if k == 0 {
			so = append(so, targetLine(o, "limit "+format.Num(o.Target))...)
		}
		b.AddSeries(s.Name, data, so...)
	}
	opt, err := optionOf(b)
	if err != nil {
		return nil, fmt.Errorf("bars %q: %w", title, err)
	}
	return &Chart{Kind: "bars", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// rotation tilts long category labels so they do not overlap.
func rotation(categories []string) float64 {
	for _, c := range categories {
		if len(c) > 12 {
			return 20
		}
	}
	return 0
}

// seriesRows is the table of a chart's numbers: one row per label, the
// label then each series' value at that index.
func seriesRows(labels []string, series []Series) [][]string {
	rows := make([][]string, len(labels))
	for i, l := range labels {
		row := []string{l}
		for _, s := range series {
			row = append(row, format.Figure(s.Y[i]))
		}
		rows[i] = row
	}
	return rows
}
