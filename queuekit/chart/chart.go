// Package chart builds the workshop's charts with go-echarts: a Gantt of a
// simulated night, queue length and busy workers over time, wait
// histograms, worker utilisation, Query versus Scan against table size, and
// sweeps over the worker count with their confidence intervals.
//
// Every builder returns a *Chart that renders two ways:
//
//   - HTML: a self-contained snippet for gonbui.DisplayHTML, built with
//     html/template so that a title or job id cannot break out of its
//     attribute or script (see RenderHTML). It loads ECharts
//     from a local asset (never a CDN), by creating a script element with an
//     onload callback, because a plain <script src> in JupyterLab output
//     loads asynchronously. The asset URL is DefaultAssetURL unless the
//     environment variable QUEUEKIT_ECHARTS_URL names another.
//   - Table: a compact format.Table of the chart's numbers (Markdown or
//     plain text), so a headless run or a plain viewer still shows the result.
//
// chart is presentation: it reads the domain's results (sim.Result,
// montecarlo.Summary through FromSweep, access.Point) and nothing in the
// domain imports it. Metric helpers that are not drawing (per-job waits,
// per-worker busy time, histogram bins) live on sim.Result and in sim.
//
// The HTML is deterministic apart from the element id, which is random so
// that the same chart displayed twice in one notebook does not collide. The
// chart container carries class="queuekit-chart".
//
// Worker ids in a sim.Result start at 0; charts label them "worker 1" to
// "worker c".
package chart

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/nightqueue/workshop/queuekit/format"
)

// DefaultAssetURL is where JupyterLab serves the offline copy of
// echarts.min.js: the server root is notebooks/, and make setup (queuekit setup) puts
// the file at notebooks/assets/echarts.min.js.
const DefaultAssetURL = "/files/assets/echarts.min.js"

// AssetURLEnv is the environment variable that overrides DefaultAssetURL.
const AssetURLEnv = "QUEUEKIT_ECHARTS_URL"

// MarkerClass is the CSS class of every chart container.
const MarkerClass = "queuekit-chart"

// Default chart size in pixels.
const (
	DefaultWidth  = 900
	DefaultHeight = 420
)

// AssetURL returns the URL the charts load ECharts from: QUEUEKIT_ECHARTS_URL
// if set, else DefaultAssetURL.
func AssetURL() string {
	if u := strings.TrimSpace(os.Getenv(AssetURLEnv)); u != "" {
		return u
	}
	return DefaultAssetURL
}

// Chart is a built chart: an ECharts option and the table of its numbers.
type Chart struct {
	Kind   string // what it shows: "gantt", "timeline", "histogram", ...
	Title  string
	Width  int // pixels
	Height int // pixels
	Table  format.Table

	option string // the ECharts option, a JavaScript object literal
}

// Option returns the ECharts option as JavaScript source (an object literal;
// it may contain functions, so it is not always valid JSON).
func (c *Chart) Option() string { return c.option }

var idCounter atomic.Uint64

// NewID returns a fresh element id for a chart of the given kind. Ids are
// random (each notebook cell is a new process, so a counter alone would
// repeat) and, within a process, also carry a counter.
func NewID(kind string) string {
	var b [6]byte
	suffix := ""
	if _, err := rand.Read(b[:]); err == nil {
		suffix = hex.EncodeToString(b[:])
	} else {
		suffix = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return fmt.Sprintf("queuekit-%s-%s-%d", safeID(kind), suffix, idCounter.Add(1))
}

func safeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "chart"
	}
	return b.String()
}

// HTML returns the chart as an HTML snippet with a fresh element id, ready
// for gonbui.DisplayHTML.
func (c *Chart) HTML() string { return c.RenderHTML(NewID(c.Kind)) }

