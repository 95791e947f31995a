// Package fetch downloads pinned files over HTTPS: each File names its URL,
// its size and its SHA-256, and Get keeps a file only once its bytes hash to
// that value.
//
// The rules, in the order Get applies them to each file:
//
//   - A file already at its final name in the directory is hashed; when it
//     matches it is kept and nothing is fetched.
//   - Otherwise the bytes go to <name>.part. A .part left by an earlier run,
//     or by a connection that broke in this one, is continued with an HTTP
//     Range request from its length (a server that ignores Range and answers
//     200 starts it over). A lost connection, a stalled one (no byte for
//     Options.StallTimeout) and a 5xx or 429 answer are retried, resuming, up
//     to Options.Attempts times; another 4xx is not.
//   - A complete .part whose SHA-256 or size differs from the pin (or whose
//     SHA-512 differs from an npm integrity, when the File has one) is deleted
//     and fetched again from byte 0, once; a second mismatch is an error that
//     names the URL, both hashes and what to do. A matching .part is renamed
//     to the final name, so a name without .part is always a verified file.
//
// Progress goes to Options.Log as one line at least every 3 s (a 1 s ticker
// checks, even while no byte arrives) and never more often than every 2 s:
// bytes so far of the total, files so far, and the file being fetched.
//
// The HTTP client is the standard library's: it honours HTTPS_PROXY,
// HTTP_PROXY and NO_PROXY, and the system's certificate pool (SSL_CERT_FILE,
// SSL_CERT_DIR on Unix). Nothing here is specific to one operating system.
package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// File is one pinned download.
type File struct {
	URL    string // https://...; the file is saved under the URL's base name
	Size   int64  // bytes
	SHA256 string // lower-case hex
	// Integrity is an npm integrity string ("sha512-<base64>"), checked as
	// well when set.
	Integrity string
}

// Name is the name the file is saved under: the URL path's last element.
func (f File) Name() string { return path.Base(f.URL) }

// Options tune Get and Lock. The zero value is usable.
type Options struct {
	// Client makes the requests; nil: a client with the standard library's
	// transport (proxy from the environment, the system's CAs).
	Client *http.Client
	// Log gets step and progress lines; nil: none.
	Log io.Writer
	// Prefix starts every line, e.g. "elasticmq" gives "elasticmq: ...".
	Prefix string
	// Now is the clock progress lines are paced by; nil: time.Now.
	Now func() time.Time
	// Tick returns a channel that ticks every d and a stop function; nil:
	// a time.Ticker. Tests drive it by hand.
	Tick func(d time.Duration) (<-chan time.Time, func())
	// Attempts is how many times one file's request is tried (resuming)
	// before Get gives up; 0: 5.
	Attempts int
	// Backoff is the wait before the second attempt, doubled after each;
	// 0: 1 s.
	Backoff time.Duration
	// StallTimeout ends an attempt that received no byte for this long;
	// 0: 60 s.
	StallTimeout time.Duration
}

const (
	lineEvery = 2 * time.Second // the least time between two progress lines
	tickEvery = time.Second     // how often a stalled download is looked at
)

// withDefaults returns the options with each unset field at its default.
func (o Options) withDefaults() Options {
	if o.Client == nil {
		o.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == nil {
		o.Tick = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = time.Minute
	}
	return o
}

// say writes one step line.
func (o *Options) say(format string, a ...any) {
	if o.Prefix != "" {
		format = o.Prefix + ": " + format
	}
	fmt.Fprintf(o.Log, format+"\n", a...)
}

// MismatchError is a file whose bytes do not hash to the pin, twice.
type MismatchError struct {
	URL               string
	WantSize, GotSize int64
	Want, Got         string // what was checked: "sha256 <hex>" or "sha512-<base64>"
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: got %d bytes with %s, pinned %d bytes with %s, twice (the file was deleted both times): "+
		"the registry or a proxy between serves other bytes; check the proxy (HTTPS_PROXY), or update the pin if the registry changed the file",
		e.URL, e.GotSize, e.Got, e.WantSize, e.Want)
}

