package limits

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a Layer.
type Options struct {
	// Scale is S: every limit (partition, provisioned, warm, quota,
	// on-demand maximum) is divided by it. Default 1.
	Scale float64
	// Now is the clock the buckets and the per-second counters read;
	// default time.Now. Tests pass a clock they move by hand.
	Now func() time.Time
	// Region and Account make the ARNs of ThrottlingReasons; default
	// us-east-1 and 000000000000 (DynamoDB Local's account).
	Region, Account string
	// TransactionHold keeps every TransactWriteItems in flight this long
	// before it is forwarded, widening the window in which another write
	// of its items conflicts (for teaching and tests; default 0).
	TransactionHold time.Duration
	// Transport reaches the target; default a clone of
	// http.DefaultTransport with more idle connections per host.
	Transport http.RoundTripper
}

// Option is one functional option of New and Start: a func(*Options), the SDK's optFns
// form. It is an alias, so the With helpers and a plain func literal mix.
type Option = func(*Options)

// WithScale sets S (limits divided by S).
func WithScale(s float64) Option { return func(o *Options) { o.Scale = s } }

// WithClock sets the clock the layer reads.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// WithTransactionHold keeps each TransactWriteItems in flight for d.
func WithTransactionHold(d time.Duration) Option { return func(o *Options) { o.TransactionHold = d } }

// ConfigError is a bad configuration of the layer (a scale that is not a
// finite number > 0, a target that is not a URL).
type ConfigError struct{ Field, Value, Want string }

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Field, e.Value, e.Want)
}

// Layer is the limits layer: an http.Handler that forwards DynamoDB
// requests to a target (DynamoDB Local) and throttles as AWS would.
type Layer struct {
	opts      Options
	target    *url.URL
	targetURL string
	proxy     *httputil.ReverseProxy
	client    *http.Client

	mu      sync.Mutex
	tables  map[string]*table
	txHeld  map[string]int // item → in-flight TransactWriteItems holding it
	oneHeld map[string]int // item → in-flight single-item writes
	stats   stats
}

// New returns a layer in front of target (a URL such as
// http://127.0.0.1:8000). It contacts nothing: Start does.
func New(target string, opts ...Option) (*Layer, error) {
	o := Options{Scale: 1, Now: time.Now, Region: "us-east-1", Account: "000000000000"}
	for _, f := range opts {
		f(&o)
	}
	if !(o.Scale > 0) || math.IsInf(o.Scale, 0) {
		return nil, &ConfigError{"scale", fmt.Sprint(o.Scale), "must be a finite number > 0 (limits are divided by it)"}
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{"target", fmt.Sprintf("%q", target), "must be a URL such as http://127.0.0.1:8000 (DynamoDB Local's endpoint)"}
	}
	if o.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		t.DisableCompression = true // pass Accept-Encoding as the client sent it (none added)
		// Most requests and answers in one system call each.
		t.WriteBufferSize, t.ReadBufferSize = 64<<10, 64<<10
		o.Transport = t
	}
	l := &Layer{opts: o, target: u, targetURL: u.String(), tables: map[string]*table{}, txHeld: map[string]int{}, oneHeld: map[string]int{}}
	l.client = &http.Client{Transport: o.Transport}
	l.proxy = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.Host = r.In.Host },
		Transport: o.Transport,
		// Nothing answers behind the layer: the client's connection is
		// closed, so the client says "unreachable" as it does when
		// DynamoDB Local itself is down (see ErrorHandler's doc).
		ErrorHandler: closeConnection,
	}
	return l, nil
}

// closeConnection resets the client's connection when the target cannot
// be reached, so that the client's own one-line "unreachable" error
// ("DynamoDB Local at <the layer> is unreachable (connection reset): start
// DynamoDB Local ...") is what it says when nothing answers.
func closeConnection(w http.ResponseWriter, _ *http.Request, _ error) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, which the client reads as "connection reset"
			}
			_ = c.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// Scale returns S.
func (l *Layer) Scale() float64 { return l.opts.Scale }

// Stats returns the per-second counters so far.
func (l *Layer) Stats() []Sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.snapshot()
}

// TableLimits is what the layer enforces on one table or index.
type TableLimits struct {
	Table, Index string
	Mode         string
	Partitions   int
	// Throughput is the warm throughput that sets the partition count
	// (AWS units, not divided by S).
	Throughput Units
	// Provisioned and MaxOnDemand as the table's requests set them
	// (0: none).
	Provisioned, MaxOnDemand Units
	// PartitionLimit is what one partition serves per second, divided by S.
	PartitionLimit Units
}

