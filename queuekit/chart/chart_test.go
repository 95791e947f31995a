package chart_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/sim"
)

func run(t *testing.T, date string, workers int, policy sim.Policy) sim.Result {
	t.Helper()
	n, err := queuekit.SampleNight(date)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(n, sim.Config{Workers: workers, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var sweep = []chart.SweepPoint{
	{Workers: 2, P95Wait: 95.5, P95Low: 90, P95High: 101.25, Overflow: 0.62, OverflowLow: 0.58, OverflowHigh: 0.66, Utilization: 0.93},
	{Workers: 3, P95Wait: 40, P95Low: 36.5, P95High: 43.5, Overflow: 0.08, OverflowLow: 0.06, OverflowHigh: 0.11, Utilization: 0.71},
	{Workers: 4, P95Wait: 20, P95Low: 18, P95High: 22, Overflow: 0.01, OverflowLow: 0.004, OverflowHigh: 0.02, Utilization: 0.55},
}

// point is one access study measurement: a table of items items, one night
// of 10 read by Query (0.5 RCU) and by Scan.
func point(nights, items int, scanRCU float64, queryMS, scanMS float64) access.Point {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return access.Point{Nights: nights, Items: items, Date: "2025-05-13",
		Query: catalog.AccessReport{Method: "Query", Count: 10, ScannedCount: 10, ConsumedRCU: 0.5, Pages: 1, Segments: 1, Elapsed: ms(queryMS)},
		Scan:  catalog.AccessReport{Method: "Scan", Count: 10, ScannedCount: items, ConsumedRCU: scanRCU, Pages: 1, Segments: 1, Elapsed: ms(scanMS)}}
}

var accessPoints = []access.Point{point(1, 10, 0.5, 3.2, 3.5), point(30, 300, 13.5, 3.1, 21.75), point(365, 3650, 160, 3.3, 140)}

// allCharts builds every kind of chart from the reference scenarios.
func allCharts(t *testing.T) map[string]*chart.Chart {
	t.Helper()
	stable := run(t, "2026-05-13", 3, sim.Barrier)
	over := run(t, "2026-05-14", 2, sim.Backfill)
	out := map[string]*chart.Chart{}
	add := func(name string, c *chart.Chart, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = c
	}
	c, err := chart.Gantt(stable)
	add("gantt-stable", c, err)
	c, err = chart.Gantt(over)
	add("gantt-overloaded", c, err)
	c, err = chart.Timeline(over)
	add("timeline", c, err)
	c, err = chart.WaitHistogram(over, 0)
	add("waits", c, err)
	c, err = chart.Histogram([]float64{31, 44, 38.5, 52, 47}, 5, "p95 wait (minutes)")
	add("p95-histogram", c, err)
	c, err = chart.WorkerUtilization(stable)
	add("utilization", c, err)
	c, err = chart.SweepP95(sweep, chart.Target(30))
	add("sweep-p95", c, err)
	c, err = chart.SweepOverflow(sweep, chart.Target(0.05))
	add("sweep-overflow", c, err)
	c, err = chart.SweepUtilization(sweep)
	add("sweep-utilization", c, err)
	for _, m := range []chart.Metric{chart.ReadCapacity, chart.Latency, chart.ItemsScanned} {
		c, err = chart.QueryVsScan(accessPoints, m)
		add("access-"+m.String(), c, err)
	}
	return out
}

func cell(t *testing.T, tb format.Table, row int, header string) string {
	t.Helper()
	for i, h := range tb.Headers {
		if h == header {
			return tb.Rows[row][i]
		}
	}
	t.Fatalf("no column %q in %v", header, tb.Headers)
	return ""
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	s = strings.ReplaceAll(strings.TrimSuffix(strings.TrimSuffix(s, "%"), "×"), ",", "") // cells group thousands
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("cell %q is not a number: %v", s, err)
	}
	return v
}

func TestGanttHasOneRowPerJobOnItsWorkers(t *testing.T) {
	for _, tc := range []struct {
		date    string
		workers int
	}{{"2026-05-13", 3}, {"2026-05-14", 2}} {
		r := run(t, tc.date, tc.workers, sim.Barrier)
		c, err := chart.Gantt(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Table.Rows) != r.Jobs {
			t.Fatalf("%s: %d table rows, want one per job (%d)", tc.date, len(c.Table.Rows), r.Jobs)
		}
		for i, s := range r.Schedule {
			if got := cell(t, c.Table, i, "job"); got != s.ID {
				t.Errorf("row %d job %q, want %q", i, got, s.ID)
			}
			workers := cell(t, c.Table, i, "workers")
			if s.Exclusive {
				all := make([]string, tc.workers)
				for w := range all {
					all[w] = strconv.Itoa(w + 1)
				}
				if workers != strings.Join(all, ",") || cell(t, c.Table, i, "exclusive") != "yes" {
					t.Errorf("exclusive %s on workers %q, want all of them", s.ID, workers)
				}
			} else if workers != strconv.Itoa(s.Workers[0]+1) {
				t.Errorf("%s on workers %q, want %d", s.ID, workers, s.Workers[0]+1)
			}
			for _, col := range []struct {
				h string
				v float64
			}{{"start", s.Start}, {"finish", s.Finish}, {"wait", s.Wait}, {"arrival", s.Arrival}} {
				if got := num(t, cell(t, c.Table, i, col.h)); math.Abs(got-col.v) > 0.005 {
					t.Errorf("%s %s = %v, want %v", s.ID, col.h, got, col.v)
				}
			}
		}
		// One bar per job: each job's bar value [lo, hi, start, finish] is in the option.
		for _, s := range r.Schedule {
			lo, hi := s.Workers[0], s.Workers[len(s.Workers)-1]
			if s.Exclusive && (lo != 0 || hi != tc.workers-1) {
				t.Errorf("exclusive %s holds workers %v, want 0..%d", s.ID, s.Workers, tc.workers-1)
			}
			bar := "[" + strconv.Itoa(lo) + "," + strconv.Itoa(hi) + "," + format.Num(s.Start) + "," + format.Num(s.Finish) + "]"
			if n := strings.Count(c.Option(), bar); n < 1 {
				t.Errorf("%s: no bar %s in option", s.ID, bar)
			}
		}
		if got := strings.Count(c.Option(), `"name":"JOB-`); got != r.Jobs {
			t.Errorf("%d bars in the option, want %d", got, r.Jobs)
		}
		if !strings.Contains(c.Option(), "exclusive lock (all workers)") || !strings.Contains(c.Option(), "EXCL 00") {
			t.Error("exclusive jobs are not a separate, labelled series")
		}
		assertCutoff(t, c, r.CutoffMinute)
	}
}

var cutoffRE = regexp.MustCompile(`"markLine":\{"data":\[\{"name":"cutoff [^"]*","xAxis":([0-9.]+)\}`)

func assertCutoff(t *testing.T, c *chart.Chart, want float64) {
	t.Helper()
	m := cutoffRE.FindStringSubmatch(c.Option())
	if m == nil {
		t.Fatalf("%s: no cutoff markLine in %s", c.Kind, c.Option())
	}
	if got, _ := strconv.ParseFloat(m[1], 64); got != want {
		t.Errorf("%s: cutoff line at %v, want %v", c.Kind, got, want)
	}
}

func TestTimelineTableFollowsTheStepSeries(t *testing.T) {
	r := run(t, "2026-05-14", 2, sim.Barrier)
	c, err := chart.Timeline(r)
	if err != nil {
		t.Fatal(err)
	}
	assertCutoff(t, c, 240)
	if !strings.Contains(c.Option(), `"step":"end"`) {
		t.Error("lines are not steps")
	}
	at := func(steps []sim.Step, m float64) int {
		v := 0
		for _, s := range steps {
			if s.T <= m {
				v = s.N
			}
		}
		return v
	}
	if len(c.Table.Rows) < 3 {
		t.Fatalf("only %d rows", len(c.Table.Rows))
	}
	for i := range c.Table.Rows {
		m := num(t, cell(t, c.Table, i, "minute"))
		if got, want := int(num(t, cell(t, c.Table, i, "waiting jobs"))), at(r.QueueLength, m); got != want {
			t.Errorf("minute %v: %d waiting, want %d", m, got, want)
		}
		if got, want := int(num(t, cell(t, c.Table, i, "busy workers"))), at(r.BusyWorkers, m); got != want {
			t.Errorf("minute %v: %d busy, want %d", m, got, want)
		}
	}
	maxQ := 0
	for i := range c.Table.Rows {
		maxQ = max(maxQ, int(num(t, cell(t, c.Table, i, "waiting jobs"))))
	}
	if maxQ != r.MaxQueueLength {
		t.Errorf("max waiting %d in the table, result says %d", maxQ, r.MaxQueueLength)
	}
}

func TestWorkerUtilizationAveragesToTheResult(t *testing.T) {
	for _, date := range []string{"2026-05-13", "2026-05-14"} {
		r := run(t, date, 3, sim.Barrier)
		busy, err := r.WorkerBusy()
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, b := range busy {
			total += b
		}
		if got := total / (3 * r.CutoffMinute); math.Abs(got-r.Utilization) > 1e-9 {
			t.Errorf("%s: per-worker busy minutes give %v, result %v", date, got, r.Utilization)
		}
		c, err := chart.WorkerUtilization(r)
		if err != nil {
			t.Fatal(err)
		}
		last := len(c.Table.Rows) - 1
		if got := num(t, cell(t, c.Table, last, "utilisation")) / 100; math.Abs(got-r.Utilization) > 0.0005 {
			t.Errorf("%s: overall %v, want %v", date, got, r.Utilization)
		}
	}
}

func TestHistogramCountsEveryValueOnce(t *testing.T) {
	vals := []float64{0, 0, 4.9, 5, 12, 30}
	c, err := chart.Histogram(vals, 5, "wait (minutes)")
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(t, c.Table, 0, "count"); got != "3" {
		t.Errorf("first bin count %s, want 3", got)
	}
	if got := cell(t, c.Table, 0, "share"); got != "50.0%" {
		t.Errorf("first bin share %s, want 50.0%%", got)
	}
	if len(c.Table.Rows) != 7 || cell(t, c.Table, 6, "count") != "1" {
		t.Errorf("bins of 5 up to 30: %d rows, want 7 with the 30 in the last", len(c.Table.Rows))
	}
	if _, err := chart.Histogram(nil, 5, "wait"); err == nil {
		t.Error("no values: no error")
	}
}

func TestSweepTablesEqualTheInputs(t *testing.T) {
	p95, err := chart.SweepP95(sweep, chart.Target(30))
	if err != nil {
		t.Fatal(err)
	}
	ov, err := chart.SweepOverflow(sweep, chart.Target(0.05))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range sweep {
		if got := cell(t, p95.Table, i, "workers"); got != strconv.Itoa(p.Workers) {
			t.Errorf("row %d workers %s", i, got)
		}
		for _, c := range []struct {
			tb   format.Table
			h    string
			want float64
		}{
			{p95.Table, "p95 wait (min)", p.P95Wait}, {p95.Table, "95% low", p.P95Low}, {p95.Table, "95% high", p.P95High},
			{ov.Table, "overflow probability", 100 * p.Overflow}, {ov.Table, "95% low", 100 * p.OverflowLow},
			{ov.Table, "95% high", 100 * p.OverflowHigh},
		} {
			if got := num(t, cell(t, c.tb, i, c.h)); math.Abs(got-c.want) > 0.05 {
				t.Errorf("c=%d %s = %v, want %v", p.Workers, c.h, got, c.want)
			}
		}
	}
	// The target is met only when the whole interval is under it.
	wantP95 := []string{"no", "no", "yes"}
	wantOv := []string{"no", "no", "yes"}
	for i := range sweep {
		if got := p95.Table.Rows[i][4]; got != wantP95[i] {
			t.Errorf("p95 c=%d meets target: %s, want %s", sweep[i].Workers, got, wantP95[i])
		}
		if got := ov.Table.Rows[i][4]; got != wantOv[i] {
			t.Errorf("overflow c=%d meets target: %s, want %s", sweep[i].Workers, got, wantOv[i])
		}
	}
	if !strings.Contains(p95.Option(), `"yAxis":30`) || !strings.Contains(ov.Option(), `"yAxis":5`) {
		t.Error("target lines missing")
	}
	// The x axis is the worker count itself (a value axis), so the bar of
	// c = 2 sits at x = 2 and the line's points are [c, value].
	if !strings.Contains(p95.Option(), "[2,90,101.25]") {
		t.Error("p95 error bar for c=2 missing")
	}
	if !strings.Contains(p95.Option(), `"xAxis":[{"type":"value","name":"workers c"`) || !strings.Contains(p95.Option(), `"position":"insideEndTop"`) {
		t.Errorf("want a value axis for c and the target label inside the plot:\n%s", p95.Option())
	}
	u, err := chart.SweepUtilization(sweep)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Table.Headers) != 2 || strings.Contains(u.Option(), "95% interval") {
		t.Errorf("utilisation without intervals drew them: %v", u.Table.Headers)
	}
	if _, err := chart.SweepP95(nil); err == nil {
		t.Error("empty sweep: no error")
	}
}

func TestQueryVsScanTableEqualsTheInputs(t *testing.T) {
	c, err := chart.QueryVsScan(accessPoints, chart.ReadCapacity)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range accessPoints {
		if got := num(t, cell(t, c.Table, i, "items")); got != float64(p.Items) {
			t.Errorf("row %d items %v", i, got)
		}
		if got := num(t, c.Table.Rows[i][3]); got != p.Query.ConsumedRCU {
			t.Errorf("row %d query RCU %v, want %v", i, got, p.Query.ConsumedRCU)
		}
		if got := num(t, c.Table.Rows[i][4]); got != p.Scan.ConsumedRCU {
			t.Errorf("row %d scan RCU %v, want %v", i, got, p.Scan.ConsumedRCU)
		}
	}
	if got := cell(t, c.Table, 2, "scan / query"); got != "320×" {
		t.Errorf("ratio %s, want 320×", got)
	}
	l, err := chart.QueryVsScan(accessPoints, chart.Latency)
	if err != nil {
		t.Fatal(err)
	}
	if got := num(t, l.Table.Rows[1][4]); got != 21.75 {
		t.Errorf("scan latency %v, want 21.75", got)
	}
	if _, err := chart.QueryVsScan(accessPoints, chart.Metric(9)); err == nil {
		t.Error("unknown metric: no error")
	}
}

func TestNoTraceIsAnError(t *testing.T) {
	n, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(n, sim.Config{Workers: 3, NoTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chart.Gantt(r); err == nil || !strings.Contains(err.Error(), "NoTrace") {
		t.Errorf("Gantt of an untraced result: %v", err)
	}
	if _, err := chart.Timeline(r); err == nil {
		t.Error("Timeline of an untraced result: no error")
	}
}

var urlRE = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+|\bsrc\s*=|\.js\b`)

func TestHTMLLoadsOnlyTheLocalAsset(t *testing.T) {
	t.Setenv(chart.AssetURLEnv, "")
	for name, c := range allCharts(t) {
		h := c.HTML()
		if strings.Contains(strings.ToLower(h), "http") {
			t.Errorf("%s: HTML mentions http: %s", name, h)
		}
		for _, m := range urlRE.FindAllString(h, -1) {
			if m != ".js" && m != "src =" {
				t.Errorf("%s: unexpected URL-like %q", name, m)
			}
		}
		if !strings.Contains(h, `url = "/files/assets/echarts.min.js"`) {
			t.Errorf("%s: does not load the local asset", name)
		}
		if !strings.Contains(h, `class="queuekit-chart"`) {
			t.Errorf("%s: no marker class", name)
		}
		if !strings.Contains(h, "if (window.echarts) { draw(); return; }") || !strings.Contains(h, "s.onload") {
			t.Errorf("%s: does not wait for ECharts to load", name)
		}
	}
}

func TestAssetURLFromEnvironment(t *testing.T) {
	t.Setenv(chart.AssetURLEnv, "http://127.0.0.1:8888/lab/files/assets/echarts.min.js")
	c := allCharts(t)["timeline"]
	h := c.RenderHTML("x")
	if !strings.Contains(h, `url = "http://127.0.0.1:8888/lab/files/assets/echarts.min.js"`) {
		t.Errorf("QUEUEKIT_ECHARTS_URL ignored: %s", h)
	}
	if n := strings.Count(h, "http"); n != 1 {
		t.Errorf("%d http mentions, want only the configured one", n)
	}
}

func TestElementIDsDifferAndOutputIsOtherwiseDeterministic(t *testing.T) {
	a, b := allCharts(t), allCharts(t)
	seen := map[string]bool{}
	idRE := regexp.MustCompile(`id="([^"]+)"`)
	for name := range a {
		h1, h2 := a[name].HTML(), a[name].HTML()
		id1, id2 := idRE.FindStringSubmatch(h1)[1], idRE.FindStringSubmatch(h2)[1]
		if id1 == id2 || seen[id1] || seen[id2] {
			t.Errorf("%s: element id repeats: %s %s", name, id1, id2)
		}
		seen[id1], seen[id2] = true, true
		if strings.ReplaceAll(h1, id1, "ID") != strings.ReplaceAll(h2, id2, "ID") {
			t.Errorf("%s: HTML differs apart from the id", name)
		}
		if a[name].RenderHTML("fixed") != b[name].RenderHTML("fixed") {
			t.Errorf("%s: two builds render differently", name)
		}
		if strings.Count(h1, id1) != 3 {
			t.Errorf("%s: id used %d times, want the div, the script's id and its echarts.init", name, strings.Count(h1, id1))
		}
		if !strings.Contains(h1, `window.echarts.init(document.getElementById("`+id1+`"), null`) {
			t.Errorf("%s: echarts.init does not name the element id", name)
		}
		if !strings.Contains(h1, "width:"+strconv.Itoa(a[name].Width)+"px;height:"+strconv.Itoa(a[name].Height)+"px") {
			t.Errorf("%s: size missing", name)
		}
	}
}

