// Package toxitest puts the real Toxiproxy (github.com/Shopify/toxiproxy/v2,
// v2.5.0) between tests and DynamoDB Local, so that the faults a network
// really has are injected for real: a reply lost after the write landed, a
// slow call, a connection reset, a cut connection.
//
// Server builds the Toxiproxy server once (`go install
// github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0` into the repository's
// .cache/toxiproxy, reused by later runs), starts it on a loopback port the
// kernel picks, and returns a client of the official Go client package. The
// server runs until Stop (call it from TestMain) or until the test binary
// exits (it is started with a parent-death signal).
//
// NewProxy creates one proxy in front of an upstream (a DynamoDB Local
// endpoint URL) on a kernel-picked port; its URL is the endpoint to give the
// code under test (a catalog's WithEndpoint, a worker's --endpoint). The
// fault helpers add one toxic each and return a function removing it:
//
//   - LoseReplies: a `timeout` toxic on the downstream (the replies): the
//     request reaches DynamoDB and is applied, its reply never comes back,
//     and the connection is closed after hold, so the SDK sees a broken
//     connection and retries a write that already landed.
//   - Slow: a `latency` toxic on the downstream on a fraction of
//     connections (toxicity).
//   - ResetPeer: a `reset_peer` toxic: connections are reset (TCP RST)
//     after a delay.
//   - Cut / Restore: disable and enable the proxy (every connection is
//     closed, new ones are refused), e.g. while DynamoDB Local restarts.
//
// Toxiproxy works on TCP connections, not on requests: toxicity is drawn per
// connection, and a toxic acts on every request of a connection it was drawn
// for. To fault one kind of request only (say the heartbeats), a Router sends
// each request, by a classifier the test gives, through a proxy of its kind:
// toxics on that proxy reach only that kind. The Router opens a connection
// per request, so a toxic's toxicity is the fraction of requests it hits.
package toxitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// Version is the Toxiproxy server the harness builds; it matches the client
// module's version in go.mod.
const Version = "v2.5.0"

const serverPackage = "github.com/Shopify/toxiproxy/v2/cmd/server"

var (
	mu      sync.Mutex
	srv     *exec.Cmd
	client  *toxiproxy.Client
	srvAddr string
	srvLog  string
	srvDone chan error // the server's exit, from the one goroutine that waits on it
)

// Server returns a client of the Toxiproxy server the test binary shares,
// building and starting the server on first use. The test fails with what to
// do when the server cannot be built or does not start; it never skips.
func Server(t testing.TB) *toxiproxy.Client {
	t.Helper()
	c, err := Start()
	if err != nil {
		t.Fatalf("toxiproxy: %v", err)
	}
	return c
}

// Start is Server for a TestMain (no testing.TB yet).
func Start() (*toxiproxy.Client, error) {
	mu.Lock()
	defer mu.Unlock()
	if client != nil {
		return client, nil
	}
	bin, err := build()
	if err != nil {
		return nil, err
	}
	var last error
	for try := 0; try < 5; try++ {
		if last = start(bin); last == nil {
			return client, nil
		}
	}
	return nil, last
}

// Stop stops the server, if one was started.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		_ = srv.Process.Kill()
		<-srvDone
		_ = os.Remove(srvLog)
	}
	srv, client, srvDone = nil, nil, nil
}

// Addr is the address of the running server's API ("" when none runs).
func Addr() string {
	mu.Lock()
	defer mu.Unlock()
	return srvAddr
}

// build installs the server binary into <repo>/.cache/toxiproxy/<Version>
// once and returns its path.
func build() (string, error) {
	root, err := ddbtest.RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "toxiproxy", Version)
	bin := filepath.Join(dir, "server")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", serverPackage+"@"+Version)
	// Outside the module, so go.mod and GOFLAGS=-mod=... of the repository
	// do not apply to the tool's own module.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("`GOBIN=%s go install %s@%s` failed (%v):\n%s\nthe Go module proxy must be reachable once (later runs reuse the binary)",
			dir, serverPackage, Version, err, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

func start(bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	log, err := os.CreateTemp("", "toxiproxy-*.log")
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", port)
	cmd.Stdout, cmd.Stderr = log, log
	// The server dies with the test binary even when TestMain never calls
	// Stop, where the system can say so (diesWithParent).
	cmd.SysProcAttr = diesWithParent()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	log.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	addr := "127.0.0.1:" + port
	c := toxiproxy.NewClient(addr)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := c.Proxies(); err == nil {
			break
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("toxiproxy server on %s exited (%v): %s", addr, err, strings.TrimSpace(string(out)))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return fmt.Errorf("toxiproxy server on %s did not answer within 30 s; see %s", addr, log.Name())
		}
	}
	srv, client, srvAddr, srvLog, srvDone = cmd, c, addr, log.Name(), exited
	return nil
}

