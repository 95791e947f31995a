package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// payload is size seeded random bytes and their pin at url.
func payload(size int, url string) ([]byte, File) {
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(1, uint64(size)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	sum := sha256.Sum256(b)
	return b, File{URL: url, Size: int64(size), SHA256: hex.EncodeToString(sum[:])}
}

// origin is an HTTPS server holding files by path, honouring Range as a
// registry does; hooks may change one request's answer.
type origin struct {
	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	requests []string // "path range" of every request, in order
	served   atomic.Int64
	// hook, when set, may answer a request itself (returning true); n is
	// the request's number for its path, from 1.
	hook func(w http.ResponseWriter, r *http.Request, n int) bool
}

func newOrigin(t *testing.T) *origin {
	o := &origin{files: map[string][]byte{}}
	perPath := map[string]int{}
	o.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		perPath[r.URL.Path]++
		n := perPath[r.URL.Path]
		o.requests = append(o.requests, r.URL.Path+" "+r.Header.Get("Range"))
		body, ok := o.files[r.URL.Path]
		hook := o.hook
		o.mu.Unlock()
		if hook != nil && hook(w, r, n) {
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		// http.ServeContent answers Range with 206 and Content-Range.
		cw := &countingWriter{ResponseWriter: w, n: &o.served}
		http.ServeContent(cw, r, "", time.Time{}, bytes.NewReader(body))
	}))
	t.Cleanup(o.srv.Close)
	return o
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (o *origin) add(path string, size int) ([]byte, File) {
	b, f := payload(size, o.srv.URL+path)
	o.mu.Lock()
	o.files[path] = b
	o.mu.Unlock()
	return b, f
}

func (o *origin) log() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.requests...)
}

// opts are test options: the origin's client, no waiting between attempts,
// a log in buf.
func (o *origin) opts(buf *syncBuffer) Options {
	return Options{Client: o.srv.Client(), Log: buf, Prefix: "test", Backoff: time.Millisecond}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func mustEqualFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d served", path, len(got), len(want))
	}
}

// A connection cut in the middle of the body is resumed with a Range
// request from the bytes already on disk, in the same run: the file is
// complete and the origin sent it about once, not twice.
func TestGetResumesAfterACutConnection(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/a.jar", 600_000)
	const cut = 200_000
	o.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 1 {
			return false
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(want)))
		w.WriteHeader(http.StatusOK)
		w.Write(want[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-body
	}
	dir := t.TempDir()
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "a.jar"), want)
	reqs := o.log()
	if len(reqs) != 2 || reqs[0] != "/a.jar " || !strings.HasPrefix(reqs[1], "/a.jar bytes=") {
		t.Fatalf("requests %q: want a plain GET, then one Range request", reqs)
	}
	var from int
	fmt.Sscanf(strings.TrimPrefix(reqs[1], "/a.jar bytes="), "%d-", &from)
	if from <= 0 || from > cut {
		t.Errorf("resumed from byte %d, want 1 to %d (what the first answer sent)", from, cut)
	}
	if s := o.served.Load(); s != int64(len(want)-from) {
		t.Errorf("the second answer sent %d bytes, want the %d missing", s, len(want)-from)
	}
	if !strings.Contains(log.String(), "resuming in") {
		t.Errorf("log %q: want a line saying the download resumes", log.String())
	}
}

// A .part left by an earlier run is continued, not started over.
func TestGetContinuesThePartOfAnEarlierRun(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/b.tgz", 300_000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.tgz.part"), want[:123_456], 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "b.tgz"), want)
	if reqs := o.log(); len(reqs) != 1 || reqs[0] != "/b.tgz bytes=123456-" {
		t.Errorf("requests %q, want one from byte 123456", reqs)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.tgz.part")); !os.IsNotExist(err) {
		t.Errorf(".part still there after the rename: %v", err)
	}
}

// A server that ignores Range (200, the whole file) starts the .part over.
func TestGetStartsOverWhenTheServerIgnoresRange(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/c.jar", 100_000)
	o.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Write(want) // 200 whatever the Range
		return true
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.jar.part"), want[:5000], 0o644)
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "c.jar"), want)
}