func TestSizeAndTitleSettings(t *testing.T) {
	c, err := chart.SweepP95(sweep, chart.Size(640, 300), chart.Title("Choosing c"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Width != 640 || c.Height != 300 || c.Title != "Choosing c" {
		t.Errorf("got %dx%d %q", c.Width, c.Height, c.Title)
	}
	if !strings.Contains(c.Option(), `"text":"Choosing c"`) {
		t.Error("title not in the option")
	}
	if !strings.HasPrefix(c.Markdown(), "**Choosing c**\n\n| workers |") {
		t.Errorf("markdown: %q", c.Markdown())
	}
}

// echartsAsset returns the ECharts build the notebooks load, installing it
// first when this checkout has none: `npm ci` of tools/echarts (the pinned
// version, package-lock.json), the same package make setup copies to
// notebooks/assets. The test fails, never skips, without node and npm.
func echartsAsset(t *testing.T) (node, asset string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed to draw the charts with the real ECharts: install Node 20 (Debian: apt-get install nodejs npm)")
	}
	pkg, err := filepath.Abs("../../tools/echarts")
	if err != nil {
		t.Fatal(err)
	}
	asset = filepath.Join(pkg, "node_modules", "echarts", "dist", "echarts.min.js")
	if _, err := os.Stat(asset); err == nil {
		return node, asset
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("%s is missing and npm is not installed to fetch it: install npm, or run make setup", asset)
	}
	cmd := exec.Command(npm, "ci", "--prefix", pkg, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(pkg, "..", "..", ".cache", "npm"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci --prefix tools/echarts: %v\n%s", err, out)
	}
	if _, err := os.Stat(asset); err != nil {
		t.Fatalf("npm ci --prefix tools/echarts ran but %s is missing: %v", asset, err)
	}
	return node, asset
}

// TestEChartsDrawsEveryOption renders each option with the real ECharts
// (server-side SVG in Node), so a malformed option or a broken renderItem
// fails here rather than in a browser. It installs the pinned ECharts when
// the checkout has none (echartsAsset).
func TestEChartsDrawsEveryOption(t *testing.T) {
	t.Parallel()
	node, asset := echartsAsset(t)
	var js strings.Builder
	js.WriteString("global.echarts = require(" + strconv.Quote(asset) + ");\nvar out = {};\n")
	charts := allCharts(t)
	for name, c := range charts {
		js.WriteString("try { (function () {\n  var option = " + c.Option() + ";\n")
		js.WriteString("  var ch = echarts.init(null, null, {renderer: 'svg', ssr: true, width: " + strconv.Itoa(c.Width) + ", height: " + strconv.Itoa(c.Height) + "});\n")
		js.WriteString("  ch.setOption(option);\n  out[" + strconv.Quote(name) + "] = ch.renderToSVGString();\n  ch.dispose();\n})(); } catch (e) { out[" + strconv.Quote(name) + "] = 'ERROR ' + e.message; }\n")
	}
	js.WriteString("process.stdout.write(JSON.stringify(out), function () { process.exit(0); });\n")
	dir := t.TempDir()
	if d := os.Getenv("QUEUEKIT_CHART_DEBUG_DIR"); d != "" {
		dir = d
	}
	script := filepath.Join(dir, "draw.js")
	if err := os.WriteFile(script, []byte(js.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script).CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 1500 {
			tail = "..." + tail[len(tail)-1500:]
		}
		t.Fatalf("node: %v\n%s", err, tail)
	}
	s := string(out)
	for name := range charts {
		if !strings.Contains(s, strconv.Quote(name)+":\"<svg") {
			msg := ""
			if i := strings.Index(s, strconv.Quote(name)+":\"ERROR"); i >= 0 {
				msg = s[i:min(len(s), i+300)]
			}
			t.Errorf("%s: ECharts drew no svg: %s", name, msg)
		}
	}
	// The Gantt labels every job, exclusive ones with EXCL.
	for _, want := range []string{"001 etl", "EXCL 003 backfill", "cutoff", "target 5.0%"} {
		if !strings.Contains(s, want) {
			t.Errorf("drawn charts lack %q", want)
		}
	}
}

// A title is data: html/template puts it in the aria-label attribute
// escaped, and the option's JSON escapes "<" and ">", so a title holding
// "</script>" can neither end the script element nor add markup. The HTML
// tokenizer ends a script at the first "</script", so there must be exactly
// one, at the end, and one "<script".
func TestHostileTitleStaysInsideItsContexts(t *testing.T) {
	const hostile = `Night </script><script>alert("x")</script><!-- & " '`
	r := run(t, "2026-05-13", 3, sim.Barrier)
	for _, build := range []func() (*chart.Chart, error){
		func() (*chart.Chart, error) { return chart.Gantt(r, chart.Title(hostile)) },
		func() (*chart.Chart, error) { return chart.SweepP95(sweep, chart.Title(hostile), chart.Target(30)) },
		func() (*chart.Chart, error) {
			return chart.QueryVsScan(accessPoints, chart.Latency, chart.Title(hostile))
		},
	} {
		c, err := build()
		if err != nil {
			t.Fatal(err)
		}
		h := c.RenderHTML("x")
		lower := strings.ToLower(h)
		if n := strings.Count(lower, "</script"); n != 1 || !strings.HasSuffix(h, "</script>\n") {
			t.Errorf("%s: %d closing script tags, want one at the end:\n%s", c.Kind, n, h)
		}
		if n := strings.Count(lower, "<script"); n != 1 {
			t.Errorf("%s: %d script elements, want 1", c.Kind, n)
		}
		if strings.Contains(h, "<!--") || strings.Contains(h, "alert(\"x\")") {
			t.Errorf("%s: the title's markup or code reached the HTML unescaped", c.Kind)
		}
		if want := `aria-label="Night &lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;!-- &amp; &#34; &#39;"`; !strings.Contains(h, want) {
			t.Errorf("%s: the aria-label does not carry the escaped title %s", c.Kind, want)
		}
		if !strings.Contains(c.Option(), `\u003c/script\u003e`) {
			t.Errorf("%s: the option does not escape the title's tags", c.Kind)
		}
	}
}

func TestAccessTablesShowTheReports(t *testing.T) {
	r := catalog.AccessReport{Method: "Scan", Count: 10, ScannedCount: 3639, ConsumedRCU: 99.5, Pages: 1, Segments: 4, Elapsed: 117900 * time.Microsecond}
	got := chart.DescribeRead(r)
	// 99.5 RCU × $0.125 per million = $0.0000124375, three significant digits.
	for _, want := range []string{"Scan: returned 10 of 3639 items scanned", "99.5 read units ($0.0000124)", "1 page,", "4 segments", "117.9 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("DescribeRead = %q, want it to contain %q", got, want)
		}
	}
	// Per million reads: 99.5 × 0.125 = $12.4375 → $12.44.
	md := chart.ReadsTable([]string{"poor key"}, []catalog.AccessReport{r}).Markdown()
	if !strings.Contains(md, `| poor key | Scan | 10 | 3,639 | 99.5 | \\$12.44 | 1 | 4 | 117.9 |`) {
		t.Errorf("ReadsTable:\n%s", md)
	}
	tb := chart.AccessTable(accessPoints)
	if len(tb.Rows) != len(accessPoints) {
		t.Fatalf("%d rows, want %d", len(tb.Rows), len(accessPoints))
	}
	// 160 RCU × 0.125 = $20.00 per million Scans of the year table.
	if got := cell(t, tb, 2, "Scan $ per million reads"); got != "$20.00" {
		t.Errorf("year table Scan cost %s, want $20.00", got)
	}
	if got := cell(t, tb, 2, "Scan scanned"); got != "3,650" {
		t.Errorf("year table Scan scanned %s, want 3,650", got)
	}
}