// Proxy is one Toxiproxy proxy in front of an upstream.
type Proxy struct {
	*toxiproxy.Proxy
	// URL is the endpoint through the proxy, e.g. http://127.0.0.1:41234.
	URL string
	// Upstream is the endpoint behind it.
	Upstream string
	n        int
	nmu      sync.Mutex
}

var proxySeq struct {
	sync.Mutex
	n int
}

// NewProxy creates a proxy in front of upstream (an http:// URL or a
// host:port) on a loopback port the kernel picks; it is deleted when the
// test ends.
func NewProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	c := Server(t)
	host := upstream
	if u, err := url.Parse(upstream); err == nil && u.Host != "" {
		host = u.Host
	}
	proxySeq.Lock()
	proxySeq.n++
	name := fmt.Sprintf("%s-%d-%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), os.Getpid(), proxySeq.n)
	proxySeq.Unlock()
	p, err := c.CreateProxy(name, "127.0.0.1:0", host)
	if err != nil {
		t.Fatalf("toxiproxy: create proxy to %s: %v", host, err)
	}
	t.Cleanup(func() { _ = p.Delete() })
	return &Proxy{Proxy: p, URL: "http://" + p.Listen, Upstream: upstream}
}

func (p *Proxy) name(kind string) string {
	p.nmu.Lock()
	defer p.nmu.Unlock()
	p.n++
	return fmt.Sprintf("%s-%d", kind, p.n)
}

// Add adds a toxic of the given type to the proxy's stream ("downstream":
// replies, "upstream": requests) on a fraction toxicity (0 < x <= 1) of its
// connections, and returns a function removing it (safe to call twice; also
// called when the test ends).
func (p *Proxy) Add(t testing.TB, typ, stream string, toxicity float32, attrs toxiproxy.Attributes) func() {
	t.Helper()
	name := p.name(typ)
	if _, err := p.AddToxic(name, typ, stream, toxicity, attrs); err != nil {
		t.Fatalf("toxiproxy: add %s toxic to %s: %v", typ, p.Name, err)
	}
	var once sync.Once
	remove := func() {
		once.Do(func() {
			if err := p.RemoveToxic(name); err != nil && !isNotFound(err) {
				t.Errorf("toxiproxy: remove %s from %s: %v", name, p.Name, err)
			}
		})
	}
	t.Cleanup(remove)
	return remove
}

func isNotFound(err error) bool {
	var api *toxiproxy.ApiError
	return errors.As(err, &api) && api.Status == http.StatusNotFound
}

// LoseReplies drops the replies on a fraction toxicity of the connections
// (a `timeout` toxic downstream): requests still reach DynamoDB and are
// applied; the client gets no reply and the connection is closed after hold,
// so the SDK retries. hold must be shorter than the client's call timeout.
func (p *Proxy) LoseReplies(t testing.TB, toxicity float32, hold time.Duration) func() {
	t.Helper()
	if hold <= 0 {
		t.Fatalf("toxitest: LoseReplies needs hold > 0 (a 0 timeout holds the connection forever)")
	}
	return p.Add(t, "timeout", "downstream", toxicity, toxiproxy.Attributes{"timeout": hold.Milliseconds()})
}

// Slow delays the replies on a fraction toxicity of the connections by
// latency ± jitter (a `latency` toxic downstream).
func (p *Proxy) Slow(t testing.TB, toxicity float32, latency, jitter time.Duration) func() {
	t.Helper()
	return p.Add(t, "latency", "downstream", toxicity, toxiproxy.Attributes{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()})
}

// ResetPeer resets a fraction toxicity of the connections (TCP RST) after
// the given delay from the toxic's start on each connection (a `reset_peer`
// toxic upstream: the request may or may not have been sent).
func (p *Proxy) ResetPeer(t testing.TB, toxicity float32, after time.Duration) func() {
	t.Helper()
	return p.Add(t, "reset_peer", "upstream", toxicity, toxiproxy.Attributes{"timeout": after.Milliseconds()})
}

// Cut disables the proxy: open connections are closed and new ones refused
// until Restore.
func (p *Proxy) Cut(t testing.TB) {
	t.Helper()
	if err := p.Disable(); err != nil {
		t.Fatalf("toxiproxy: disable %s: %v", p.Name, err)
	}
}