// snippet is the chart's HTML. html/template escapes every value for its
// context: the title in an attribute, the id and the asset URL as JavaScript
// strings. The option is the one value passed as template.JS, because it
// holds functions; optionOf builds it from HTML-escaped JSON, so no string
// in it (a title, a job id) can close the script element. The literal
// element id in echarts.init lets tools (the browser test) find the chart a
// script draws. ECharts is loaded at most once per page: every chart waiting
// for it queues its draw function.
var snippet = template.Must(template.New("chart").Parse(`<div class="{{.Class}}" id="{{.ID}}" data-chart="{{.Kind}}" role="img" aria-label="{{.Title}}" style="width:{{.Width}}px;height:{{.Height}}px;margin:20px 0 8px 0;"></div>
<script type="text/javascript">
(function () {
  var id = {{.ID}}, url = {{.URL}};
  var option = {{.Option}};
  function draw() {
    var el = document.getElementById(id);
    if (!el) { return; }
    var chart = window.echarts.init(document.getElementById({{.ID}}), null, {renderer: "canvas"});
    chart.setOption(option);
  }
  if (window.echarts) { draw(); return; }
  var w = window;
  w.queuekitEchartsQueue = w.queuekitEchartsQueue || [];
  w.queuekitEchartsQueue.push(draw);
  if (w.queuekitEchartsLoading) { return; }
  w.queuekitEchartsLoading = true;
  var s = document.createElement("script");
  s.src = url;
  s.onload = function () {
    var q = w.queuekitEchartsQueue;
    w.queuekitEchartsQueue = [];
    w.queuekitEchartsLoading = false;
    for (var i = 0; i < q.length; i++) { q[i](); }
  };
  s.onerror = function () {
    w.queuekitEchartsLoading = false;
    var el = document.getElementById(id);
    if (el) { el.textContent = "Could not load ECharts from " + url + ": run make setup (it puts echarts.min.js in notebooks/assets) or set QUEUEKIT_ECHARTS_URL."; }
  };
  document.head.appendChild(s);
})();
</script>
`))

// snippetData is what the snippet template fills in.
type snippetData struct {
	Class, ID, Kind, Title, URL string
	Width, Height               int
	Option                      template.JS
}

// RenderHTML returns the chart as an HTML snippet whose container has the
// given element id. The output depends only on the chart, the id and the
// asset URL.
func (c *Chart) RenderHTML(id string) string {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = DefaultWidth
	}
	if h <= 0 {
		h = DefaultHeight
	}
	var b strings.Builder
	err := snippet.Execute(&b, snippetData{Class: MarkerClass, ID: safeID(id), Kind: safeID(c.Kind), Title: c.Title,
		URL: AssetURL(), Width: w, Height: h, Option: template.JS(c.option)})
	if err != nil { // only a broken template fails, and the tests execute it
		return "<p>" + template.HTMLEscapeString("chart: "+err.Error()) + "</p>"
	}
	return b.String()
}

// Markdown returns the chart's title and table in Markdown.
func (c *Chart) Markdown() string {
	var b strings.Builder
	if c.Title != "" {
		fmt.Fprintf(&b, "**%s**\n\n", format.EscapeMarkdown(c.Title))
	}
	b.WriteString(c.Table.Markdown())
	return b.String()
}

// Text returns the chart's title and table as aligned plain text.
func (c *Chart) Text() string {
	var b strings.Builder
	if c.Title != "" {
		b.WriteString(c.Title)
		b.WriteByte('\n')
	}
	b.WriteString(c.Table.String())
	return b.String()
}

// Settings are how a chart is built: each chart function starts from its
// own title and size and applies the caller's Setting functions in order.
type Settings struct {
	// Title is the chart's title (each chart has its own default).
	Title string
	// Width and Height are the chart's size in pixels; 0 or less means
	// DefaultWidth and DefaultHeight.
	Width, Height int
	// Target, when HasTarget, is a horizontal target line (sweep charts:
	// the p95 wait in minutes, or the overflow probability as a fraction);
	// 0 is a target like any other, so HasTarget says whether there is one.
	Target    float64
	HasTarget bool
	// LogX and LogY make an axis logarithmic (Lines and Bars).
	LogX, LogY bool
}