// A download whose hash does not match is deleted and fetched once more
// from byte 0; when the second one matches, the file is kept.
func TestGetRefetchesAMismatchOnce(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/d.jar", 50_000)
	o.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 1 {
			return false
		}
		bad := bytes.Clone(want)
		bad[100] ^= 0xff
		w.Write(bad)
		return true
	}
	dir := t.TempDir()
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "d.jar"), want)
	if reqs := o.log(); len(reqs) != 2 || reqs[1] != "/d.jar " {
		t.Errorf("requests %q: want two whole-file GETs", reqs)
	}
	if !strings.Contains(log.String(), "d.jar does not match its pin") {
		t.Errorf("log %q: want a line about the mismatch", log.String())
	}
}

// A garbage .part (not a prefix of the file) resumes into a mismatch, and
// the refetch from byte 0 repairs it.
func TestGetRepairsAGarbagePart(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/e.jar", 80_000)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "e.jar.part"), bytes.Repeat([]byte("x"), 1000), 0o644)
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "e.jar"), want)
}

// Two mismatches in a row: an error naming the URL and both hashes, and
// nothing left on disk under either name.
func TestGetFailsOnASecondMismatch(t *testing.T) {
	o := newOrigin(t)
	_, f := o.add("/f.jar", 40_000)
	f.SHA256 = strings.Repeat("0", 64) // the origin never serves these bytes
	dir := t.TempDir()
	var log syncBuffer
	err := Get(context.Background(), dir, []File{f}, o.opts(&log))
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("err %v, want a *MismatchError", err)
	}
	msg := err.Error()
	for _, want := range []string{f.URL, "sha256 " + f.SHA256, "twice", "HTTPS_PROXY"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line", msg)
	}
	if reqs := o.log(); len(reqs) != 2 {
		t.Errorf("requests %q, want 2 (the download and one refetch)", reqs)
	}
	for _, name := range []string{"f.jar", "f.jar.part"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is on disk after the mismatch: %v", name, err)
		}
	}
}

// A 404 is not retried: one request, one line naming the URL and what to do.
func TestGetStopsAtA404(t *testing.T) {
	o := newOrigin(t)
	f := File{URL: o.srv.URL + "/missing.jar", Size: 10, SHA256: strings.Repeat("a", 64)}
	var log syncBuffer
	err := Get(context.Background(), t.TempDir(), []File{f}, o.opts(&log))
	if err == nil || !strings.Contains(err.Error(), f.URL) || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "rerun") {
		t.Fatalf("err %v: want one naming the URL, the 404 and what to do", err)
	}
	if reqs := o.log(); len(reqs) != 1 {
		t.Errorf("requests %q, want 1", reqs)
	}
}

// A 503 is retried, and the retry's answer kept.
func TestGetRetriesA503(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/g.jar", 10_000)
	o.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	dir := t.TempDir()
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, filepath.Join(dir, "g.jar"), want)
}

// A file already at its final name and matching its pin costs no request.
func TestGetKeepsAVerifiedFile(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/h.jar", 10_000)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "h.jar"), want, 0o644)
	var log syncBuffer
	if err := Get(context.Background(), dir, []File{f}, o.opts(&log)); err != nil {
		t.Fatal(err)
	}
	if reqs := o.log(); len(reqs) != 0 {
		t.Errorf("requests %q, want none", reqs)
	}
}

// fakeClock is a clock the test moves; lines records the clock at each line
// written to it.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	step  time.Duration // added after every reading
	lines []time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Write records a progress line (the ones that say "MB of").
func (c *fakeClock) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(string(p), " MB of ") {
		c.lines = append(c.lines, c.now)
	}
	return len(p), nil
}