// Get downloads files into dir (created if missing), as the package doc
// says, and returns once every one is there and verified. It reports
// progress for all of them together.
func Get(ctx context.Context, dir string, files []File, opts Options) error {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	m := &meter{opts: &opts, nfiles: len(files)}
	for _, f := range files {
		if f.Size < 0 || len(f.SHA256) != sha256.Size*2 {
			return fmt.Errorf("%s: pinned size %d and sha256 %q: not a pin (want a size and 64 hex digits)", f.URL, f.Size, f.SHA256)
		}
		m.total += f.Size
	}
	m.last = opts.Now()
	ticks, stop := opts.Tick(tickEvery)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-ticks:
				m.maybeLine()
			}
		}
	}()
	defer func() {
		close(done)
		stop()
		wg.Wait()
	}()
	for _, f := range files {
		if err := getOne(ctx, dir, f, &opts, m); err != nil {
			return err
		}
		m.fileDone()
	}
	return nil
}

// getOne fetches and verifies f into dir.
func getOne(ctx context.Context, dir string, f File, opts *Options, m *meter) error {
	dst := filepath.Join(dir, f.Name())
	if _, err := os.Stat(dst); err == nil {
		if bad, err := check(dst, f); err != nil {
			return err
		} else if bad == "" {
			m.add(f.Size)
			return nil
		}
		if err := os.Remove(dst); err != nil {
			return fmt.Errorf("remove %s, which does not match its pin: %w", dst, err)
		}
	}
	part := dst + ".part"
	m.setCurrent(f.Name())
	for again := false; ; again = true {
		if err := download(ctx, f, part, opts, m); err != nil {
			return err
		}
		bad, err := check(part, f)
		if err != nil {
			return err
		}
		if bad == "" {
			if err := os.Rename(part, dst); err != nil {
				return fmt.Errorf("rename %s: %w", part, err)
			}
			return nil
		}
		got := fileSize(part)
		if err := os.Remove(part); err != nil {
			return fmt.Errorf("remove %s, which does not match its pin: %w", part, err)
		}
		m.add(-got)
		if again {
			want := "sha256 " + f.SHA256
			if strings.HasPrefix(bad, "sha512-") {
				want = f.Integrity
			}
			return fmt.Errorf("download %w", &MismatchError{URL: f.URL, WantSize: f.Size, GotSize: got, Want: want, Got: bad})
		}
		opts.say("%s does not match its pin (%s); deleted it, fetching it again from the start", f.Name(), bad)
	}
}

// check hashes the file at p and returns "" when it matches f, or what it
// found ("sha256 <hex>" or "sha512-<base64>") when it does not.
func check(p string, f File) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("verify %s: %w", p, err)
	}
	defer fh.Close()
	h256, h512 := sha256.New(), sha512.New()
	w := io.Writer(h256)
	if f.Integrity != "" {
		w = io.MultiWriter(h256, h512)
	}
	n, err := io.Copy(w, fh)
	if err != nil {
		return "", fmt.Errorf("verify %s: %w", p, err)
	}
	if got := hex.EncodeToString(h256.Sum(nil)); got != f.SHA256 || n != f.Size {
		return "sha256 " + got, nil
	}
	if f.Integrity != "" {
		if got := "sha512-" + base64.StdEncoding.EncodeToString(h512.Sum(nil)); got != f.Integrity {
			return got, nil
		}
	}
	return "", nil
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// permanentError is a failure that another attempt would repeat.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// download brings part to f.Size bytes, resuming it, retrying lost
// connections; it does not verify.
func download(ctx context.Context, f File, part string, opts *Options, m *meter) error {
	backoff := opts.Backoff
	for attempt := 1; ; attempt++ {
		have := fileSize(part)
		if have > f.Size { // longer than the pin: cannot be it
			if err := os.Remove(part); err != nil {
				return fmt.Errorf("remove %s: %w", part, err)
			}
			have = 0
		}
		if attempt == 1 {
			m.add(have)
			if have > 0 {
				opts.say("resuming %s at %s of %s", f.Name(), mb(have), mb(f.Size))
			}
		}
		if have == f.Size {
			return nil
		}
		err := attemptOnce(ctx, f, part, have, opts, m)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("download %s: %w; rerun to resume from %s", f.URL, context.Cause(ctx), mb(fileSize(part)))
		}
		var perm permanentError
		if errors.As(err, &perm) || attempt >= opts.Attempts {
			return fmt.Errorf("download %s: %w (attempt %d of %d); check the network, or the proxy (HTTPS_PROXY) and certificate (SSL_CERT_FILE) settings, then rerun to resume",
				f.URL, err, attempt, opts.Attempts)
		}
		opts.say("%s: %v at %s of %s; resuming in %v (attempt %d of %d)", f.Name(), err, mb(fileSize(part)), mb(f.Size), backoff, attempt+1, opts.Attempts)
		if err := wait.Sleep(ctx, backoff); err != nil {
			return fmt.Errorf("download %s: %w; rerun to resume", f.URL, context.Cause(ctx))
		}
		backoff *= 2
	}
}

