package chart

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// AccessPoint is one measurement of reading one night from a table holding
// Nights nights (Items items): the same night read by Query (on the
// partition key) and by Scan (with a filter). Returned is the number of
// items both give back; the Scanned counts are DynamoDB's ScannedCount.
type AccessPoint struct {
	Nights, Items             int
	Returned                  int
	QueryRCU, ScanRCU         float64 // consumed read capacity units
	QueryMillis, ScanMillis   float64 // latency, milliseconds
	QueryScanned, ScanScanned int
}

// Metric selects what QueryVsScan draws.
type Metric int

// The metrics of QueryVsScan.
const (
	ReadCapacity Metric = iota // consumed read capacity units
	Latency                    // milliseconds
	ItemsScanned               // ScannedCount
)

func (m Metric) String() string {
	switch m {
	case ReadCapacity:
		return "read capacity units"
	case Latency:
		return "latency (ms)"
	case ItemsScanned:
		return "items scanned"
	}
	return "metric " + strconv.Itoa(int(m))
}

func (m Metric) values(p AccessPoint) (query, scan float64) {
	switch m {
	case Latency:
		return p.QueryMillis, p.ScanMillis
	case ItemsScanned:
		return float64(p.QueryScanned), float64(p.ScanScanned)
	}
	return p.QueryRCU, p.ScanRCU
}

// QueryVsScan draws one metric of Query and Scan against the table size
// (items), one point per measurement.
func QueryVsScan(points []AccessPoint, m Metric, set ...Setting) (*Chart, error) {
	if m < ReadCapacity || m > ItemsScanned {
		return nil, fmt.Errorf("query vs scan: unknown %s", m)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("query vs scan %s: no points", m)
	}
	o := apply("Query vs Scan: "+m.String()+" to read one night", 0, 380, set)
	t := Table{Headers: []string{"nights", "items", "returned", "query " + m.String(), "scan " + m.String(), "scan / query"}}
	var qd, sd []opts.LineData
	for _, p := range points {
		q, s := m.values(p)
		for _, x := range []float64{q, s} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return nil, fmt.Errorf("query vs scan %s: %d items: value %v, want a finite number >= 0", m, p.Items, x)
			}
		}
		ratio := "–"
		if q > 0 {
			ratio = Num(s/q) + "×"
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Nights), strconv.Itoa(p.Items), strconv.Itoa(p.Returned), Num(q), Num(s), ratio})
		qd = append(qd, opts.LineData{Value: []float64{float64(p.Items), round4(q)}})
		sd = append(sd, opts.LineData{Value: []float64{float64(p.Items), round4(s)}})
	}
	l := charts.NewLine()
	l.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.title, Subtitle: "Query reads one partition; Scan reads the whole table"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "70", Right: "40", Top: "70", Bottom: "60"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "items in the table", NameLocation: "middle", NameGap: 28, Min: 0}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.String(), Min: 0}),
	)
	sym := charts.WithLineChartOpts(opts.LineChart{Symbol: "circle", SymbolSize: 7})
	l.AddSeries("Query", qd, sym,
		charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: colorQuery}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorQuery}))
	l.AddSeries("Scan", sd, sym,
		charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: colorScan}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorScan}))
	opt, err := optionOf(l)
	if err != nil {
		return nil, fmt.Errorf("query vs scan %s: %w", m, err)
	}
	return &Chart{Kind: "query-vs-scan", Title: o.title, Width: o.width, Height: o.height, Table: t, option: opt}, nil
}
