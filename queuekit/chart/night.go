package chart

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/sim"
)

// Colours shared by the charts.
const (
	colorExclusive = "#c0392b"
	colorCutoff    = "#d35400"
	colorQuery     = "#2e86c1"
	colorScan      = "#c0392b"
	colorMain      = "#2e86c1"
	colorTarget    = "#27ae60"
)

// classColors colour ordinary jobs by workload class.
var classColors = map[string]string{
	queuekit.ClassETL:              "#5b8ff9",
	queuekit.ClassRefresh:          "#5ad8a6",
	queuekit.ClassBackfill:         "#f6bd16",
	queuekit.ClassIndexMaintenance: "#9270ca",
}

func workerLabel(id int) string { return "worker " + strconv.Itoa(id+1) }

func workerList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id + 1)
	}
	return strings.Join(s, ",")
}

func cutoffMarkLine(cutoff float64) []charts.SeriesOpts {
	return []charts.SeriesOpts{
		charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{
			Name: "cutoff " + format.Num(cutoff) + " min", XAxis: cutoff}),
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
			Symbol:    []string{"none", "none"},
			Label:     &opts.Label{Show: opts.Bool(true), Formatter: "cutoff", Color: colorCutoff},
			LineStyle: &opts.LineStyle{Color: colorCutoff, Width: 2, Type: "dashed"},
		}),
	}
}

// ganttRenderItem draws one job: a bar from start to finish over worker rows
// lo..hi (an exclusive job covers every row), labelled with its short id.
func ganttRenderItem(labels []string, exclusive bool) string {
	lj := jsStrings(labels)
	border := "0.5"
	if exclusive {
		border = "2"
	}
	return `function (params, api) {
  var labels = ` + lj + `;
  var lo = api.value(0), hi = api.value(1);
  var a = api.coord([api.value(2), lo]), b = api.coord([api.value(3), hi]);
  var band = api.size([0, 1])[1] * 0.7;
  var top = Math.min(a[1], b[1]) - band / 2;
  var rect = echarts.graphic.clipRectByRect(
    {x: a[0], y: top, width: Math.max(b[0] - a[0], 1), height: Math.abs(b[1] - a[1]) + band},
    {x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height});
  if (!rect) { return; }
  return {type: 'rect', shape: rect,
    style: {fill: api.visual('color'), stroke: '#333', lineWidth: ` + border + `},
    textContent: {style: {text: labels[params.dataIndex], fill: '#111', fontSize: 11, overflow: 'truncate', width: Math.max(rect.width - 6, 0)}},
    textConfig: {position: 'inside'}};
}`
}