// Limits describes the table's (or, with index, the GSI's) limits, if the
// layer knows the table.
func (l *Layer) Limits(tableName, index string) (TableLimits, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tables[tableName]
	if t == nil || t.index(index) == nil {
		return TableLimits{}, false
	}
	ix := t.index(index)
	return TableLimits{Table: tableName, Index: index, Mode: ix.mode, Partitions: len(ix.parts),
		Throughput: ix.throughput(l.opts.Scale), Provisioned: ix.prov, MaxOnDemand: ix.maxOD,
		PartitionLimit: Units{PartitionReadUnits / l.opts.Scale, PartitionWriteUnits / l.opts.Scale}}, true
}

const target = "DynamoDB_20120810."

// maxBody bounds a request body the layer reads (DynamoDB's largest
// request, a BatchWriteItem, is 16 MB).
const maxBody = 17 << 20

// ServeHTTP forwards r to the target unless the layer throttles it.
func (l *Layer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), target)
	if r.Method != http.MethodPost || !ok || !metered[op] {
		l.proxy.ServeHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		closeConnection(w, r, err)
		return
	}
	c := &call{l: l, op: op, req: &request{}, r: r, w: w, body: body}
	if json.Unmarshal(body, c.req) != nil {
		c.reply(c.forward(body)) // DynamoDB Local answers the malformed request
		return
	}
	c.serve()
}

// readBody reads a request's body (at most maxBody bytes), in one
// allocation when the request says its length.
func readBody(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		b := make([]byte, n)
		_, err := io.ReadFull(r.Body, b)
		return b, err
	}
	return io.ReadAll(io.LimitReader(r.Body, maxBody))
}

var metered = map[string]bool{
	"CreateTable": true, "UpdateTable": true, "DeleteTable": true,
	"PutItem": true, "UpdateItem": true, "DeleteItem": true, "GetItem": true,
	"Query": true, "Scan": true, "BatchGetItem": true, "BatchWriteItem": true,
	"TransactWriteItems": true, "TransactGetItems": true,
}

// forward sends the request (body as given, headers as the client sent
// them but for hop-by-hop ones, as a reverse proxy does) to the target and
// keeps the answer, which reply passes on unchanged: the layer counts a
// request's units before its answer reaches the client.
func (c *call) forward(body []byte) *recorder {
	rec := &recorder{h: http.Header{}, buf: getBuf()}
	out, err := http.NewRequestWithContext(c.r.Context(), http.MethodPost, c.l.targetURL, nil)
	if err != nil {
		rec.dropped = true
		return rec
	}
	out.Host = c.r.Host
	out.Header = c.r.Header.Clone()
	removeHopHeaders(out.Header)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""} // no Go default added
	}
	// A body the transport knows to be in memory goes out in the same
	// write as the headers (one system call; see net/http's
	// isKnownInMemoryReader). The transport may still hold it after the
	// answer (when the target answers before reading it all), so it is
	// never a recycled buffer.
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp, err := c.l.opts.Transport.RoundTrip(out)
	if err != nil {
		rec.dropped = true // nothing answers behind the layer (see closeConnection)
		return rec
	}
	defer resp.Body.Close()
	if n := resp.ContentLength; n > 0 && n <= maxBody {
		rec.buf.Grow(int(n))
	}
	if _, err := rec.buf.ReadFrom(resp.Body); err != nil {
		rec.dropped = true // the answer broke off: so does the client's
		return rec
	}
	removeHopHeaders(resp.Header)
	rec.h, rec.status = resp.Header, resp.StatusCode
	return rec
}

// hopHeaders are the hop-by-hop headers a proxy does not pass on (RFC 9110,
// section 7.6.1; the list net/http/httputil.ReverseProxy removes).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, f := range hopHeaders {
		h.Del(f)
	}
}

// bufs recycles the buffers of request bodies and kept answers.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufs.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b == nil || b.Cap() > 1<<20 {
		return // a big answer's buffer goes to the garbage collector
	}
	b.Reset()
	bufs.Put(b)
}

// reply passes a kept answer to the client, byte for byte, and recycles
// its buffer.
func (c *call) reply(rec *recorder) {
	defer putBuf(rec.buf)
	if rec.dropped {
		closeConnection(c.w, c.r, nil)
		return
	}
	h := c.w.Header()
	for k, v := range rec.h {
		h[k] = v
	}
	c.w.WriteHeader(rec.status)
	_, _ = c.w.Write(rec.buf.Bytes())
}

// internal sends one request of the layer's own to the target (not metered),
// with the client's Authorization header so that it reaches the same
// database of DynamoDB Local.
func (l *Layer) internal(ctx context.Context, auth, op string, in any) (int, []byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.target.String(), bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target+op)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func (l *Layer) arn(tableName, index string) string {
	a := fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", l.opts.Region, l.opts.Account, tableName)
	if index != "" {
		a += "/index/" + index
	}
	return a
}

var errNoTable = errors.New("no such table")