// Restore enables the proxy again after Cut.
func (p *Proxy) Restore(t testing.TB) {
	t.Helper()
	if err := p.Enable(); err != nil {
		t.Fatalf("toxiproxy: enable %s: %v", p.Name, err)
	}
}

// Classify names the kind of one DynamoDB request from its operation (the
// X-Amz-Target header without the service prefix, e.g. "UpdateItem") and its
// JSON body; "" is the default kind.
type Classify func(op string, body []byte) string

// Router is an http.RoundTripper for the SDK's HTTP client that sends each
// request through the proxy of its kind, all in front of the same upstream,
// so that a toxic can be aimed at one kind of request. Requests of a kind it
// has no proxy for go through Default.
type Router struct {
	// Default carries the requests of no listed kind.
	Default  *Proxy
	proxies  map[string]*Proxy
	classify Classify
	base     http.RoundTripper

	mu      sync.Mutex
	counts  map[string]int
	retries map[string]int
	after   map[string]afterRetries
}

type afterRetries struct {
	n  int
	fn func()
}

// NewRouter creates a proxy per kind (and a default one) in front of
// upstream.
func NewRouter(t testing.TB, upstream string, classify Classify, kinds ...string) *Router {
	t.Helper()
	r := &Router{Default: NewProxy(t, upstream), proxies: map[string]*Proxy{}, classify: classify,
		counts: map[string]int{}, retries: map[string]int{}, after: map[string]afterRetries{}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One connection per request: Toxiproxy draws toxicity per connection,
	// so this makes it a draw per request (a kept-alive connection that
	// drew "clean" would carry every later request of its kind unharmed).
	tr.DisableKeepAlives = true
	r.base = tr
	t.Cleanup(tr.CloseIdleConnections)
	for _, k := range kinds {
		r.proxies[k] = NewProxy(t, upstream)
	}
	return r
}

// Proxy returns the proxy of kind (the test fails on a kind not given to
// NewRouter).
func (r *Router) Proxy(t testing.TB, kind string) *Proxy {
	t.Helper()
	p, ok := r.proxies[kind]
	if !ok {
		t.Fatalf("toxitest: router has no proxy for kind %q", kind)
	}
	return p
}

// Count returns how many requests of kind were sent (retries included).
func (r *Router) Count(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[kind]
}

// Retries returns how many requests of kind were sent again by the SDK (its
// amz-sdk-request header says attempt=2 or later): each is a call whose
// earlier attempt failed, e.g. because its reply was lost.
func (r *Router) Retries(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries[kind]
}

// AfterRetries calls fn once, before sending it, when the n-th retry of a
// request of kind arrives (counted from now), e.g. to remove a toxic that
// lost every reply until then: "lose the next n replies of this kind".
func (r *Router) AfterRetries(kind string, n int, fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.after[kind] = afterRetries{n: r.retries[kind] + n, fn: fn}
}

// HTTPClient returns an HTTP client using the router, for
// dynamodb.Options.HTTPClient (catalog.WithClientOptions).
func (r *Router) HTTPClient() *http.Client { return &http.Client{Transport: r} }

// Serve starts an HTTP server on a loopback port the kernel picks that
// sends every request it gets through the router, and returns its URL: the
// endpoint to give code in other processes (a worker process's
// --endpoint), so that a toxic aimed at one kind of request reaches that
// kind in every process. A request whose proxy failed it (a reply lost, a
// connection reset, the caller gone) is answered as the proxy answered:
// the connection is closed without a reply, so the caller sees a broken
// connection, not an HTTP error. The server is closed when the test ends.
func (r *Router) Serve(t testing.TB) string {
	t.Helper()
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", strings.TrimPrefix(r.Default.URL, "http://")
			pr.Out.Host = pr.In.Host
		},
		Transport:    r,
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// RoundTrip sends req through its kind's proxy.
func (r *Router) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	op := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	kind := r.classify(op, body)
	p, ok := r.proxies[kind]
	if !ok {
		p = r.Default
	}
	var fire func()
	r.mu.Lock()
	r.counts[kind]++
	if a := req.Header.Get("Amz-Sdk-Request"); a != "" && !strings.HasPrefix(a, "attempt=1;") && a != "attempt=1" {
		r.retries[kind]++
		if ar, ok := r.after[kind]; ok && r.retries[kind] >= ar.n {
			fire = ar.fn
			delete(r.after, kind)
		}
	}
	r.mu.Unlock()
	if fire != nil {
		fire()
	}
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	u := *req.URL
	u.Host = strings.TrimPrefix(p.URL, "http://")
	out.URL = &u
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	return r.base.RoundTrip(out)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