var errStalled = errors.New("no byte received")

// attemptOnce makes one request for part's missing bytes and appends what
// arrives.
func attemptOnce(ctx context.Context, f File, part string, have int64, opts *Options, m *meter) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return permanentError{err}
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	stall := time.AfterFunc(opts.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	resp, err := opts.Client.Do(req)
	if err != nil {
		if context.Cause(ctx) == errStalled {
			return fmt.Errorf("no answer for %v", opts.StallTimeout)
		}
		var ue *url.Error // its text repeats the URL the caller names
		if errors.As(err, &ue) {
			return ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		var start int64
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-", &start); err != nil || start != have {
			return fmt.Errorf("asked for bytes from %d, got Content-Range %q", have, resp.Header.Get("Content-Range"))
		}
	case resp.StatusCode == http.StatusOK:
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC // the whole file: start over
		m.add(-have)
		have = 0
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		// The .part is not a prefix the server knows: start over.
		m.add(-have)
		if err := os.Remove(part); err != nil {
			return permanentError{err}
		}
		return errors.New("HTTP 416: the server refused to resume")
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("HTTP %s", resp.Status)
	default:
		return permanentError{fmt.Errorf("HTTP %s", resp.Status)}
	}
	fh, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return permanentError{err}
	}
	defer func() {
		if cerr := fh.Close(); cerr != nil && err == nil {
			err = permanentError{cerr}
		}
	}()
	want := f.Size - have
	var got int64
	buf := make([]byte, 64<<10)
	for got < want {
		n, rerr := resp.Body.Read(buf[:min(int64(len(buf)), want-got)])
		if n > 0 {
			stall.Reset(opts.StallTimeout)
			if _, werr := fh.Write(buf[:n]); werr != nil {
				return permanentError{fmt.Errorf("write %s: %w", part, werr)}
			}
			got += int64(n)
			m.add(int64(n))
		}
		if rerr == io.EOF {
			if got < want {
				return fmt.Errorf("the connection ended early")
			}
			break
		}
		if rerr != nil {
			if context.Cause(ctx) == errStalled {
				return fmt.Errorf("no byte for %v", opts.StallTimeout)
			}
			return rerr
		}
	}
	return nil
}

// meter counts bytes and prints progress lines, paced by the Options' clock.
type meter struct {
	opts          *Options
	mu            sync.Mutex
	total, done   int64
	files, nfiles int
	current       string
	last          time.Time
}

func (m *meter) add(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	m.lineLocked()
}

func (m *meter) setCurrent(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current = name
}

func (m *meter) fileDone() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files++
}

func (m *meter) maybeLine() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lineLocked()
}

// lineLocked prints a progress line when lineEvery has passed since the
// last one (or since Get started).
func (m *meter) lineLocked() {
	now := m.opts.Now()
	if now.Sub(m.last) < lineEvery {
		return
	}
	m.last = now
	files := ""
	if m.nfiles > 1 {
		files = fmt.Sprintf(", %d of %d files", m.files, m.nfiles)
	}
	m.opts.say("%s of %s%s (%s)", mb(m.done), mb(m.total), files, m.current)
}

// mb formats a byte count in megabytes (10^6) with one decimal.
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// MB formats a byte count as the progress lines do ("48.1 MB").
func MB(n int64) string { return mb(n) }
