package chart

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/measure"
)

// Metric selects what QueryVsScan draws.
type Metric int

// The metrics of QueryVsScan.
const (
	ReadCapacity Metric = iota // read units consumed (on demand: read request units)
	Latency                    // milliseconds
	ItemsScanned               // ScannedCount
)

func (m Metric) String() string {
	switch m {
	case ReadCapacity:
		return "read units consumed"
	case Latency:
		return "median latency (ms)"
	case ItemsScanned:
		return "items scanned"
	}
	return "metric " + format.Int(int(m))
}

// values reads the metric of the Query and the Scan of one study point.
func (m Metric) values(p measure.Point) (query, scan float64) {
	switch m {
	case Latency:
		return millis(p.Query.Elapsed), millis(p.Scan.Elapsed)
	case ItemsScanned:
		return float64(p.Query.ScannedCount), float64(p.Scan.ScannedCount)
	}
	return p.Query.ConsumedRCU, p.Scan.ConsumedRCU
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// QueryVsScan draws one metric of Query and Scan against the table size
// (items), one point per measurement of an access.Study.
func QueryVsScan(points []measure.Point, m Metric, set ...Setting) (*Chart, error) {
	if m < ReadCapacity || m > ItemsScanned {
		return nil, fmt.Errorf("query vs scan: unknown %s", m)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("query vs scan %s: no points", m)
	}
	o := apply("Query vs Scan: "+m.String()+" to read one night", 0, 380, set)
	t := format.Table{Headers: []string{"nights", "items", "returned", "query " + m.String(), "scan " + m.String(), "scan / query"}}
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
			ratio = format.Num(s/q) + "×"
		}
		t.Rows = append(t.Rows, []string{format.Int(p.Nights), format.Int(p.Items), format.Int(p.Query.Count), format.Num(q), format.Num(s), ratio})
		qd = append(qd, opts.LineData{Value: []float64{float64(p.Items), round4(q)}})
		sd = append(sd, opts.LineData{Value: []float64{float64(p.Items), round4(s)}})
	}
	l := charts.NewLine()
	l.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: "Query reads one partition; Scan reads the whole table"}),
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
	return &Chart{Kind: "query-vs-scan", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// AccessTable is the study's table: per table size, what each read
// returned, scanned and cost in capacity, time and dollars, and how many
// pages it took.
func AccessTable(points []measure.Point) format.Table {
	t := format.Table{Headers: []string{"nights", "items in table", "returned", "Query scanned", "Scan scanned",
		"Query read units", "Scan read units", "Query ms", "Scan ms", "Query pages", "Scan pages", "Scan $ per million reads"}}
	for _, p := range points {
		t.Rows = append(t.Rows, []string{format.Int(p.Nights), format.Int(p.Items), format.Int(p.Query.Count),
			format.Int(p.Query.ScannedCount), format.Int(p.Scan.ScannedCount),
			format.Num(p.Query.ConsumedRCU), format.Num(p.Scan.ConsumedRCU),
			format.Millis(millis(p.Query.Elapsed)), format.Millis(millis(p.Scan.Elapsed)),
			format.Int(p.Query.Pages), format.Int(p.Scan.Pages), format.Dollars(p.ScanCost() * 1e6)})
	}
	return t
}

// ReadsTable puts reads side by side, one labelled row each: method, items
// returned and scanned, capacity, dollars per million such reads, pages,
// segments and milliseconds.
func ReadsTable(labels []string, reports []measure.AccessReport) format.Table {
	t := format.Table{Headers: []string{"read", "method", "returned", "scanned", "read units", "$ per million reads", "pages", "segments", "ms"}}
	for i, r := range reports {
		label := ""
		if i < len(labels) {
			label = labels[i]
		}
		t.Rows = append(t.Rows, []string{label, r.Method, format.Int(r.Count), format.Int(r.ScannedCount),
			format.Num(r.ConsumedRCU), format.Dollars(measure.ReadCost(r.ConsumedRCU) * 1e6), format.Int(r.Pages),
			format.Int(max(r.Segments, 1)), format.Millis(millis(r.Elapsed))})
	}
	return t
}

// DescribeRead is one line about one read: "Query: returned 10 of 10 items
// scanned, 0.5 read units ($0.0000000625), 1 page, 3.2 ms". Read units are
// what DynamoDB reports consumed: read request units on demand (billed per
// unit), read capacity units (RCU) against a provisioned table.
func DescribeRead(r measure.AccessReport) string {
	pages := "pages"
	if r.Pages == 1 {
		pages = "page"
	}
	seg := ""
	if r.Segments > 1 {
		seg = fmt.Sprintf(", %d segments", r.Segments)
	}
	return fmt.Sprintf("%s: returned %d of %d items scanned, %s read units (%s), %d %s%s, %s ms",
		r.Method, r.Count, r.ScannedCount, format.Num(r.ConsumedRCU), format.Dollars(measure.ReadCost(r.ConsumedRCU)),
		r.Pages, pages, seg, format.Millis(millis(r.Elapsed)))
}

// NightReadsTable compares the measured reads of access.NightReads: requests,
// items returned and read (scanned), read units, dollars per million such
// reads on demand, and the bytes that came back.
func NightReadsTable(reads []measure.Read) format.Table {
	t := format.Table{Headers: []string{"read", "requests", "returned", "read (scanned)", "read units", "$ per million", "response bytes"}}
	for _, r := range reads {
		t.Rows = append(t.Rows, []string{r.Label, format.Int(r.Requests), format.Int(r.Report.Count),
			format.Int(r.Report.ScannedCount), format.Num(r.Report.ConsumedRCU),
			format.Dollars(measure.ReadCost(r.Report.ConsumedRCU) * 1e6), strconv.FormatInt(r.ResponseBytes, 10)})
	}
	return t
}

// PagesTable lists the pages of one read: items returned and scanned, read
// units, and whether DynamoDB said there was a next page (LastEvaluatedKey).
func PagesTable(r measure.AccessReport) format.Table {
	t := format.Table{Headers: []string{"page", "returned", "scanned", "read units", "next page?"}}
	for i, p := range r.PerPage {
		more := "no"
		if p.More {
			more = "yes"
		}
		t.Rows = append(t.Rows, []string{format.Int(i + 1), format.Int(p.Count), format.Int(p.ScannedCount), format.Num(p.ConsumedRCU), more})
	}
	return t
}

// WritesTable compares seeding reports (catalog.Seed against
// catalog.PutEach, or a table with and without an index): items, requests,
// write units (of which on indexes), dollars on demand, and time.
func WritesTable(labels []string, reps []measure.SeedReport) format.Table {
	t := format.Table{Headers: []string{"write", "items", "requests", "write units", "of which indexes", "cost on demand", "ms"}}
	for i, r := range reps {
		label := ""
		if i < len(labels) {
			label = labels[i]
		}
		t.Rows = append(t.Rows, []string{label, format.Int(r.Items), format.Int(r.Requests), format.Num(r.WriteUnits),
			format.Num(r.IndexWriteUnits), format.Dollars(r.Cost()), format.Millis(millis(r.Elapsed))})
	}
	return t
}

// spreadCells are a read's wall times as three cells: the fastest, the
// median and the p90 of its samples, in milliseconds (measure.Spread).
func spreadCells(r measure.AccessReport) []string {
	s := r.Spread()
	return []string{format.Millis(millis(s.Min)), format.Millis(millis(s.Median)), format.Millis(millis(s.P90))}
}

// LatencyTable shows each study point's wall times as the noisy figures
// they are: per table size, the fastest, median and p90 of the Query's and
// the Scan's timed reads (made in interleaved rounds, access.Study), and how
// many rounds there were.
func LatencyTable(points []measure.Point) format.Table {
	t := format.Table{Headers: []string{"nights", "rounds", "Query min ms", "Query median ms", "Query p90 ms",
		"Scan min ms", "Scan median ms", "Scan p90 ms"}}
	for _, p := range points {
		row := []string{format.Int(p.Nights), format.Int(p.Query.Spread().N)}
		row = append(row, spreadCells(p.Query)...)
		t.Rows = append(t.Rows, append(row, spreadCells(p.Scan)...))
	}
	return t
}

// SpreadTable puts repeated reads side by side, one labelled row each: read
// units and pages (the same on every repeat) beside the fastest, median and
// p90 wall time of the repeats.
func SpreadTable(labels []string, reports []measure.AccessReport) format.Table {
	t := format.Table{Headers: []string{"read", "read units", "pages", "segments", "repeats", "min ms", "median ms", "p90 ms"}}
	for i, r := range reports {
		label := ""
		if i < len(labels) {
			label = labels[i]
		}
		row := []string{label, format.Num(r.ConsumedRCU), format.Int(r.Pages), format.Int(max(r.Segments, 1)), format.Int(r.Spread().N)}
		t.Rows = append(t.Rows, append(row, spreadCells(r)...))
	}
	return t
}

// LatencyVerdict is one sentence about a study point that holds for
// whatever the run measured: whether every timed Scan was slower than every
// timed Query (the slowest Query against the fastest Scan), or their ranges
// overlap and this run cannot order them.
func LatencyVerdict(p measure.Point) string {
	q, s := p.Query.Spread(), p.Scan.Spread()
	slowQ := slices.Max(append([]time.Duration{p.Query.Elapsed}, p.Query.Samples...))
	if s.Min > slowQ {
		return fmt.Sprintf("On the %s-night table every one of the %d Scans was slower than every Query: the slowest Query took %s ms, the fastest Scan %s ms (%s× as long).",
			format.Int(p.Nights), s.N, format.Millis(millis(slowQ)), format.Millis(millis(s.Min)), format.Num(float64(s.Min)/float64(max(slowQ, 1))))
	}
	return fmt.Sprintf("On the %s-night table the Query's and the Scan's times overlap (slowest of %d Queries %s ms, fastest Scan %s ms): this run cannot order them.",
		format.Int(p.Nights), q.N, format.Millis(millis(slowQ)), format.Millis(millis(s.Min)))
}