// Setting is one functional option of a chart function: a
// func(*Settings), the SDK's optFns form. It is an alias, so the helpers
// below and a plain func literal mix.
type Setting = func(*Settings)

// Title sets the chart's title.
func Title(s string) Setting { return func(o *Settings) { o.Title = s } }

// Size sets the chart's width and height in pixels.
func Size(width, height int) Setting {
	return func(o *Settings) { o.Width, o.Height = width, height }
}

// Target draws a horizontal target line (sweep charts: the p95 wait in
// minutes, or the overflow probability as a fraction) and adds a column
// saying whether each point meets it.
func Target(v float64) Setting { return func(o *Settings) { o.Target, o.HasTarget = v, true } }

func apply(title string, width, height int, set []Setting) Settings {
	o := Settings{Title: title, Width: width, Height: height}
	for _, s := range set {
		if s != nil {
			s(&o)
		}
	}
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight
	}
	return o
}

// initOpts sets every field: setting Initialization replaces all of
// go-echarts' defaults. The chart id and assets host never reach the option.
func initOpts(o Settings) opts.Initialization {
	return opts.Initialization{
		Width:      strconv.Itoa(o.Width) + "px",
		Height:     strconv.Itoa(o.Height) + "px",
		ChartID:    "queuekit",
		Theme:      "white",
		Renderer:   "canvas",
		PageTitle:  o.Title,
		AssetsHost: "/files/assets/",
	}
}

// echartsChart is what every go-echarts chart type provides.
type echartsChart interface {
	render.Renderer
	JSON() map[string]any
}

// funcString matches a JSON string holding a go-echarts function: go-echarts
// marks function code with __f__ at both ends.
var funcString = regexp.MustCompile(`"__f__(?:[^"\\]|\\.)*?__f__"`)

// scriptBreak matches what would end or confuse a script element in HTML.
var scriptBreak = regexp.MustCompile(`(?i)</script|<!--|<script`)

// optionOf validates a go-echarts chart and returns its option as
// JavaScript: JSON encoded with encoding/json's HTML escaping (so "<", ">"
// and "&" in any string become \u003c, \u003e, \u0026 and cannot end the
// script element), with each function string replaced by its code. The code
// is this package's own constants; it is checked all the same.
func optionOf(c echartsChart) (option string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render chart option: %v", p)
		}
	}()
	_ = c.RenderSnippet() // runs the chart's validation (axes, series defaults)
	raw, err := json.Marshal(c.JSON())
	if err != nil {
		return "", fmt.Errorf("render chart option: %w", err)
	}
	var bad error
	opt := funcString.ReplaceAllStringFunc(string(raw), func(lit string) string {
		var code string
		if err := json.Unmarshal([]byte(lit), &code); err != nil {
			bad = fmt.Errorf("render chart option: function %.40s: %w", lit, err)
			return lit
		}
		code = strings.TrimSuffix(strings.TrimPrefix(code, "__f__"), "__f__")
		if scriptBreak.MatchString(code) {
			bad = fmt.Errorf("render chart option: function %.40s contains %q", code, scriptBreak.FindString(code))
		}
		return code
	})
	if bad != nil {
		return "", bad
	}
	if opt == "" || opt == "null" {
		return "", fmt.Errorf("render chart option: empty option")
	}
	return opt, nil
}

// jsStrings writes a JavaScript array of single-quoted strings for code
// embedded in a go-echarts function option. Function code is the one part of
// the option outside the JSON escaping, so quotes, backslashes, line breaks
// and angle brackets (which could end the script element) become "_".
func jsStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\'')
		b.WriteString(strings.Map(func(r rune) rune {
			switch r {
			case '"', '\'', '\\', '\n', '\r', '\u2028', '\u2029', '<', '>':
				return '_'
			}
			return r
		}, s))
		b.WriteByte('\'')
	}
	b.WriteByte(']')
	return b.String()
}