// Gantt draws the night per worker: one row per worker, one bar per job from
// its start to its finish. An exclusive job is a single red bar spanning all
// worker rows, labelled "EXCL"; ordinary jobs are coloured by workload
// class. A dashed vertical line marks the cutoff.
func Gantt(r sim.Result, set ...Setting) (*Chart, error) {
	if len(r.Schedule) == 0 {
		if r.Jobs > 0 {
			return nil, fmt.Errorf("gantt: %w", sim.ErrNoTrace)
		}
		return nil, errors.New("gantt: the result has no jobs")
	}
	if r.Workers < 1 {
		return nil, fmt.Errorf("gantt: result has %d workers, want at least 1", r.Workers)
	}
	o := apply(fmt.Sprintf("Night per worker, c = %d (%s)", r.Workers, policyName(r.Policy)),
		DefaultWidth, 140+40*r.Workers, set)

	var ordinary, exclusive []opts.CustomData
	var ordLabels, exLabels []string
	end := math.Max(r.CutoffMinute, r.DrainedMinute)
	t := format.Table{Headers: []string{"job", "class", "priority", "exclusive", "workers", "arrival", "start", "finish", "wait"}}
	for _, s := range r.Schedule {
		if len(s.Workers) == 0 {
			return nil, fmt.Errorf("gantt: job %s holds no worker", s.ID)
		}
		lo, hi := s.Workers[0], s.Workers[0]
		for _, w := range s.Workers {
			if w < 0 || w >= r.Workers {
				return nil, fmt.Errorf("gantt: job %s on worker id %d, outside 0..%d", s.ID, w, r.Workers-1)
			}
			lo, hi = min(lo, w), max(hi, w)
		}
		if s.Exclusive && hi-lo+1 != len(s.Workers) {
			return nil, fmt.Errorf("gantt: exclusive job %s holds non-adjacent workers %v", s.ID, s.Workers)
		}
		end = math.Max(end, s.Finish)
		name := fmt.Sprintf("%s %s, %s–%s min", s.ID, s.Class, format.Num(s.Start), format.Num(s.Finish))
		d := opts.CustomData{Name: name, Value: []float64{float64(lo), float64(hi), s.Start, s.Finish}}
		if s.Exclusive {
			d.ItemStyle = &opts.ItemStyle{Color: colorExclusive}
			exclusive = append(exclusive, d)
			exLabels = append(exLabels, "EXCL "+shortID(s.ID)+" "+s.Class)
		} else {
			c, ok := classColors[s.Class]
			if !ok {
				c = colorMain
			}
			d.ItemStyle = &opts.ItemStyle{Color: c}
			ordinary = append(ordinary, d)
			ordLabels = append(ordLabels, shortID(s.ID)+" "+s.Class)
		}
		ex := "no"
		if s.Exclusive {
			ex = "yes"
		}
		t.Rows = append(t.Rows, []string{s.ID, s.Class, strconv.Itoa(s.Priority), ex, workerList(s.Workers),
			format.Num(s.Arrival), format.Num(s.Start), format.Num(s.Finish), format.Num(s.Wait)})
	}

	rows := make([]string, r.Workers)
	for i := range rows {
		rows[i] = workerLabel(i)
	}
	c := charts.NewCustom()
	c.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: fmt.Sprintf("cutoff at minute %s; red bars hold the exclusive lock on all workers", format.Num(r.CutoffMinute))}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: "{b}"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "90", Right: "40", Top: "70", Bottom: "60"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "minutes from window start", NameLocation: "middle", NameGap: 28,
			Min: 0, Max: math.Ceil(end/10)*10 + 10}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: rows, Inverse: opts.Bool(true)}),
	)
	series := func(name string, data []opts.CustomData, labels []string, excl bool, extra ...charts.SeriesOpts) {
		so := append([]charts.SeriesOpts{
			charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.RenderItem = opts.FuncOpts(ganttRenderItem(labels, excl))
			}),
			charts.WithEncodeOpts(opts.Encode{X: []int{2, 3}, Y: []int{0, 1}}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: map[bool]string{true: colorExclusive, false: classColors[queuekit.ClassETL]}[excl]}),
		}, extra...)
		c.AddSeries(name, data, so...)
	}
	series("ordinary jobs", ordinary, ordLabels, false, cutoffMarkLine(r.CutoffMinute)...)
	if len(exclusive) > 0 {
		series("exclusive lock (all workers)", exclusive, exLabels, true)
	}
	opt, err := optionOf(c)
	if err != nil {
		return nil, fmt.Errorf("gantt: %w", err)
	}
	return &Chart{Kind: "gantt", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// shortID keeps the sequence part of a job id (JOB-20260513-003 -> 003),
// which fits on a bar; the tooltip and table carry the full id.
func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && i < len(id)-1 {
		return id[i+1:]
	}
	return id
}

func policyName(p sim.Policy) string {
	if p == "" {
		return string(sim.Barrier)
	}
	return string(p)
}

// stepPoint is one row of the timeline table.
type stepPoint struct {
	t           float64
	queue, busy int
}