// While bytes flow, progress lines come at most one per lineEvery (2 s)
// of the injected clock, and as often as that allows: counted against a
// clock that moves 250 ms at every reading, so the downloads take many
// seconds of its time.
func TestProgressLinesArePacedByTheClock(t *testing.T) {
	o := newOrigin(t)
	var files []File
	for i := range 5 {
		_, f := o.add(fmt.Sprintf("/p%d.jar", i), 400_000)
		files = append(files, f)
	}
	clock := &fakeClock{now: time.Date(2026, 5, 13, 0, 0, 0, 0, time.UTC), step: 250 * time.Millisecond}
	start := clock.now
	opts := o.opts(nil)
	opts.Log, opts.Now = clock, clock.Now
	opts.Tick = func(time.Duration) (<-chan time.Time, func()) { return nil, func() {} } // bytes only
	if err := Get(context.Background(), t.TempDir(), files, opts); err != nil {
		t.Fatal(err)
	}
	end := clock.Now()
	lines := clock.lines
	if len(lines) == 0 {
		t.Fatalf("no progress line in %v of clock time", end.Sub(start))
	}
	prev := start
	for i, l := range lines {
		if gap := l.Sub(prev); gap < time.Second {
			t.Errorf("line %d came %v after the one before: want at most one line a second", i+1, gap)
		}
		prev = l
	}
	// Every reading moves the clock 250 ms, so no line waits past 2.25 s.
	if max := int(end.Sub(start)/time.Second) + 1; len(lines) > max {
		t.Errorf("%d lines in %v: more than one a second", len(lines), end.Sub(start))
	}
	// Each gap, and the tail after the last line, is under 2.25 s.
	if min := int(end.Sub(start)/(2250*time.Millisecond)) - 1; len(lines) < min {
		t.Errorf("%d lines in %v of clock time: want at least %d (a gap of 2.25 s at most)", len(lines), end.Sub(start), min)
	}
}

// While no byte arrives, the 1 s ticker still prints a line every 2 s of
// the injected clock: 10 ticks a second apart give 5 lines, never a gap
// over 5 s.
func TestProgressLinesGoOnWhileStalled(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/slow.tgz", 200_000)
	release := make(chan struct{})
	o.hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Content-Length", fmt.Sprint(len(want)))
		w.Write(want[:50_000])
		w.(http.Flusher).Flush()
		<-release
		w.Write(want[50_000:])
		return true
	}
	clock := &fakeClock{now: time.Date(2026, 5, 13, 0, 0, 0, 0, time.UTC)}
	start := clock.now
	ticks := make(chan time.Time)
	opts := o.opts(nil)
	opts.Log, opts.Now = clock, clock.Now
	opts.Tick = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
	dir := t.TempDir()
	errc := make(chan error, 1)
	go func() { errc <- Get(context.Background(), dir, []File{f}, opts) }()
	part := filepath.Join(dir, "slow.tgz.part")
	for deadline := time.Now().Add(30 * time.Second); fileSize(part) < 50_000; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first 50,000 bytes never reached %s", part)
		}
	}
	for range 10 {
		clock.advance(time.Second)
		ticks <- clock.Now()
	}
	ticks <- clock.Now() // the tenth tick has been handled once this one is taken
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(clock.lines) != 5 {
		t.Fatalf("%d progress lines over 10 s stalled (at %v), want 5, one every 2 s", len(clock.lines), clock.lines)
	}
	prev := start
	for _, l := range clock.lines {
		if gap := l.Sub(prev); gap > 5*time.Second || gap < time.Second {
			t.Errorf("a gap of %v between progress lines: want 1 s to 5 s", gap)
		}
		prev = l
	}
}

// An npm integrity is checked beside the SHA-256: bytes that match the
// SHA-256 pin but not the integrity are refused, naming the integrity.
func TestGetChecksTheNPMIntegrity(t *testing.T) {
	o := newOrigin(t)
	want, f := o.add("/pkg.tgz", 20_000)
	sum := sha512.Sum512(want)
	f.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	var log syncBuffer
	if err := Get(context.Background(), t.TempDir(), []File{f}, o.opts(&log)); err != nil {
		t.Fatalf("the right integrity: %v", err)
	}
	f.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(make([]byte, sha512.Size))
	err := Get(context.Background(), t.TempDir(), []File{f}, o.opts(&log))
	var me *MismatchError
	if !errors.As(err, &me) || me.Want != f.Integrity || !strings.HasPrefix(me.Got, "sha512-") {
		t.Fatalf("a wrong integrity: %v, want a *MismatchError naming both integrities", err)
	}
}
