// Package chart builds the workshop's charts with go-echarts: a Gantt of a
// simulated night, queue length and busy workers over time, wait
// histograms, worker utilisation, Query versus Scan against table size, and
// sweeps over the worker count with their confidence intervals.
//
// Every builder returns a *Chart that renders two ways:
//
//   - HTML: a self-contained snippet for gonbui.DisplayHTML. It loads ECharts
//     from a local asset (never a CDN), by creating a script element with an
//     onload callback, because a plain <script src> in JupyterLab output
//     loads asynchronously. The asset URL is DefaultAssetURL unless the
//     environment variable QUEUEKIT_ECHARTS_URL names another.
//   - Table: a compact table of the chart's numbers (Markdown or plain text),
//     so a headless run or a plain viewer still shows the result.
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
	"html"
	"html/template"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"
)

// DefaultAssetURL is where JupyterLab serves the offline copy of
// echarts.min.js: the server root is notebooks/, and scripts/setup.sh puts
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
	Table  Table

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

// RenderHTML returns the chart as an HTML snippet whose container has the
// given element id. The output depends only on the chart, the id and the
// asset URL.
func (c *Chart) RenderHTML(id string) string {
	id = safeID(id)
	w, h := c.Width, c.Height
	if w <= 0 {
		w = DefaultWidth
	}
	if h <= 0 {
		h = DefaultHeight
	}
	idJS, _ := json.Marshal(id)
	urlJS, _ := json.Marshal(AssetURL())
	var b strings.Builder
	fmt.Fprintf(&b, "<div class=\"%s\" id=\"%s\" data-chart=\"%s\" role=\"img\" aria-label=\"%s\" style=\"width:%dpx;height:%dpx;\"></div>\n",
		MarkerClass, id, safeID(c.Kind), html.EscapeString(c.Title), w, h)
	b.WriteString("<script type=\"text/javascript\">\n(function () {\n")
	fmt.Fprintf(&b, "  var id = %s, url = %s;\n", idJS, urlJS)
	b.WriteString("  var option = ")
	b.WriteString(c.option)
	b.WriteString(";\n")
	// The literal element id in echarts.init lets tools (the browser test)
	// find the chart a script draws.
	b.WriteString(strings.Replace(loaderJS, "echarts.init(el,", "echarts.init(document.getElementById("+string(idJS)+"),", 1))
	b.WriteString("})();\n</script>\n")
	return b.String()
}

// loaderJS draws the chart once ECharts is there, loading the asset at most
// once per page: every chart waiting for it queues its draw function.
const loaderJS = `  function draw() {
    var el = document.getElementById(id);
    if (!el) { return; }
    var chart = window.echarts.init(el, null, {renderer: "canvas"});
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
    if (el) { el.textContent = "Could not load ECharts from " + url + ": run scripts/setup.sh (it puts echarts.min.js in notebooks/assets) or set QUEUEKIT_ECHARTS_URL."; }
  };
  document.head.appendChild(s);
`

// Markdown returns the chart's title and table in Markdown.
func (c *Chart) Markdown() string {
	var b strings.Builder
	if c.Title != "" {
		fmt.Fprintf(&b, "**%s**\n\n", escapeMarkdown(c.Title))
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

// Setting changes how a chart is built.
type Setting func(*settings)

type settings struct {
	title         string
	width, height int
	target        float64
	hasTarget     bool
	logX, logY    bool
}

// Title sets the chart's title.
func Title(s string) Setting { return func(o *settings) { o.title = s } }

// Size sets the chart's width and height in pixels.
func Size(width, height int) Setting {
	return func(o *settings) { o.width, o.height = width, height }
}

// Target draws a horizontal target line (sweep charts: the p95 wait in
// minutes, or the overflow probability as a fraction) and adds a column
// saying whether each point meets it.
func Target(v float64) Setting { return func(o *settings) { o.target, o.hasTarget = v, true } }

func apply(title string, width, height int, set []Setting) settings {
	o := settings{title: title, width: width, height: height}
	for _, s := range set {
		if s != nil {
			s(&o)
		}
	}
	if o.width <= 0 {
		o.width = DefaultWidth
	}
	if o.height <= 0 {
		o.height = DefaultHeight
	}
	return o
}

// initOpts sets every field: setting Initialization replaces all of
// go-echarts' defaults. The chart id and assets host never reach the option.
func initOpts(o settings) opts.Initialization {
	return opts.Initialization{
		Width:      strconv.Itoa(o.width) + "px",
		Height:     strconv.Itoa(o.height) + "px",
		ChartID:    "queuekit",
		Theme:      "white",
		Renderer:   "canvas",
		PageTitle:  o.title,
		AssetsHost: "/files/assets/",
	}
}

// echartsChart is what every go-echarts chart type provides.
type echartsChart interface {
	render.Renderer
	JSONNotEscaped() template.HTML
}

// funcMarker is how go-echarts marks JavaScript functions inside its JSON.
var funcMarker = regexp.MustCompile(`(__f__")|("__f__)|(__f__)`)

// optionOf validates a go-echarts chart and returns its option. It does not
// use RenderSnippet's Option: in v2.7.2 that one strips the function markers
// before unescaping the HTML, which leaves every function quoted as a string.
func optionOf(c echartsChart) (option string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("render chart option: %v", p)
		}
	}()
	_ = c.RenderSnippet() // runs the chart's validation (axes, series defaults)
	opt := strings.TrimSpace(funcMarker.ReplaceAllString(string(c.JSONNotEscaped()), ""))
	if opt == "" {
		return "", fmt.Errorf("render chart option: empty option")
	}
	return opt, nil
}

// jsStrings writes a JavaScript array of single-quoted strings for code
// embedded in a go-echarts function option. That code passes through a JSON
// string encoding, so it must contain no double quote or backslash: such
// characters (and quotes, newlines) become "_".
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