// mergeSteps joins two step series on their change minutes, keeping the
// last value at each minute.
func mergeSteps(q, b []sim.Step) []stepPoint {
	times := map[float64]bool{}
	for _, s := range q {
		times[s.T] = true
	}
	for _, s := range b {
		times[s.T] = true
	}
	ts := make([]float64, 0, len(times))
	for t := range times {
		ts = append(ts, t)
	}
	sort.Float64s(ts)
	at := func(steps []sim.Step, t float64) int {
		v := 0
		for _, s := range steps {
			if s.T > t {
				break
			}
			v = s.N
		}
		return v
	}
	out := make([]stepPoint, 0, len(ts))
	for _, t := range ts {
		p := stepPoint{t: t, queue: at(q, t), busy: at(b, t)}
		if n := len(out); n > 0 && out[n-1].queue == p.queue && out[n-1].busy == p.busy {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Timeline draws the number of waiting jobs and of busy workers over the
// night as step lines, with the cutoff marked and the worker count c as a
// ceiling for the busy line.
func Timeline(r sim.Result, set ...Setting) (*Chart, error) {
	if len(r.QueueLength) == 0 && len(r.BusyWorkers) == 0 {
		if r.Jobs > 0 {
			return nil, fmt.Errorf("timeline: %w", sim.ErrNoTrace)
		}
		return nil, errors.New("timeline: the result has no jobs")
	}
	o := apply(fmt.Sprintf("Queue length and busy workers, c = %d (%s)", r.Workers, policyName(r.Policy)), 0, 0, set)
	pts := mergeSteps(r.QueueLength, r.BusyWorkers)
	end := math.Max(r.CutoffMinute, r.DrainedMinute)
	if n := len(pts); n > 0 {
		end = math.Max(end, pts[n-1].t)
	}
	var qd, bd []opts.LineData
	t := format.Table{Headers: []string{"minute", "waiting jobs", "busy workers"}}
	for _, p := range pts {
		qd = append(qd, opts.LineData{Value: []float64{p.t, float64(p.queue)}})
		bd = append(bd, opts.LineData{Value: []float64{p.t, float64(p.busy)}})
		t.Rows = append(t.Rows, []string{format.Num(p.t), strconv.Itoa(p.queue), strconv.Itoa(p.busy)})
	}
	if n := len(pts); n > 0 && pts[n-1].t < end {
		// Extend the last step to the end of the drawing.
		qd = append(qd, opts.LineData{Value: []float64{end, float64(pts[n-1].queue)}})
		bd = append(bd, opts.LineData{Value: []float64{end, float64(pts[n-1].busy)}})
	}
	l := charts.NewLine()
	l.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: fmt.Sprintf("cutoff at minute %s; max queue %d, utilisation %s", format.Num(r.CutoffMinute), r.MaxQueueLength, format.Percent(r.Utilization))}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "40", Top: "70", Bottom: "60"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "minutes from window start", NameLocation: "middle", NameGap: 28,
			Min: 0, Max: math.Ceil(end/10)*10 + 10}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "count", MinInterval: 1}),
	)
	step := charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)})
	l.AddSeries("waiting jobs", qd, append([]charts.SeriesOpts{step,
		charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: colorScan}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorScan})}, cutoffMarkLine(r.CutoffMinute)...)...)
	l.AddSeries("busy workers", bd, step,
		charts.WithLineStyleOpts(opts.LineStyle{Width: 2, Color: colorQuery}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorQuery}),
		charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.15), Color: colorQuery}),
		charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: "c = " + strconv.Itoa(r.Workers), YAxis: r.Workers}),
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			Label:     &opts.Label{Show: opts.Bool(true), Formatter: types.FuncStr("c = " + strconv.Itoa(r.Workers))},
			LineStyle: &opts.LineStyle{Color: "#888", Type: "dotted"}}),
	)
	opt, err := optionOf(l)
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	return &Chart{Kind: "timeline", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

// WorkerUtilization draws each worker's utilisation inside the window (busy
// minutes before the cutoff over the window length) as bars, with the pool's
// overall utilisation as a line.
func WorkerUtilization(r sim.Result, set ...Setting) (*Chart, error) {
	if r.CutoffMinute <= 0 {
		return nil, fmt.Errorf("worker utilization: cutoff minute %s, want > 0", format.Num(r.CutoffMinute))
	}
	busy, err := r.WorkerBusy()
	if err != nil {
		return nil, fmt.Errorf("worker utilization: %w", err)
	}
	if len(busy) == 0 {
		return nil, errors.New("worker utilization: the result has no workers")
	}
	o := apply(fmt.Sprintf("Utilisation per worker inside the window, c = %d (%s)", r.Workers, policyName(r.Policy)), 0, 360, set)
	t := format.Table{Headers: []string{"worker", "busy minutes", "utilisation"}}
	names := make([]string, len(busy))
	data := make([]opts.BarData, len(busy))
	total := 0.0
	for i, b := range busy {
		u := b / r.CutoffMinute
		total += b
		names[i] = workerLabel(i)
		data[i] = opts.BarData{Value: round4(100 * u)}
		t.Rows = append(t.Rows, []string{names[i], format.Num(b), format.Percent(u)})
	}
	overall := total / (r.CutoffMinute * float64(len(busy)))
	t.Rows = append(t.Rows, []string{"all", format.Num(total), format.Percent(overall)})
	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithInitializationOpts(initOpts(o)),
		charts.WithTitleOpts(opts.Title{Title: o.Title, Subtitle: "overall " + format.Percent(overall)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "40", Top: "70", Bottom: "40"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "% of window", Min: 0, Max: 100}),
	)
	bar.SetXAxis(names)
	bar.AddSeries("utilisation %", data,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorMain}),
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "top", Formatter: "{c}%"}),
		charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: "overall", YAxis: round4(100 * overall)}),
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			Label:     &opts.Label{Show: opts.Bool(true), Formatter: types.FuncStr("overall " + format.Percent(overall))},
			LineStyle: &opts.LineStyle{Color: colorCutoff, Type: "dashed"}}),
	)
	opt, err := optionOf(bar)
	if err != nil {
		return nil, fmt.Errorf("worker utilization: %w", err)
	}
	return &Chart{Kind: "utilization", Title: o.Title, Width: o.Width, Height: o.Height, Table: t, option: opt}, nil
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
